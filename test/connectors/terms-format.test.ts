// The format of an index's blinded words (index-terms.ts TERMS_FORMAT): records written in an
// older one have their words written again by the next scan, so that a change of how words are
// folded (here: ß as ss, a soft hyphen inside a word joined) reaches the indexes made before it.
import { describe, expect, test } from "bun:test";
import { TERMS_FORMAT } from "../../src/connectors/index-terms";
import {
  type EmbeddedIndex,
  type indexKeysFor,
  REWRITE_CHARS,
  rewriteStaleWords,
  type ScanEntry,
  syncIndex,
} from "../../src/connectors/local-index";
import type { SourceRecord } from "../../src/connectors/types";
import { planQuery } from "../../src/retrieval/plan";
import { localIndexes } from "../support/local-index";

const note: SourceRecord = {
  id: "r1",
  title: "Lieferung",
  content: "Die Rech\u00ADnung für die Hauptstraße 5 ist bezahlt.",
  source_url: "file:///notes/r1",
  date: null,
  type: "file",
  path: "r1",
  metadata: {},
};
const entry = { source: "r1", size: 1, mtime: 1 };

/** An index holding `note` as an index of format 1 held it: ß kept, the soft hyphen a cut. */
async function indexOfFormatOne() {
  const { db, indexFor } = localIndexes();
  const index = indexFor("alice/notes");
  await index.put(entry, [note]);
  const { blinder } = (index as unknown as { ctx: { keys: { blinder: import("../../src/connectors/index-terms").TermBlinder } } }).ctx.keys;
  const oldWords = ["die", "rech", "nung", "für", "die", "hauptstraße", "5", "ist", "bezahlt"];
  const doc = db.query<{ doc: number }, []>("SELECT doc FROM connector_docs").get()!.doc;
  db.query("DELETE FROM connector_terms WHERE rowid = ?").run(doc);
  db.query("INSERT INTO connector_terms (rowid, title, content) VALUES (?, ?, ?)").run(
    doc,
    blinder.text(note.title),
    oldWords.map((w) => blinder.term(w)).join(" "),
  );
  db.query("UPDATE connector_docs SET terms_format = 1").run();
  return { db, index };
}

/** A scan that finds nothing changed, then the rewrite, as a folder connector runs them (indexed-source.ts). */
async function scanUnchanged(index: EmbeddedIndex, entries: ScanEntry[]) {
  const result = await syncIndex(index, entries, async () => {
    throw new Error("nothing changed: nothing is read");
  });
  return { result, rewritten: await rewriteStaleWords(index) };
}

const found = (index: EmbeddedIndex, question: string) => {
  const { terms, phrases } = planQuery(question);
  return index.search({ terms, phrases, limit: 10 }).length;
};

test("a scan writes an older format's words again: the words the new one folds are found, the others were all along", async () => {
  const { db, index } = await indexOfFormatOne();
  const docs = () => db.query<{ doc: number }, []>("SELECT doc FROM connector_docs").all();
  const before = docs();
  expect([found(index, "Hauptstrasse"), found(index, "Rechnung"), found(index, "bezahlt")]).toEqual([0, 0, 1]);
  expect(await scanUnchanged(index, [entry])).toEqual({
    result: { read: 0, removed: 0, failed: [], skipped: [], cutWords: 0 },
    rewritten: 1,
  });
  expect([found(index, "Hauptstrasse"), found(index, "Hauptstraße"), found(index, "Rechnung"), found(index, "bezahlt")]).toEqual([
    1, 1, 1, 1,
  ]);
  expect(db.query<{ f: number }, []>("SELECT terms_format AS f FROM connector_docs").get()!.f).toBe(TERMS_FORMAT);
  // The record was not read or stored again: the same row (its chunks and vectors stay).
  expect(docs()).toEqual(before);
});

test("a rewrite stopped before it starts writes nothing", async () => {
  const { db, index } = await indexOfFormatOne();
  expect(await rewriteStaleWords(index, () => true)).toBe(0);
  expect(db.query<{ f: number }, []>("SELECT terms_format AS f FROM connector_docs").get()!.f).toBe(1);
});

test("records written now carry the current format", async () => {
  const { db, indexFor } = localIndexes();
  await indexFor("alice/notes").put(entry, [note]);
  expect(db.query<{ f: number }, []>("SELECT terms_format AS f FROM connector_docs").get()!.f).toBe(TERMS_FORMAT);
});

