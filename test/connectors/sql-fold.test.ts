// The folding a SQL source is asked with (fold.ts): built from the index's own foldText, so that a
// word found in the index is found in a table the same way.
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { foldText } from "../../src/connectors/index-terms";
import { foldedGlob, foldedNeedle, foldedRegex, spelledIn, unmarkedIn } from "../../src/connectors/sql/fold";

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

  test("another word is not matched", () => {
    expect(globs("Zürich", "zorich")).toBe(false);
    expect(new RegExp(foldedRegex("zorich"), "iu").test("Zürich")).toBe(false);
  });

  test("a letter no accent makes ('ł', 'ø', 'đ', 'ı', 'ħ', 'ð') is matched by its plain letter, and the reverse", () => {
    for (const [cell, needle] of [
      ["Łódź", "lodz"],
      ["Tromsø", "TROMSO"],
      ["Đakovo", "dakovo"],
      ["Işık", "isik"],
      ["Ħamrun", "hamrun"],
      ["Sigurðsson", "sigurdsson"],
      ["Lodz", "Łódź"],
    ] as const) {
      expect({ cell, needle, globs: globs(cell, needle), regex: new RegExp(foldedRegex(needle), "iu").test(cell) }).toEqual({
        cell,
        needle,
        globs: true,
        regex: true,
      });
      expect(foldText(cell).includes(foldText(needle))).toBe(true);
    }
  });

  test("a letter of two ('ß', 'æ', 'œ', 'þ') is asked folded, its two letters or itself matched by the regular expression", () => {
    expect(foldedNeedle("Straße")).toBe("strasse");
    const regex = (needle: string) => new RegExp(`^(?:${foldedRegex(needle)})$`, "iu");
    for (const [needle, cells] of [
      ["straße", ["Straße", "STRASSE", "straẞe", "Strasse"]],
      ["strasse", ["Straße", "STRAẞE"]],
      ["aero", ["Ærø", "AERO", "æro"]],
      ["oeuvre", ["Œuvre", "oeuvre"]],
      ["thorr", ["Þórr", "THORR"]],
      ["schlosssee", ["Schlosssee", "Schloßsee", "Schlosßee"]],
    ] as const)
      for (const cell of cells) expect({ needle, cell, found: regex(needle).test(cell) }).toEqual({ needle, cell, found: true });
    expect(regex("strasse").test("strase")).toBe(false);
    expect(regex("schlosssee").test("Schloßßee")).toBe(false);
  });

  test("the letters of two a needle's folding holds, for SQLite to write out in the cell", () => {
    expect(spelledIn("Straße")).toEqual([
      ["ß", "ss"],
      ["ẞ", "ss"],
    ]);
    expect(spelledIn("Lodz").map(([, f]) => f)).toEqual(["dz", "dz", "dz", "dz", "dz", "dz"]);
    expect(spelledIn("Zurich")).toEqual([]);
  });

  test("MySQL's gate: the letters no accent makes that a needle's folding may stand for, none for a needle without letters", () => {
    const gate = (needle: string) => new RegExp(unmarkedIn(needle) ?? "(?!)", "u");
    expect(
      ["Łódź", "Tromsø", "Đakovo"].map((cell) => gate("lodz").test(cell) || gate("tromso").test(cell) || gate("dakovo").test(cell)),
    ).toEqual([true, true, true]);
    expect(gate("strasse").test("Straße")).toBe(true);
    // Accents the collation folds itself are no reason to ask the expression.
    expect(gate("zurich").test("Zürich")).toBe(false);
    expect(unmarkedIn("4711")).toBeUndefined();
  });

  test("a run of s, whose ways of writing with ß grow as Fibonacci's numbers, gives a pattern that grows with the run, not with its ways", () => {
    // 32 s have 3,524,578 ways of writing; each an alternative, the pattern would not fit in memory.
    const length = (n: number) => foldedRegex("s".repeat(n)).length;
    expect(length(64) / length(32)).toBeLessThan(2.2);
    expect(new RegExp(foldedRegex("s".repeat(64)), "iu").test("ß".repeat(32))).toBe(true);
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
