import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { parseMessage } from "../../src/connectors/maildir/connector";
import { MAX_TOKENS } from "../../src/embedding/embedder";
import { WordPieceTokenizer } from "../../src/embedding/tokenizer";
import { assets } from "../../src/native/assets";
import { embeddingText, recordChunks } from "../../src/retrieval/chunk";
import { SHARED_DATA } from "../support/servers";

const tok = new WordPieceTokenizer(JSON.parse(readFileSync(assets.tokenizerFile, "utf8")));

describe("WordPiece tokenizer (bert-base-uncased vocabulary of all-MiniLM-L6-v2)", () => {
  test("known ids: [CLS] hello , world ! [SEP]", () => {
    expect(tok.encode("Hello, world!", 256).ids).toEqual([101, 7592, 1010, 2088, 999, 102]);
  });

  test("sub-words take the ## continuation", () => {
    expect(tok.encode("unaffable", 256).ids).toEqual([101, 14477, 20961, 3468, 102]);
  });

  test("lower-cases, strips accents, drops control characters, splits punctuation", () => {
    expect(tok.words("Héllo\u0000 Wörld\tdon't")).toEqual(["hello", "world", "don", "'", "t"]);
    expect(tok.words("$1,250.00")).toEqual(["$", "1", ",", "250", ".", "00"]);
  });

  test("Chinese characters stand alone", () => {
    expect(tok.words("ab中文cd")).toEqual(["ab", "中", "文", "cd"]);
  });

  test("an unknown word is [UNK]", () => {
    expect(tok.encode("\u{1F600}", 256).ids).toEqual([101, 100, 102]);
  });

  test("truncates to the limit, [SEP] kept last", () => {
    const ids = tok.encode("word ".repeat(1000), 256).ids;
    expect(ids).toHaveLength(256);
    expect(ids[0]).toBe(101);
    expect(ids[255]).toBe(102);
  });

  test("the fast paths (ASCII by table, pieces remembered) give what the Unicode path gives", () => {
    // Greek final sigma: "." is case-ignorable, so the Σ before it is not final; the one before a space is.
    expect(tok.words("ΑΣ.Β ΑΣ Β")).toEqual(["ασ", ".", "β", "ας", "β"]);
    // U+037E decomposes to ";" and splits like it.
    expect(tok.words("a;b a\u037eb")).toEqual(["a", ";", "b", "a", ";", "b"]);
    // Control characters (NUL, VT, FF) are dropped inside a word, not split on.
    expect(tok.words("in\u0000voice a\u000bb\u000cc")).toEqual(["invoice", "abc"]);
    // A CJK compatibility ideograph stands alone, as its unified form.
    expect(tok.words("\uf900 中文abc")).toEqual(["豈", "中", "文", "abc"]);
    expect(tok.words("Café RÉSUMÉ naïve")).toEqual(["cafe", "resume", "naive"]);
    expect(tok.encode("The €1,250.00 invoice — paid\u00a0in full\u2003today", 256).ids).toEqual([
      101, 1996, 1574, 2487, 1010, 5539, 1012, 4002, 1999, 6767, 6610, 1517, 3825, 1999, 2440, 2651, 102,
    ]);
    expect(tok.encode("tab\there\r\nnext", 256).ids).toEqual([101, 21628, 2182, 2279, 102]);
    // The same word twice: the remembered pieces are the computed ones.
    expect(tok.encode("unaffable unaffable", 256).ids).toEqual([101, 14477, 20961, 3468, 14477, 20961, 3468, 102]);
  });

  test("count excludes the special tokens", () => {
    expect(tok.count("Hello, world!")).toBe(4);
    expect(tok.count("")).toBe(0);
  });
});

