import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { ORDER_RANK, ORDERED_BY } from "../../src/connectors/types";
import { WordPieceTokenizer } from "../../src/embedding/tokenizer";
import { assets } from "../../src/native/assets";
import { bm25Scores } from "../../src/retrieval/bm25";
import { CHUNK_TOKENS, chunkText, embeddingText, recordChunks } from "../../src/retrieval/chunk";
import { answerTo } from "../support/answer";

const tok = new WordPieceTokenizer(JSON.parse(readFileSync(assets.tokenizerFile, "utf8")));

describe("chunking (records longer than the model's window)", () => {
  test("attack: cutting a long text reads what its 64 chunks hold, not the 256 K characters it may cut from (D31)", () => {
    // The outside review's row and a long HTML mail's text: sentences of 256 K characters were
    // counted and split whole (~80-120 ms of the serving thread each) for ~40-60 K characters of chunks.
    for (const text of [`body: ${"lorem ipsum dolor sit amet ".repeat(40_000)}`, "word ".repeat(800_000)]) {
      let counted = 0;
      const counting = Object.create(tok) as WordPieceTokenizer;
      counting.count = (t: string, limit?: number) => {
        counted += Math.min(t.length, limit === undefined ? t.length : 4096 + limit * 100);
        return tok.count(t, limit);
      };
      const chunks = chunkText(text, counting);
      expect(chunks).toHaveLength(64);
      const held = chunks.reduce((n, c) => n + c.length, 0);
      // Was ~256 K characters counted for ~38-64 K held.
      expect(counted).toBeLessThan(3 * held);
      expect(chunkText(text, tok)).toEqual(chunks);
    }
  });

  test("attack: a text without white space (a 1 MB single-line CSV, Chinese, one endless word) is tokenized only as far as its 64 chunks hold, in chunks of a chunk's size (D31)", () => {
    // Counted whole as one part (~0.7 s of the serving thread for the CSV), then kept as one chunk of 256 K characters.
    const csv = Array.from({ length: 40_000 }, (_, i) => `${i},widget${i},${(i * 3.1).toFixed(2)}`).join(",");
    const chinese = "明日の会議は十時から本社の第三会議室で行います請求書の金額を確認してください".repeat(8_000);
    for (const text of [csv, chinese, "x".repeat(300_000)]) {
      let tokenized = 0;
      const counting = Object.create(tok) as WordPieceTokenizer;
      counting.words = (t: string) => {
        tokenized += t.length;
        return tok.words(t);
      };
      const chunks = chunkText(text, counting);
      expect(chunks.length).toBeGreaterThan(1);
      expect(chunks.length).toBeLessThanOrEqual(64);
      const held = chunks.reduce((n, c) => n + c.length, 0);
      expect(tokenized).toBeLessThan(3 * held + 16_384);
      // A chunk fits the model's window (a cut inside a run may count a token or two more than its pieces).
      for (const c of chunks) expect(tok.count(c)).toBeLessThanOrEqual(CHUNK_TOKENS + 4);
      // Pieces of one run are glued back without spaces: the chunks are the text's start.
      expect(text.startsWith(chunks.join(""))).toBe(true);
      expect(chunkText(text, tok)).toEqual(chunks);
    }
  });

  test("short text is one chunk; long text is cut at sentences within the budget; deterministic", () => {
    expect(chunkText("One sentence.", tok)).toEqual(["One sentence."]);
    const long = Array.from({ length: 80 }, (_, i) => `Sentence number ${i} talks about invoices and payments.`).join(" ");
    const chunks = chunkText(long, tok);
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) expect(tok.count(c)).toBeLessThanOrEqual(CHUNK_TOKENS);
    expect(chunks.join(" ")).toBe(long);
    expect(chunkText(long, tok)).toEqual(chunks);
  });

  test("a long record's line breaks stay line breaks in its chunks (an invoice's address lines stay apart), with the same tokens", () => {
    const lines = Array.from({ length: 60 }, (_, i) => `Line ${i} of the invoice: 4557 De Silva St, item ${i}`);
    const chunks = chunkText(lines.join("\n"), tok);
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) for (const line of c.split("\n")) expect(lines).toContain(line);
    expect(chunks.join("\n")).toBe(lines.join("\n"));
    // Sentences on one line are still joined by a space.
    const prose = Array.from({ length: 80 }, (_, i) => `Sentence ${i} talks about invoices.`).join(" ");
    expect(chunkText(prose, tok).every((c) => !c.includes("\n"))).toBe(true);
  });

  test("a sentence longer than a chunk is cut by words; empty records fall back to the title", () => {
    const run = "word ".repeat(600).trim();
    const chunks = chunkText(run, tok);
    expect(chunks.length).toBe(3);
    for (const c of chunks) expect(tok.count(c)).toBeLessThanOrEqual(CHUNK_TOKENS);
    // A word longer than a piece that fits a chunk (a long URL) stays whole in one chunk.
    const url = `https://tracking.example.com/click?${Array.from({ length: 30 }, (_, i) => `p${i}=v${i}`).join("&")}`;
    expect(url.length).toBeGreaterThan(200);
    expect(chunkText(`${"word ".repeat(150)}${url} ${"word ".repeat(150)}`, tok).some((c) => c.includes(url))).toBe(true);
    expect(recordChunks({ title: "Only a title", content: "" }, tok)).toEqual(["Only a title"]);
    expect(embeddingText("Invoice 7", "Total 10 EUR")).toBe("Invoice 7\nTotal 10 EUR");
  });
});

