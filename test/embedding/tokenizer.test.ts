import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { assets } from "../../src/native/assets";
import { WordPieceTokenizer } from "../../src/embedding/tokenizer";

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

  test("count excludes the special tokens", () => {
    expect(tok.count("Hello, world!")).toBe(4);
    expect(tok.count("")).toBe(0);
  });
});
