// A text's words (bm25.ts words: folded, stemmed) are read once within wordsRemembered, where an
// answer scores its candidate statements by several features each reading them (issue 36), and
// never remembered past it: nothing read for one question is kept for the next, another user's.
import { expect, test } from "bun:test";
import { words, wordsRemembered } from "../../src/retrieval/bm25";

const text = "Die Rechnungen wurden am 7. Mai 2014 ausgestellt; invoices issued, paying Nando's";

test("within wordsRemembered a text's words are read once: the same words every time, equal to those read outside", () => {
  const outside = words(text);
  wordsRemembered(() => {
    const first = words(text);
    expect(words(text)).toBe(first);
    expect(first).toEqual(outside);
    // A nested call shares the one running.
    expect(wordsRemembered(() => words(text))).toBe(first);
    expect(words("another text")).toEqual(["anoth", "text"]);
  });
});

test("nothing is remembered past the call, nor between calls, nor after one that threw", () => {
  const inFirst = wordsRemembered(() => words(text));
  const inSecond = wordsRemembered(() => words(text));
  expect(inSecond).not.toBe(inFirst);
  expect(words(text)).not.toBe(words(text));
  expect(() =>
    wordsRemembered(() => {
      words(text);
      throw new Error("failed");
    }),
  ).toThrow("failed");
  expect(words(text)).not.toBe(words(text));
});