test("attack: a record of format 1 holding a long run of Chinese (a crafted mail or file, 1M characters without a break) does not stop the rewrite of every record", async () => {
  // Format 1 stored the run as one word; format 2 cuts it into pairs with out.push(...pairs): a
  // million arguments overflow the stack (RangeError), the batch rolls back, and every scan
  // throws: the connector says "cannot read" and answers no question, every scan again.
  const { db, indexFor } = localIndexes();
  const index = indexFor("alice/mail");
  const { keys } = (index as unknown as { ctx: { keys: ReturnType<typeof indexKeysFor> } }).ctx;
  const run = "中文".repeat(500_000);
  const crafted: SourceRecord = { ...note, id: "spam", title: "优惠", content: run, source_url: "file:///mail/spam", path: "spam" };
  await index.put({ source: "spam", size: 1, mtime: 1 }, [{ ...crafted, content: "placeholder" }]);
  await index.put(entry, [note]);
  // As the previous version stored the crafted mail: sealed whole, its run one word.
  const spam = db.query<{ doc: number }, [string]>("SELECT doc FROM connector_docs WHERE source = ?").get(keys.blinder.source("spam"))!.doc;
  db.query("UPDATE connector_docs SET record = ? WHERE doc = ?").run(keys.seal(JSON.stringify(crafted), `doc/${spam}`), spam);
  db.query("DELETE FROM connector_terms WHERE rowid = ?").run(spam);
  db.query("INSERT INTO connector_terms (rowid, title, content) VALUES (?, ?, ?)").run(
    spam,
    keys.blinder.term("优惠"),
    keys.blinder.term(run),
  );
  db.query("UPDATE connector_docs SET terms_format = 1").run();

  let outcome: unknown = "ok";
  try {
    await scanUnchanged(index, [entry, { source: "spam", size: 1, mtime: 1 }]);
  } catch (error) {
    outcome = String(error);
  }
  expect(outcome).toBe("ok");
  expect(db.query<{ n: number }, [number]>("SELECT count(*) AS n FROM connector_docs WHERE terms_format < ?").get(TERMS_FORMAT)!.n).toBe(0);
  expect(found(index, "Hauptstrasse")).toBe(1);
});

test("attack: the rewrite of long Chinese documents blinds no more in a turn of the event loop than its budget and one record (a batch was 20 records, whatever their size)", async () => {
  // Pairs of characters make a word of every character: a document of 400k characters is ~100 ms
  // of blinding; 20 of them a turn, and the server answered nothing (GET /, questions) for
  // seconds. Counted in characters blinded between two turns, not in time.
  const { db, indexFor } = localIndexes();
  const index = indexFor("alice/books");
  const chars = Array.from(
    "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生会自着去过家学对她里后小么心多天",
  );
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
  // 20 books hold more than REWRITE_CHARS and one book: all of them in one turn fails it.
  const BOOK = 7_500;
  const book = () => Array.from({ length: BOOK }, (_, i) => (i % 80 === 79 ? "。" : chars[next() % chars.length])).join("");
  const entries = Array.from({ length: 20 }, (_, i) => ({ source: `book${i}`, size: 1, mtime: 1 }));
  for (const e of entries) await index.put(e, [{ ...note, id: e.source, content: book(), path: e.source }]);
  db.query("UPDATE connector_docs SET terms_format = 1").run();

  const { blinder } = (index as unknown as { ctx: { keys: ReturnType<typeof indexKeysFor> } }).ctx.keys;
  const text = blinder.text.bind(blinder);
  let blinded = 0;
  blinder.text = (words: string) => {
    blinded += words.length;
    return text(words);
  };
  // A turn ends where the next check phase starts: the most blinded between two.
  let mostInATurn = 0;
  let turning = true;
  const turn = () => {
    mostInATurn = Math.max(mostInATurn, blinded);
    blinded = 0;
    if (turning) setImmediate(turn);
  };
  setImmediate(turn);
  await scanUnchanged(index, entries);
  turning = false;
  turn();

  expect(db.query<{ n: number }, [number]>("SELECT count(*) AS n FROM connector_docs WHERE terms_format < ?").get(TERMS_FORMAT)!.n).toBe(0);
  // Before: all 20 books (150,000 characters) in one turn.
  expect(mostInATurn).toBeGreaterThan(0);
  expect(mostInATurn).toBeLessThanOrEqual(REWRITE_CHARS + BOOK + note.title.length);
});