describe("BM25 over candidates and extractive answers", () => {
  test("BM25 ranks the document with the rare term first", () => {
    const scores = bm25Scores(["the cat sat", "the invoice from Acme", "the the the"], ["acme", "invoice"]);
    expect(scores[1]).toBeGreaterThan(scores[0]!);
    expect(scores[0]).toBe(0);
  });

  test("words are compared as the index compares them, stemmed: 'Nandos' scores in the receipt of NANDO'S (outside walkthrough: the index found it, the pool scored it 0 and mail won)", () => {
    const receipts = ["NANDO'S PERI-PERI CHICKEN\nTOTAL 27.60", "COLES LAW\nTOTAL 129.30", "GUARDIAN HEALTH\nTOTAL 39.68"];
    const scores = bm25Scores(receipts, ["nandos"]);
    expect(scores[0]).toBeGreaterThan(0);
    expect(scores.slice(1)).toEqual([0, 0]);
    // Either way round, and in every form of a word.
    expect(bm25Scores(["Nandos was busy", "nothing"], ["Nando's"])[0]).toBeGreaterThan(0);
    expect(bm25Scores(["all the invoices of March", "nothing"], ["invoice"])[0]).toBeGreaterThan(0);
  });

  test("attack: a Chinese or Japanese word of three characters scores in the candidates that hold it (IMAP, SQL), as before TERMS_FORMAT 2", () => {
    // The question's words are now cut in pairs of characters (foldedWords: 東京 京都), the
    // candidates' words are not (foldText split: 東京都): they never meet, where '東京都' met '東京都' before.
    const rows = ["city: 東京都\nname: 山田", "city: 大阪市\nname: 田中", "会議は東京都で開きます"];
    const scores = bm25Scores(rows, ["東京都"]);
    expect(scores[0]).toBeGreaterThan(scores[1]!);
    expect(scores[2]).toBeGreaterThan(scores[1]!);
    // A word of two characters is its one pair, and a question in pairs finds it in a run.
    expect(bm25Scores(["明日の会議は十時からです", "nothing"], ["会議"])[0]).toBeGreaterThan(0);
  });

  test("the answer cites its sources with [n]", () => {
    const a = answerTo(
      "When was the Acme invoice paid?",
      ["acme", "invoice", "paid"],
      [{ text: "Acme Corp invoiced us 1,250.00 EUR. It was paid on 2026-03-30." }, { text: "The offsite is in Lisbon." }],
    );
    expect(a).toContain("[1]");
    expect(a).not.toContain("[2]");
    expect(a).toContain("paid on 2026-03-30");
    expect(answerTo("anything", [], [])).toBe("No connected source answers this question.");
  });

  test("a question for the most, over a table sorted by the column it names, is answered with its first row", () => {
    const row = (name: string, spent: string, rank?: number) => ({
      text: `customer: ${name}\ncountry: Brazil\ntotal_spent: ${spent}`,
      metadata: { table: "spend", ...(rank ? { [ORDERED_BY]: "total_spent", [ORDER_RANK]: rank } : {}) },
    });
    const sources = [{ text: "Mail about Brazil and customers." }, row("Roberto Almeida", "37.62", 2), row("Luís Gonçalves", "39.62", 1)];
    expect(answerTo("which customer in Brazil spent the most", ["customer", "brazil", "spent"], sources, "desc")).toBe(
      "The highest total_spent among the rows that match: customer: Luís Gonçalves; country: Brazil; total_spent: 39.62. [3]",
    );
    expect(answerTo("who spent the least", ["spent"], sources, "asc")).toStartWith("The lowest total_spent");
    // Unsorted rows (no table sorted by what was asked) are answered as before.
    const unsorted = [row("Roberto Almeida", "37.62"), row("Luís Gonçalves", "39.62")];
    expect(answerTo("which customer in Brazil spent the most", ["customer", "brazil", "spent"], unsorted, "desc")).not.toContain("highest");
  });
});
