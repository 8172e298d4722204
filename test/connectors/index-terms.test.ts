// The blinded words of an index (index-terms.ts): what a text stores and what a question
// matches must be the same keyed hash of the same stem, however the memo was filled. What the
// memo holds, in bytes, is proved in index-terms-memory.test.ts (an integration test: size).
import { describe, expect, test } from "bun:test";
import { FOLDED_LETTERS } from "../../src/connectors/folded-letters";
import { foldedWords, foldText, MAX_WORD_CHARS, TermBlinder } from "../../src/connectors/index-terms";
import type { SourceRecord } from "../../src/connectors/types";
import { planQuery } from "../../src/retrieval/plan";
import { localIndexes } from "../support/local-index";

const blinder = () => new TermBlinder(() => Buffer.alloc(32, 7));

test("a word and its inflections are one blinded term, whichever is seen first", async () => {
  const first = blinder();
  const second = blinder();
  expect(first.text("Shipments")).toBe(second.term("shipment"));
  expect(second.text("shipment shipments Shipments")).toBe(Array(3).fill(first.term("shipments")).join(" "));
});

test("words are folded (case, diacritics) and cut at anything but letters and digits; no word is spelled", async () => {
  const b = blinder();
  const stored = b.text("Café-Owner's résumé: 2001 invoices");
  expect(stored).toBe(["cafe", "owner", "s", "resume", "2001", "invoice"].map((w) => b.term(w)).join(" "));
  expect(stored).not.toMatch(/caf|owner|resum|invoice/);
});

test("each letter of the folding table is a lower-case letter that NFKD leaves whole, folded to plain letters, its capital the same", () => {
  for (const [letter, folded] of Object.entries(FOLDED_LETTERS)) {
    const upper = letter.toUpperCase();
    expect({ letter, lower: letter.toLowerCase(), nfkd: letter.normalize("NFKD"), folded: /^[a-z]{1,2}$|^σ$/.test(folded) }).toEqual({
      letter,
      lower: letter,
      nfkd: letter,
      folded: true,
    });
    expect({ letter, fold: foldText(letter), capital: upper.length === 1 ? foldText(upper) : folded }).toEqual({
      letter,
      fold: folded,
      capital: folded,
    });
  }
});

test("Greek: a final sigma and a sigma are one letter, however lower-casing wrote it", async () => {
  const b = blinder();
  expect(b.text("ΟΔΟΣ.ΑΒ")).toBe(b.text("οδος αβ"));
});

test("another key, other terms", async () => {
  expect(new TermBlinder(() => Buffer.alloc(32, 8)).text("harbour")).not.toBe(blinder().text("harbour"));
});

/** Records found in a fresh local index holding one note of `content`, asked `question` as the planner plans it. */
async function found(content: string, question: string): Promise<number> {
  const record: SourceRecord = {
    id: "r1",
    title: "note",
    content,
    source_url: "file:///notes/r1",
    date: null,
    type: "file",
    path: "r1",
    metadata: {},
  };
  const index = localIndexes().indexFor("alice/notes");
  await index.put({ source: "r1", size: 1, mtime: 1 }, [record]);
  const { terms, phrases } = planQuery(question);
  return index.search({ terms, phrases, limit: 10 }).length;
}

describe("attack: a question's planned words find the words stored, however the question is written", () => {
  // The planner (retrieval/plan.ts) cuts a question into words at anything but letters and
  // digits, before folding: a combining mark cuts a word in two, where the index (foldedWords)
  // drops the mark and keeps one word. Questions pasted in decomposed form (macOS file names,
  // some PDFs) and scripts written with vowel signs (Devanagari, Thai, Bengali, ...) find nothing.

  test("precomposed, as a control", async () => {
    expect(await found("Jeff sent the résumé on Friday", "where is the résumé?")).toBe(1);
  });
  test("a question in decomposed form (NFD) finds the precomposed word", async () => {
    expect(await found("Jeff sent the résumé on Friday", "where is the résumé?".normalize("NFD"))).toBe(1);
  });
  test("Turkish: a capital İ, precomposed (NFC), which lower-casing turns into i and a combining dot", async () => {
    expect(await found("Toplantı İstanbul ofisinde", "İstanbul")).toBe(1);
  });
  test("Hindi: the same word in the question and the text", async () => {
    expect(await found("नमस्ते दुनिया", "नमस्ते")).toBe(1);
  });
  test("Thai: the same word in the question and the text", async () => {
    expect(await found("สวัสดี ครับ", "สวัสดี")).toBe(1);
  });
});

