// The folding a SQL source is asked with (fold.ts): built from the index's own foldText, so that a
// word found in the index is found in a table the same way.
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { foldText } from "../../src/connectors/index-terms";
import { foldedGlob, foldedNeedle, foldedRegex } from "../../src/connectors/sql/fold";

/** Whether SQLite's GLOB of the folded needle finds it in `cell`. */
const globs = (cell: string, needle: string) =>
  new Database(":memory:").query<{ hit: number }, [string, string]>("SELECT ? GLOB ? AS hit").get(cell, foldedGlob(needle))!.hit === 1;

describe("fold.ts: a needle as the index folds it", () => {
  test("whatever its accents or case, a word matches the cells the index would fold to it", () => {
    for (const [cell, needle] of [
      ["Zürich", "zurich"],
      ["ZÜRICH", "Zurich"],
      ["Stanisław Wójcik", "wojcik"],
      ["Nguyễn Văn", "nguyen"],
      ["Σωκράτης", "σωκρατης"],
      ["Йошкар-Ола", "иошкар"],
      ["Émile", "EMILE"],
    ] as const) {
      expect({ cell, needle, folded: foldText(cell).includes(foldText(needle)), globs: globs(cell, needle) }).toEqual({
        cell,
        needle,
        folded: true,
        globs: true,
      });
      expect(new RegExp(foldedRegex(needle), "iu").test(cell)).toBe(true);
    }
  });

  test("another word is not matched; a letter of two ('ß') is asked as typed", () => {
    expect(globs("Zürich", "zorich")).toBe(false);
    expect(globs("Straße", "straße")).toBe(true);
    expect(foldedNeedle("Straße")).toBe("straße");
  });

  test("pattern characters of a needle are literal in GLOB and in the regular expression", () => {
    expect(globs("a*b", "a*b")).toBe(true);
    expect(globs("axxb", "a*b")).toBe(false);
    expect(globs("a?b", "a?b")).toBe(true);
    expect(globs("acb", "a?b")).toBe(false);
    expect(new RegExp(foldedRegex("a.b(c)"), "iu").test("a.b(c)")).toBe(true);
    expect(new RegExp(foldedRegex("a.b"), "iu").test("axb")).toBe(false);
  });
});
