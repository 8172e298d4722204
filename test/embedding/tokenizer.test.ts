import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { WordPieceTokenizer } from "../../src/embedding/tokenizer";
import { assets } from "../../src/native/assets";

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
