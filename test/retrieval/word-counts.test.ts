// A record's words counted once for every question (issue 36): the counts a question reads from
// them are those of counting its words in the text itself, so BM25 over the pool and the rare
// words rank as before; and a record's words are counted once per version of its text.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { countWords, type WordCounts, wordCounts, wordCountsOf, wordLookups } from "../../src/retrieval/bm25";
import { RecordMemo, recordKey } from "../../src/retrieval/record-memo";

const messages = join(import.meta.dir, "../../../shared/data/enron/messages");
const mails = readdirSync(messages)
  .sort()
  .slice(0, 150)
  .map((f) => readFileSync(join(messages, f), "latin1").slice(0, 6000));
const texts = [
  ...mails,
  "Totaal € 4.904,94 BTW 21% factuur Coolblue",
  "NETPRESSE Facture n° 2022089083 Total TTC : 56,02 €",
  "明日の会議は十時からです 東京都",
  "Rech\u00ADnung für Straße ΣΟΦΟΣ ties ies Nando's NANDOS",
  "",
];
const questions = [
  ["california", "price", "caps"],
  ["energy", "trading", "risk", "management"],
  ["meeting", "schedule", "next", "week"],
  ["factuur", "coolblue", "totaal"],
  ["netpresse", "total"],
  ["会議", "東京都"],
  ["rechnung", "strasse", "nando's", "ties", "ies"],
  ["gas", "pipeline", "capacity", "FERC", "order"],
];

test("the words a question reads from counted texts are those counted for it in the texts", () => {
  const counted = texts.map(wordCounts);
  for (const terms of questions) expect(wordCountsOf(counted, terms)).toEqual(countWords(texts, terms));
});

test("a record's value is computed once per version of its text, again when the text changes", () => {
  let computed = 0;
  const memo = new RecordMemo<WordCounts>(
    1_000_000,
    (w) => w.counts.length,
    (text) => (computed++, wordCounts(text)),
  );
  const key = recordKey("alice", "mail", "m1");
  for (let i = 0; i < 5; i++) memo.get(key, "the invoice from Acme");
  expect(computed).toBe(1);
  expect(wordCountsOf([memo.get(key, "the invoice from Globex")], ["acme", "globex"])[0]!.tf).toEqual(new Map([["globex", 1]]));
  expect(computed).toBe(2);
  // Another owner's record of the same id and text is its own.
  memo.get(recordKey("bob", "mail", "m1"), "the invoice from Globex");
  expect(computed).toBe(3);
});

test("the memo holds at most its budget, oldest out first; a value over a quarter of it is not kept", () => {
  const memo = new RecordMemo<string>(
    1_000,
    (t) => t.length,
    (text) => text,
  );
  for (let i = 0; i < 100; i++) memo.get(`r${i}`, "x".repeat(99));
  expect(memo.size).toBeLessThanOrEqual(1_000);
  expect(memo.size).toBeGreaterThan(800);
  let computed = 0;
  const counting = new RecordMemo<string>(
    1_000,
    (t) => t.length,
    (text) => (computed++, text),
  );
  counting.get("big", "y".repeat(300));
  counting.get("big", "y".repeat(300));
  expect(computed).toBe(2);
  expect(counting.size).toBe(0);
});

test("a question's word is found in a counted text in a few probes, however many words the text holds", () => {
  // 20,000 words of their own: searching the runs read all of them for each word asked (issue 36).
  const long = wordCounts(Array.from({ length: 20_000 }, (_, i) => `w${i.toString(36)}x`).join(" "));
  const short = wordCounts("the invoice from Acme");
  const asked = ["acme", "invoice", "globex", "w7psx", "zzz"];
  const probesOf = (w: WordCounts) => {
    const before = wordLookups.probes;
    wordCountsOf([w], asked);
    return wordLookups.probes - before;
  };
  expect(wordCountsOf([long], asked)[0]!.tf).toEqual(new Map([["w7psx", 1]]));
  expect(probesOf(long)).toBeLessThanOrEqual(asked.length * 8);
  expect(probesOf(short)).toBeLessThanOrEqual(asked.length * 8);
});
