// The search worker's reply packed as two buffers (search-protocol.ts): the same candidates, scores
// and rows, in the same orders, the scores' keys as candidates.ts sets them.
import { expect, test } from "bun:test";
import type { Candidates } from "../../src/connectors/local-index/candidates";
import { packCandidates, unpackCandidates } from "../../src/connectors/local-index/search-protocol";

test("candidates packed and unpacked are the same maps, orders and keys; each row a view of one buffer", () => {
  const c: Candidates = {
    found: new Map([
      [42, { lexical: 3.25, dense: 0.1 + 0.2, chunk: 7 }],
      [7, { dense: -0.5, chunk: 0 }],
      [1_000_000_007, { lexical: Number.MIN_VALUE }],
      [3, { lexical: 0 }],
    ]),
    // In its own order; a candidate without a row (removed meanwhile) has none.
    sealed: new Map([
      [7, new Uint8Array([1, 2, 3])],
      [42, new Uint8Array(0)],
      [1_000_000_007, new Uint8Array([9, 8])],
    ]),
  };
  const packed = packCandidates(c);
  // The reply as the serving thread receives it: a structured clone, its two buffers transferred.
  const received = structuredClone(packed, { transfer: [packed.numbers.buffer, packed.rows.buffer] });
  expect(packed.rows.byteLength).toBe(0);
  const back = unpackCandidates(received);
  expect([...back.found]).toEqual([...c.found]);
  expect([...back.found.values()].map((s) => Object.keys(s))).toEqual([...c.found.values()].map((s) => Object.keys(s)));
  expect([...back.sealed].map(([doc, row]) => [doc, [...row]])).toEqual([...c.sealed].map(([doc, row]) => [doc, [...row]]));
  expect(new Set([...back.sealed.values()].map((row) => row.buffer)).size).toBe(1);
});

test("no candidates: empty buffers", () => {
  const back = unpackCandidates(packCandidates({ found: new Map(), sealed: new Map() }));
  expect(back.found.size).toBe(0);
  expect(back.sealed.size).toBe(0);
});
