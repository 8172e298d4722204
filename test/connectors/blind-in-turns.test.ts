// D31: a record's words are blinded with the event loop turning whenever a budget of time is
// spent (Turns), whatever the text's shape; the words are the same as text()'s. The clock here
// counts words blinded (as if each cost WORD_MS), and a timer counts the words blinded between
// two turns of the event loop: no turn may hold more than the budget's worth.
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { BLIND_SLICE_CHARS, TermBlinder } from "../../src/connectors/index-terms";
import { EmbeddedIndex, type IndexKeys, indexKeysFor, indexMigrations } from "../../src/connectors/local-index";
import type { IndexContext } from "../../src/connectors/local-index/context";
import { prepareRecords, putRecords, removeSource } from "../../src/connectors/local-index/documents";
import { TURN_MS, Turns } from "../../src/connectors/turns";
import type { SourceRecord } from "../../src/connectors/types";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";
import { ask } from "../support/local-index";

/** What a unique word costs to stem and hash, on the clock of these tests. */
const WORD_MS = 0.035;
/** The most words a turn may blind: the budget's worth, and the clock is looked at every 32 words (one turn may fall between two looks). */
const WORDS_PER_TURN = 2 * (TURN_MS / WORD_MS + 32);

class CountingBlinder extends TermBlinder {
  words = 0;
  override term(word: string): string {
    this.words++;
    return super.term(word);
  }
}

/** `work()`'s result, and the most words `blinder` blinded between two turns of the event loop. */
async function longestTurn<T>(blinder: CountingBlinder, work: (turns: Turns) => Promise<T>): Promise<{ result: T; most: number }> {
  let most = 0;
  let seen = blinder.words;
  let running = true;
  const watch = () => {
    most = Math.max(most, blinder.words - seen);
    seen = blinder.words;
    if (running) setImmediate(watch);
  };
  setImmediate(watch);
  const result = await work(new Turns(() => blinder.words * WORD_MS));
  running = false;
  most = Math.max(most, blinder.words - seen);
  return { result, most };
}

const blinder = () => new CountingBlinder(() => randomBytes(32));

test("textInTurns gives text()'s words, on text of any shape", async () => {
  const b = blinder();
  const pieces = [
    "Invoice",
    " ",
    ",",
    "1.250,00",
    "明日の会議",
    "明",
    "café",
    "e\u0301",
    "Rech\u00ADnung",
    "㎏",
    "ß",
    "ΑΣ",
    "𠀀𠀁",
    "😀",
    "\n",
    "İ",
    "ｶﾞ",
    "x",
    "-",
  ];
  for (let trial = 0; trial < 40; trial++) {
    // A few pieces, repeated at random across three slices: words, marks, pairs and cuts meet at every boundary.
    const pool = Array.from({ length: 1 + (trial % 5) }, (_, i) => pieces[(trial * 7 + i * 3) % pieces.length]!);
    let text = "";
    for (let i = 0; text.length < 3 * BLIND_SLICE_CHARS; i++) text += pool[(i * 2654435761) % pool.length]!;
    expect(await b.textInTurns(text)).toBe(b.text(text));
  }
  const long = `a ${"x".repeat(3 * BLIND_SLICE_CHARS)} b`;
  expect(await b.textInTurns(long)).toBe(b.text(long));
});

test("1 M characters of words with no space between them are blinded a budget at a time (outside attack: 4 M)", async () => {
  const b = blinder();
  let text = "";
  // A small vocabulary keeps the test quick (remembered words); the clock counts each as a unique one.
  // The bound is per turn: a quarter of the attack's 4 M characters is ~250 turns' worth.
  for (let i = 0; text.length < 1_000_000; i++) text += `q${i % 1000},`;
  const { result, most } = await longestTurn(b, (turns) => b.textInTurns(text, turns));
  expect(result).toBe(b.text(text));
  expect(most).toBeLessThanOrEqual(WORDS_PER_TURN);
});

test("unique words with spaces are blinded a budget at a time, not a slice of characters at a time", async () => {
  const b = blinder();
  let text = "";
  for (let i = 0; text.length < 300_000; i++) text += `w${i} `;
  const { result, most } = await longestTurn(b, (turns) => b.textInTurns(text, turns));
  expect(result).toBe(b.text(text));
  expect(most).toBeLessThanOrEqual(WORDS_PER_TURN);
});

