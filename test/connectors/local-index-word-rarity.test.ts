// A word's weight in an index's BM25 is its rarity among that index's records (candidates.ts
// ownBm25), not among every index's rows of the shared FTS5 table: a small index beside a large
// one ranks its records as it would alone. Before, "invoice" in most of a few invoices weighed
// nearly as much as a vendor's name in one of them once 400 mails shared the table.
import { expect, test } from "bun:test";
import { ftsTotals } from "../../src/connectors/local-index/word-statistics";
import { ask, localIndexes, mailRecord } from "../support/local-index";

// Records of one length (a word of title, ten of text): the table's average lengths are the same
// with or without the mails, so the scores compared differ only by the words' weights.
const INVOICES = [
  ["cb1", "coolblue factuur rotterdam laptop tas bedrag totaal betaald ideal eur"],
  ["cb2", "coolblue factuur rotterdam rugzak hex bedrag totaal betaald ideal eur"],
  ["fk", "invoice order order invoice flipkart bangalore total paid card cash"],
  ["sc", "invoice order saeco koffie machine total paid amsterdam btw bedrag"],
  ["aws", "invoice invoice amazon web services account total usd paid card"],
  ["oyo", "invoice hotel oyo guest nights room total inr paid cash"],
] as const;

async function invoicesIndex(withMails: number) {
  const { db, indexFor } = localIndexes();
  const invoices = indexFor("invoices");
  for (const [id, text] of INVOICES)
    await invoices.put({ source: id, size: 1, mtime: 1 }, [mailRecord(id, "2014-05-01T00:00:00.000Z", text)]);
  const mail = indexFor("mail");
  for (let i = 0; i < withMails; i++)
    await mail.put({ source: `m${i}`, size: 1, mtime: 1 }, [
      mailRecord(`m${i}`, "2001-05-01T00:00:00.000Z", `meeting ${i} about the power market gas trading desk report`),
    ]);
  return { db, invoices };
}

const ranked = async (withMails: number) => {
  const { invoices } = await invoicesIndex(withMails);
  const hits = await invoices.rank(ask(["coolblue", "order", "invoices"], { limit: 10 }));
  return hits.map((h) => ({ id: h.record.id, lexical: h.lexical! }));
};

test("an index's records score by their words alike whether or not another index shares the table", async () => {
  const alone = await ranked(0);
  const beside = await ranked(400);
  expect(beside.map((h) => h.id)).toEqual(alone.map((h) => h.id));
  for (const [i, h] of beside.entries()) expect(h.lexical).toBeCloseTo(alone[i]!.lexical, 6);
  // "invoice", in four of the six, weighs nothing (FTS5's idf of a word in more than half): the
  // vendor asked for outranks a record holding only it, twice.
  const at = (id: string) => beside.findIndex((h) => h.id === id);
  expect(Math.max(at("cb1"), at("cb2"))).toBeLessThan(at("aws"));
});

test("the rows and total length FTS5 weighs words among are read from its averages record", async () => {
  const { db } = await invoicesIndex(37);
  const counted = db.query<{ n: number }, []>("SELECT count(*) AS n FROM connector_terms").get()!.n;
  expect(counted).toBe(INVOICES.length + 37);
  expect(ftsTotals(db)?.rows).toBe(counted);
  // Each record's length (FTS5's docsize), kept with it and summed per index as written.
  const lengths = db.query<{ n: number }, []>("SELECT sum(terms_length) AS n FROM connector_docs").get()!.n;
  expect(ftsTotals(db)?.length).toBe(lengths);
  const kept = db
    .query<{ owner: string; rows: number; length: number }, []>("SELECT owner, rows, length FROM connector_terms_counts ORDER BY owner")
    .all();
  const counts = db
    .query<{ owner: string; rows: number; length: number }, []>(
      "SELECT owner, count(*) AS rows, sum(terms_length) AS length FROM connector_docs GROUP BY owner ORDER BY owner",
    )
    .all();
  expect(kept).toEqual(counts);
  expect(kept.map((k) => k.rows)).toEqual([INVOICES.length, 37]);
});
