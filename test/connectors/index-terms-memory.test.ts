// What the blinded words' memo (index-terms.ts) holds in memory: bounded in bytes, never the texts
// the words were cut from. Size-bound proofs (tens of megabytes of text, full collections of the
// process's heap), so they run with the integration tests.
import { expect, test } from "bun:test";
import { TermBlinder } from "../../src/connectors/index-terms";
import { heldBytes } from "../support/held-memory";

const blinder = () => new TermBlinder(() => Buffer.alloc(32, 7));

test("the words remembered do not hold the texts they were cut from", async () => {
  const words = blinder();
  const before = heldBytes();
  // 20 texts of 600 K characters, each with one word of its own: remembered, 20 words; holding their texts, ~24 MB.
  for (let i = 0; i < 20; i++) words.text(`Re: unique${i}wordthatislong. ${"Filler, ".repeat(75_000)}`);
  expect(heldBytes() - before).toBeLessThan(8 * 1024 * 1024);
});

test("attack: long words (a hex dump, a run of letters in a file or a mail) are not all kept by the memo: its bytes are bounded, not only its count", async () => {
  const words = blinder();
  const before = heldBytes();
  // 400 records of one distinct word of 64K letters each (records may hold 1M characters): 26 MB of words.
  // Remembered, they stay after their records are indexed, and the memo's 50,000 could keep 50,000 of them.
  for (let i = 0; i < 400; i++) {
    const word = `${i.toString(16).padStart(4, "0")}${"abcdef0123456789"[i % 16]!.repeat(64 * 1024)}`;
    words.text(`Attachment: ${word}.`);
  }
  expect(heldBytes() - before).toBeLessThan(8 * 1024 * 1024);
});