describe("attack: international text in a local index, asked as people write it", () => {
  // The index's words of format 2 (TERMS_FORMAT): a soft hyphen joined, ß folded to ss, CJK cut
  // in pairs of characters; of format 4, the letters no accent makes folded; indexes of an older
  // format have their words written again by their next scan (terms-format.test.ts).

  test("a zero-width space or soft hyphen pasted inside a question's word does not cut it (question side only)", async () => {
    // The planner cuts 'in\u200Bvoice' into 'in' (a stop word) and 'voice': the invoice is not found.
    expect(await found("The invoice was paid on Friday", "in\u200Bvoice")).toBe(1);
    expect(await found("The invoice was paid on Friday", "in\u00ADvoice")).toBe(1);
  });

  test("a soft hyphen inside a stored word (HTML mail's &shy;, PDFs) does not cut it", async () => {
    expect(await found("Die Rech\u00ADnung ist bezahlt", "Rechnung")).toBe(1);
  });

  test("German ß and ss: one word either way", async () => {
    expect(await found("Lieferung an die Hauptstraße 5", "Hauptstrasse")).toBe(1);
    expect(await found("Lieferung an die Hauptstrasse 5", "Hauptstraße")).toBe(1);
  });

  test("attack: letters no accent makes ('ł', 'ø', 'đ', 'ı', 'æ', 'þ') are found by their plain letters, and the reverse (format 4)", async () => {
    // NFKD leaves them whole: "Lodz" was another word than "Łódź" on both sides.
    for (const [text, question] of [
      ["Dostawa do Łodzi, ul. Piotrkowska 1, Łódź", "Lodz"],
      ["Bjørn Hansen, Tromsø", "Tromso"],
      ["Rođen u Đakovu, Đakovo", "Dakovo"],
      ["Toplantı Işık Sokak", "Isik"],
      ["Ærø færgen", "Aero"],
      ["Þórr Sigurðsson", "Thorr Sigurdsson"],
      ["Œuvres complètes", "oeuvres"],
      ["Lodz, Tromso", "Łódź"],
      ["Lodz, Tromso", "TROMSØ"],
    ] as const)
      expect({ question, found: await found(text, question) }).toEqual({ question, found: 1 });
  });

  test("Chinese and Japanese, written without spaces: a word of the text is found", async () => {
    expect(await found("明日の会議は十時からです", "会議")).toBe(1);
    expect(await found("请把发票寄给我", "发票")).toBe(1);
  });

  test("attack: a question in Chinese or Japanese, written as a sentence without spaces, finds the record holding its words", async () => {
    // The planner keeps the whole question as one word, and the index asks for it as one phrase
    // of all its pairs of characters: only a record holding the question verbatim is found, where
    // "when is the meeting?" finds the meeting (the embedding model reads English only).
    expect(await found("明日の会議は十時からです", "会議はいつですか")).toBe(1);
    expect(await found("请把发票寄给我", "发票在哪里")).toBe(1);
  });

  // Known gap, marked failing (it turns red once it passes): a run is indexed by its pairs only;
  // single characters too would double a Chinese index.
  test.failing("attack: a Chinese word of one character ('猫' cat, '钱' money) inside a run is found", async () => {
    // The planner drops a one-letter word, and the index keeps pairs only (a lone character
    // only where its run is one character long): no question finds the cat by its word.
    const index = localIndexes().indexFor("alice/notes");
    const texts = ["我的猫很可爱", "今天天气很好", "他借了我很多钱"];
    for (const [i, content] of texts.entries())
      await index.put({ source: `r${i}`, size: 1, mtime: 1 }, [
        { id: `r${i}`, title: "note", content, source_url: `file:///notes/r${i}`, date: null, type: "file", path: `r${i}`, metadata: {} },
      ]);
    const ask = (q: string) => {
      const { terms, phrases } = planQuery(q);
      return terms.length + phrases.length ? index.search({ terms, phrases, limit: 10 }).map((r) => r.content) : [];
    };
    expect(ask("猫")).toEqual([texts[0]!]);
    expect(ask("钱")).toEqual([texts[2]!]);
  });

  test("Arabic-Indic digits asked, Latin digits stored", async () => {
    expect(await found("Invoice 4711 is paid", "٤٧١١")).toBe(1);
  });
});

test("attack: a word longer than MAX_WORD_CHARS is cut to its first MAX_WORD_CHARS, in the index and in questions, whole or in turns (D31)", async () => {
  const words = blinder();
  // One word of 4 M letters was stemmed and hashed whole: ~0.4 s of the serving thread in one slice.
  const giant = "a".repeat(4_000_000);
  expect(words.text(giant)).toBe(words.text("a".repeat(MAX_WORD_CHARS)));
  expect(await words.textInTurns(`x ${giant} y`)).toBe(words.text(`x ${"a".repeat(MAX_WORD_CHARS)} y`));
  expect(foldedWords(`Token: ${"Ab1".repeat(100)}.`).map((w) => w.length)).toEqual([5, MAX_WORD_CHARS]);
  // Never half of a surrogate pair: 𐐨 (U+10428, Deseret) is a letter of two UTF-16 units.
  const astral = foldedWords(`b${"𐐨".repeat(100)}`)[0]!;
  expect(astral.length).toBe(MAX_WORD_CHARS - 1);
  expect(astral.isWellFormed()).toBe(true);
  // Chinese and Japanese runs are not words to cut: their pairs stay.
  expect(foldedWords("会議".repeat(100))).toHaveLength(199);

  // A long word asked finds the record that holds it, and so does its beginning.
  const { indexFor } = localIndexes();
  const index = indexFor("alice/dumps");
  const hex = "deadbeef".repeat(40);
  const record: SourceRecord = {
    id: "d1",
    title: "Dump",
    content: `Crash dump ${hex} attached.`,
    source_url: "file:///dumps/d1",
    date: null,
    type: "file",
    path: "d1",
    metadata: {},
  };
  await index.put({ source: "d1", size: 1, mtime: 1 }, [record]);
  for (const asked of [hex, hex.slice(0, 100)]) {
    const plan = planQuery(`which mail has ${asked}`);
    expect(index.search({ terms: plan.terms, phrases: [], limit: 5 }).map((r) => r.id)).toEqual(["d1"]);
  }
});
