// D31: a record's words are blinded with the event loop turning whenever a budget of time is
// spent (Turns), whatever the text's shape; the words are the same as text()'s. The clock here
// counts words blinded (as if each cost WORD_MS), and a timer counts the words blinded between
// two turns of the event loop: no turn may hold more than the budget's worth.
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { BLIND_SLICE_CHARS, TermBlinder } from "../../src/connectors/index-terms";
import { TURN_MS, Turns } from "../../src/connectors/turns";

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

test("4 M characters of words with no space between them are blinded a budget at a time (outside attack)", async () => {
  const b = blinder();
  let text = "";
  // A small vocabulary keeps the test quick (remembered words); the clock counts each as a unique one.
  for (let i = 0; text.length < 4_000_000; i++) text += `q${i % 1000},`;
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