// Hugging Face's own JavaScript tokenizer, reading the same tokenizer.json, as the reference: ours
// stays (scripts/bench/tokenizer.ts: same ids, about a third of the time), so it must give its ids.
describe("parity with @huggingface/tokenizers on real mail", () => {
  const reference = new Tokenizer(JSON.parse(readFileSync(assets.tokenizerFile, "utf8")), {});
  const cls = reference.token_to_id("[CLS]")!;
  const sep = reference.token_to_id("[SEP]")!;
  const pieces = (text: string) => reference.encode(text, { add_special_tokens: false }).ids;
  /** What the model is given: [CLS], the pieces cut to fit, [SEP]. */
  const expected = (text: string, maxLength: number) => [cls, ...pieces(text).slice(0, maxLength - 2), sep];
  const dir = join(SHARED_DATA, "enron", "messages");
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".eml"))
    .sort()
    .filter((_, i) => i % 8 === 0); // 213 of the 1,702, across the set

  test("raw messages (headers, quoting, forwarded HTML): ids, truncation to 256 and counts", () => {
    let longer = 0;
    for (const f of files) {
      // The first 16,000 characters: a few messages carry megabytes of attachment.
      const raw = readFileSync(join(dir, f), "utf8").slice(0, 16_000);
      const all = pieces(raw);
      expect(tok.encode(raw, MAX_TOKENS).ids).toEqual([cls, ...all.slice(0, MAX_TOKENS - 2), sep]);
      expect(tok.count(raw)).toBe(all.length);
      if (all.length > MAX_TOKENS - 2) longer++;
    }
    expect(longer).toBeGreaterThan(100); // truncation was exercised
  }, 60_000);

  test("the chunks indexing embeds: same ids, so the same lengths for the batch budget", async () => {
    let chunks = 0;
    for (const f of files.slice(0, 60)) {
      const record = await parseMessage(readFileSync(join(dir, f)), f, f, f);
      for (const chunk of recordChunks(record, tok)) {
        const text = embeddingText(record.title, chunk);
        expect(tok.encode(text, MAX_TOKENS).ids).toEqual(expected(text, MAX_TOKENS));
        chunks++;
      }
    }
    expect(chunks).toBeGreaterThan(60);
  }, 60_000);

  test("random mixes of scripts, accents, controls, odd spaces and punctuation", () => {
    const pools = [
      "abc XYZ 123",
      "éèüßÅİ",
      "中文日本語한국어\uf900",
      "ΑΣ.Β ας",
      "\u0000\u0007\u000b\u000c\u007f\u0085\u00ad\u200b\u200d\ufeff\ufffd",
      " \t\n\r\u00a0\u2003\u3000",
      ".,;:!?'\"()[]{}<>-_/\\@#$%^&*+=~`|",
      "\u037e\u00b7\u2014\u2019\u201c",
      "\u{1F600}\u{1F4A9}",
      "ﬁﬂǅǈ",
      "e\u0301a\u0308",
    ].map((p) => [...p]);
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let n = 0; n < 3000; n++) {
      let text = "";
      for (let i = 1 + next(40); i > 0; i--) {
        const pool = pools[next(pools.length)]!;
        text += pool[next(pool.length)];
      }
      expect(tok.encode(text, 1000).ids).toEqual(expected(text, 1000));
    }
  });

  test("the two places they differ", () => {
    // A CJK ideograph beyond U+FFFF (Extension B) stands alone in Google's BERT and in the Rust
    // crate's BertNormalizer; tokenizers.js tests UTF-16 units, misses it and makes the word [UNK].
    expect(tok.words("a\u{20000}b")).toEqual(["a", "\u{20000}", "b"]);
    expect(pieces("a\u{20000}b")).toEqual([100]);
    // A special token typed in a mail is text to us; to Hugging Face (the library and the crate) it is the token itself.
    expect(tok.encode("[SEP]", 256).ids).toEqual([101, 1031, 19802, 1033, 102]);
    expect(pieces("[SEP]")).toEqual([sep]);
  });
});

describe("count with a limit", () => {
  // Long texts are counted a part at a time, cut at white space: the same count up to the limit,
  // and past it some number above the limit, without reading the rest.
  const texts = [
    `${"The harbour audit is due on Friday, Jeff. ".repeat(400)}`,
    `${"Die Rechnung für die Hauptstraße 5 ist bezahlt. ".repeat(300)}明日の会議は十時からです`,
    `${"x".repeat(9000)} y ${"z\t".repeat(3000)}`,
    "short",
    "",
    Array.from({ length: 3_000 }, (_, i) => `${i},widget${i};${i * 3}`).join(","),
    "請求書の金額を確認してください。明日の会議は十時からです".repeat(700),
  ];
  test("a text without white space is cut before punctuation or a Chinese character: the same count as its words, read a part at a time (D31)", () => {
    for (const text of texts.slice(-2)) {
      expect(tok.count(text)).toBe(tok.encode(text, 1_000_000).ids.length - 2);
      let read = 0;
      const counting = Object.create(tok) as WordPieceTokenizer;
      counting.words = (t: string) => {
        read += t.length;
        return tok.words(t);
      };
      // Was the whole text in one part.
      expect(counting.count(text, 200)).toBeGreaterThan(200);
      expect(read).toBeLessThanOrEqual(8_192);
    }
  });

  test("the same number as a whole count while within the limit; above the limit once past it", () => {
    for (const text of texts) {
      const whole = tok.count(text);
      for (const limit of [0, 1, 200, whole - 1, whole, whole + 1]) {
        const counted = tok.count(text, limit);
        if (whole <= limit) expect(counted).toBe(whole);
        else expect(counted).toBeGreaterThan(limit);
      }
    }
  });
});
