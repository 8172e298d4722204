// Only the results a question returns are cited (search.ts returnedOf): choosing a document's chunk
// reads every statement of every chunk, and shape C cited up to five results per connector (twenty
// over four sources) to return five.
import { expect, test } from "bun:test";
import type { SourceRecord } from "../../src/connectors/types";
import { returnedOf } from "../../src/retrieval/search";
import type { RankedChunk } from "../../src/retrieval/types";

const record = (id: string, table?: string): SourceRecord => ({
  id,
  title: id,
  content: `text of ${id}`,
  source_url: "",
  date: null,
  type: "file",
  path: id,
  metadata: table ? { table } : {},
});
const ranked = (id: string, table?: string): RankedChunk => ({
  connectorId: "c",
  connectorLabel: "C",
  owner: "alice",
  record: record(id, table),
  chunkIndex: -1,
  text: "",
  score: 1,
  lexical: 1,
});

test("of twenty ranked results, the five returned are cited; those a filter drops are not counted", () => {
  const kept = Array.from({ length: 20 }, (_, i) => ranked(`r${i}`, i % 2 ? "Invoice" : undefined));
  expect(returnedOf(kept, kept, { limit: 5 })).toEqual(kept.slice(0, 5));
  const rows = (c: RankedChunk) => c.record.metadata.table !== undefined;
  expect(returnedOf(kept, kept, { limit: 5, keep: rows })).toEqual(kept.filter(rows).slice(0, 5));
  // Without a limit (shape B, the evaluations), every result.
  expect(returnedOf(kept, kept, undefined)).toEqual(kept);
});

test("a books answer's transactions come cited: only the ranked results among the returned are cited", () => {
  const kept = Array.from({ length: 6 }, (_, i) => ranked(`r${i}`));
  const transactions = [ranked("t1"), ranked("t2")];
  const chunks = [...transactions, ...kept];
  expect(returnedOf(chunks, kept, { limit: 5 })).toEqual(kept.slice(0, 3));
  expect(returnedOf(chunks, kept, undefined)).toEqual(kept);
});