test("a run of Chinese with no space or punctuation is cut between its letters, its pairs unchanged", async () => {
  const b = blinder();
  const text = "明日の会議室".repeat(50_000);
  const { result, most } = await longestTurn(b, (turns) => b.textInTurns(text, turns));
  expect(result).toBe(b.text(text));
  expect(most).toBeLessThanOrEqual(WORDS_PER_TURN);
});

/** The local index of a fresh database, its blinder counting words and its sealing and chunking counted as work too. */
function countedIndex() {
  const db = openDatabase(tempDir(), [...cryptoMigrations, ...indexMigrations]);
  const userKeys = new UserKeys(db, randomBytes(32));
  const owner = "alice/mail";
  const real = indexKeysFor(userKeys, "alice", owner, true);
  const b = new CountingBlinder(() => userKeys.derive("alice", `word-index/${owner}`, true));
  // Each record sealed or chunked counts as a word's work on the clock.
  const keys: IndexKeys = {
    ...real,
    blinder: b,
    seal: (text, row) => {
      b.words++;
      return real.seal(text, row);
    },
  };
  const chunker = (r: SourceRecord) => {
    b.words++;
    return [r.content];
  };
  const ctx: IndexContext = { db, owner, keys, chunker };
  return { b, ctx, index: new EmbeddedIndex(db, owner, keys, chunker) };
}

const mail = (i: number): SourceRecord => ({
  id: `m${i}`,
  title: `Subject ${i}`,
  content: `body ${i}`,
  source_url: `mbox/${i}`,
  date: null,
  type: "email",
  path: `mbox/${i}`,
  metadata: {},
});

test("2,000 tiny records are made ready to store a budget at a time, the transaction then only inserting (outside attack)", async () => {
  const { b, ctx, index } = countedIndex();
  // 100,000 (a large mbox) held the serving thread for seconds; the bound is per turn, and the
  // clock counts work, so ~40 turns' worth (~50 records a turn) proves it as well as 100,000.
  const records = Array.from({ length: 2_000 }, (_, i) => mail(i));
  const { result, most } = await longestTurn(b, (turns) => prepareRecords(ctx, records, turns));
  expect(most).toBeLessThanOrEqual(WORDS_PER_TURN);
  const before = b.words;
  await putRecords(ctx, { source: "mbox", size: 1, mtime: 1 }, records, result);
  // Nothing blinded, chunked or sealed in the transaction.
  expect(b.words).toBe(before);
  expect(index.count()).toBe(2_000);
  expect(index.search(ask(["subject", "1999"]))[0]?.id).toBe("m1999");
  expect(ctx.db.query("SELECT count(*) AS n FROM connector_chunks").get()).toEqual({ n: 2_000 });
});

test("records sealed to rows another source took meanwhile are sealed again to their own", async () => {
  const { ctx, index } = countedIndex();
  const records = [mail(1), mail(2)];
  const prepared = await prepareRecords(ctx, records);
  await putRecords(ctx, { source: "other", size: 1, mtime: 1 }, [mail(3)]);
  await putRecords(ctx, { source: "mbox", size: 1, mtime: 1 }, records, prepared);
  expect(
    index
      .search(ask(["subject"]))
      .map((r) => r.id)
      .sort(),
  ).toEqual(["m1", "m2", "m3"]);
});

test("attack: records sealed to rows another source took and gave up meanwhile are sealed again: a row's number is never given again (a search worker's read of the removed row is never taken for theirs)", async () => {
  const { ctx, index } = countedIndex();
  const records = [mail(1), mail(2)];
  const prepared = await prepareRecords(ctx, records);
  await putRecords(ctx, { source: "other", size: 1, mtime: 1 }, [mail(3), mail(4)]);
  const docs = () =>
    ctx.db
      .query<{ doc: number }, []>("SELECT doc FROM connector_docs ORDER BY doc")
      .all()
      .map((r) => r.doc);
  const given = docs();
  await removeSource(ctx, ctx.keys.blinder.source("other"));
  expect(docs()).toEqual([]);
  await putRecords(ctx, { source: "mbox", size: 1, mtime: 1 }, records, prepared);
  expect(docs().filter((doc) => given.includes(doc))).toEqual([]);
  expect(
    index
      .search(ask(["subject"]))
      .map((r) => r.id)
      .sort(),
  ).toEqual(["m1", "m2"]);
});
