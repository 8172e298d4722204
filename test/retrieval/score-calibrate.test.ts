// Each connector's best is scaled by BM25 over the whole pool (score.ts calibrateLexical), by the
// words that say what the records are about: not by words that only name a kind of record.
import { expect, test } from "bun:test";
import type { SourceRecord } from "../../src/connectors/types";
import { countWords } from "../../src/retrieval/bm25";
import { calibrateLexical } from "../../src/retrieval/score";
import type { RankedChunk } from "../../src/retrieval/types";

const candidate = (id: string, connectorId: string): RankedChunk => {
  const record: SourceRecord = {
    id,
    title: id,
    content: "",
    source_url: `file:///${id}`,
    date: null,
    type: "file",
    path: id,
    metadata: {},
  };
  return { connectorId, connectorLabel: connectorId, owner: "alice", record, chunkIndex: 0, text: "", score: 0, lexical: 1 };
};

test("'Which invoices are over 1000 EUR?': receipts printing TAX INVOICE do not outweigh a Dutch invoice for the word 'invoices' (outside attack)", () => {
  const texts = [
    "Coolblue Factuur Totaal € 4.904,94",
    "TAX INVOICE GUARDIAN TOTAL 39.68",
    "TAX INVOICE NO 1234 TOTAL 12.00",
    ...Array.from({ length: 6 }, (_, i) => `TAX INVOICE ${i} TOTAL ${i}.00`),
  ];
  const pool = texts.map((_, i) => candidate(`doc${i}`, i === 0 ? "invoices" : "receipts"));
  const groupOf = pool.map((c) => (c.connectorId === "invoices" ? 0 : 1));
  calibrateLexical(pool, groupOf, countWords(texts, ["invoices"]), ["invoices"]);
  // No word of what they are about: each source's best stays its best.
  expect(pool.map((c) => c.lexical)).toEqual(texts.map(() => 1));
  // A word of what they are about still scales them: the receipts' best is the one holding it.
  const named = texts.map((_, i) => candidate(`doc${i}`, i === 0 ? "invoices" : "receipts"));
  calibrateLexical(named, groupOf, countWords(texts, ["guardian", "invoices"]), ["guardian", "invoices"]);
  expect(named[0]!.lexical).toBe(0);
  expect(named[1]!.lexical).toBe(1);
});
