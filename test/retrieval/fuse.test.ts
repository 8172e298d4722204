// Words and meaning fused on one scale (issue 16): meaning on a fixed scale below the pool's best
// cosine, so near-equal cosines stay near-equal and the words decide between them.
import { expect, test } from "bun:test";
import type { SourceRecord } from "../../src/connectors/types";
import { DENSE_SPREAD, denseScale, fuse } from "../../src/retrieval/fuse";
import { planQuery } from "../../src/retrieval/plan";
import type { RankedChunk } from "../../src/retrieval/types";

const candidate = (id: string, lexical: number, dense: number): RankedChunk => {
  const record: SourceRecord = {
    id,
    title: id,
    content: "",
    source_url: `corpus://docs/${id}`,
    date: null,
    type: "file",
    path: id,
    metadata: {},
  };
  return { connectorId: "docs", connectorLabel: "Docs", owner: "alice", record, chunkIndex: 0, text: "", score: 0, lexical, dense };
};

test("the best cosine is 1, each other less by DENSE_SPREAD times its distance from it", () => {
  const scale = denseScale([0.62, 0.6, 0.3]);
  expect(scale(0.62)).toBe(1);
  expect(scale(0.6)).toBeCloseTo(1 - DENSE_SPREAD * 0.02, 10);
  expect(scale(0.3)).toBeCloseTo(1 - DENSE_SPREAD * 0.32, 10);
});

test("two near-equal cosines do not outweigh the words: the better match by words ranks first", () => {
  // Min-max over this pool made 0.61 a full 1 against 0.60's 0, and put `weaker-words` first.
  const pool = [candidate("weaker-words", 0.2, 0.61), candidate("better-words", 0.9, 0.6)];
  const ranked = fuse(pool, planQuery("capacity auction"));
  expect(ranked.map((c) => c.record.id)).toEqual(["better-words", "weaker-words"]);
});

test("a far better meaning still wins over a slightly better word match", () => {
  const pool = [candidate("words", 0.9, 0.3), candidate("meaning", 0.8, 0.7)];
  expect(fuse(pool, planQuery("capacity auction")).map((c) => c.record.id)).toEqual(["meaning", "words"]);
});