describe("format 4: the letters no accent makes folded ('ł' l, 'ø' o, 'ß' ss)", () => {
  const polish = (i: number): SourceRecord => ({
    ...note,
    id: `pl${i}`,
    title: `Faktura ${i}`,
    content: `Dostawa nr ${i} do Łodzi, ul. Piotrkowska ${i}, 90-001 Łódź. ${"Należność ogółem zapłacona przelewem. ".repeat(200)}`,
    source_url: `file:///notes/pl${i}`,
    path: `pl${i}`,
  });

  /** An index holding `count` Polish invoices as format 3 stored them: "ł" a letter of its own ("łodz", not "lodz"). */
  async function indexOfFormatThree(count: number) {
    const { db, indexFor } = localIndexes();
    const index = indexFor("alice/notes");
    const entries = Array.from({ length: count }, (_, i) => ({ source: `pl${i}`, size: 1, mtime: 1 }));
    for (const [i, e] of entries.entries()) await index.put(e, [polish(i)]);
    const { blinder } = (index as unknown as { ctx: { keys: ReturnType<typeof indexKeysFor> } }).ctx.keys;
    const formatThree = (text: string) =>
      text
        .toLowerCase()
        .normalize("NFKD")
        .replace(/\p{M}+/gu, "")
        .split(/[^\p{L}\p{N}]+/u)
        .filter(Boolean)
        .map((w) => blinder.term(w))
        .join(" ");
    const docs = db.query<{ doc: number; source: string }, []>("SELECT doc, source FROM connector_docs").all();
    for (const [i, e] of entries.entries()) {
      const doc = docs.find((d) => d.source === blinder.source(e.source))!.doc;
      db.query("DELETE FROM connector_terms WHERE rowid = ?").run(doc);
      db.query("INSERT INTO connector_terms (rowid, title, content) VALUES (?, ?, ?)").run(
        doc,
        formatThree(polish(i).title),
        formatThree(polish(i).content),
      );
    }
    db.query("UPDATE connector_docs SET terms_format = 3").run();
    return { db, index, entries };
  }

  test("attack: an index made before format 4 finds 'Łódź' by 'Lodz' once its words are written again; meanwhile its other words are found", async () => {
    const { db, index, entries } = await indexOfFormatThree(1);
    // Format 3's words: "łodz" is no "lodz"; the question's "Łódź" folds to "lodz" now too.
    expect([found(index, "Lodz"), found(index, "Łódź"), found(index, "Piotrkowska")]).toEqual([0, 0, 1]);
    expect((await scanUnchanged(index, entries)).rewritten).toBe(1);
    expect([found(index, "Lodz"), found(index, "Łódź"), found(index, "LODZ"), found(index, "Piotrkowska")]).toEqual([1, 1, 1, 1]);
    expect(db.query<{ f: number }, []>("SELECT terms_format AS f FROM connector_docs").get()!.f).toBe(TERMS_FORMAT);
  });

  test("the rewrite of many records answers questions between its batches (D31): a question asked meanwhile is answered before it ends", async () => {
    // 60 records of ~7,600 characters: more than REWRITE_CHARS, written in several turns.
    const { db, index, entries } = await indexOfFormatThree(60);
    let rewriting = true;
    const answeredMeanwhile: number[] = [];
    const ask = () => {
      if (!rewriting) return;
      answeredMeanwhile.push(found(index, "Piotrkowska"));
      setImmediate(ask);
    };
    setImmediate(ask);
    const { rewritten } = await scanUnchanged(index, entries);
    rewriting = false;
    expect(rewritten).toBe(60);
    // Answered between batches, each finding the invoices (their unchanged words) as before.
    expect(answeredMeanwhile.length).toBeGreaterThan(1);
    expect(new Set(answeredMeanwhile)).toEqual(new Set([10]));
    expect(found(index, "Lodz")).toBe(10);
    expect(db.query<{ n: number }, [number]>("SELECT count(*) AS n FROM connector_docs WHERE terms_format < ?").get(TERMS_FORMAT)!.n).toBe(
      0,
    );
  });
});
