// A question's word is asked of a live SQL source as the local index compares words (foldText:
// lower case, without accents, a letter no accent makes as it is written without it), on both
// sides: "Zurich" finds "Zürich", "wojcik" "Wójcik", "Lodz" "Łódź", "Strasse" "Straße" and the
// reverse, and "ZÜRICH" or "Émile" are found whatever the case of the stored text. Each engine
// compares in its own way, built from the one folding table below (never the `unaccent`
// extension, which an operator's PostgreSQL may not have):
//   SQLite      GLOB with a class of a letter's forms ("[uUùúûüÙÚÛÜ…]"): its LIKE folds ASCII only;
//               a letter of two ("ß") written out in the cell first (replace()), GLOB has no "or"
//   PostgreSQL  a regular expression with the same classes (`~*`), a letter of two as an
//               alternative ("(?:[sS…][sS…]|[ßẞ])")
//   MySQL       the accent- and case-insensitive collation utf8mb4_unicode_ci, and for a cell
//               holding a letter no accent makes the same regular expression (REGEXP): the
//               collation has "ł" and "ø" for letters of their own and its LIKE compares a letter
//               with one ("ß" is no "ss")
import { foldText } from "../index-terms";

/**
 * The blocks whose letters carry accents or case that people leave out or type differently:
 * Latin (with its supplements and extensions, IPA's small letters of Latin capitals), Greek,
 * Cyrillic. A letter outside them is compared as it is (a Chinese character has neither).
 */
const FOLDED_BLOCKS: Array<[number, number]> = [
  [0x41, 0x5a],
  [0x61, 0x7a],
  [0xc0, 0x24f],
  [0x250, 0x2af],
  [0x370, 0x3ff],
  [0x400, 0x52f],
  [0x1e00, 0x1fff],
  [0x2c60, 0x2c7f],
];

interface Letters {
  /** By folded letter, its forms: every character of FOLDED_BLOCKS that foldText folds to it alone (itself first). */
  forms: Map<string, string[]>;
  /** By folded string of two or more letters ("ss"), the characters that fold to it ("ß", "ẞ"). */
  spelled: Map<string, string[]>;
  /** By what it folds to, each character that folds otherwise than to itself without its marks ("ł", "ß", "ǆ"). */
  unmarked: Map<string, string[]>;
}

let letters: Letters | undefined;

/** The letters of FOLDED_BLOCKS, by what they fold to. */
function lettersOf(): Letters {
  if (letters) return letters;
  letters = { forms: new Map(), spelled: new Map(), unmarked: new Map() };
  for (const [low, high] of FOLDED_BLOCKS)
    for (let code = low; code <= high; code++) {
      const c = String.fromCharCode(code);
      const folded = foldText(c);
      if (folded === c || !/^\p{L}+$/u.test(folded)) continue;
      const into = folded.length === 1 ? letters.forms : letters.spelled;
      const forms = into.get(folded) ?? into.set(folded, folded.length === 1 ? [folded] : []).get(folded)!;
      forms.push(c);
      if (
        folded.length > 1 ||
        c
          .normalize("NFKD")
          .replace(/\p{M}+/gu, "")
          .toLowerCase() !== folded
      ) {
        const made = letters.unmarked.get(folded) ?? letters.unmarked.set(folded, []).get(folded)!;
        made.push(c);
      }
    }
  return letters;
}

/**
 * The needle's characters as compared: each folded where it folds to one letter, a letter of
 * two ("ß") as its two; any other as asked (a mark alone, "㎏").
 */
function foldedChars(needle: string): string[] {
  return [...needle].flatMap((c) => {
    const f = foldText(c);
    if ([...f].length === 1) return [f];
    return lettersOf().spelled.get(f)?.includes(c) ? [...f] : [c];
  });
}

/** The needle folded as the index folds it, character by character (foldedChars). */
export const foldedNeedle = (needle: string): string => foldedChars(needle).join("");

/** The forms of one folded character: its class of letters, or itself. */
const formsOfChar = (c: string): string[] => lettersOf().forms.get(c) ?? [c];

/** One folded character as a pattern: a class of its forms (`[uUùúûü…]`), or as `literal` writes it. */
function charPattern(c: string, literal: (c: string) => string): string {
  const forms = formsOfChar(c);
  return forms.length > 1 ? `[${forms.join("")}]` : literal(c);
}

/** The needle as a pattern: each folded letter a class of its forms, any other character as `literal` writes it. */
const classes = (chars: string[], literal: (c: string) => string): string => chars.map((c) => charPattern(c, literal)).join("");

/**
 * The letters of two or more that a needle's folded text holds the folding of ("strasse": ß
 * and ẞ as "ss"), each with it: a cell holding one is a match written out (SQLite's replace()).
 */
export function spelledIn(needle: string): Array<[letter: string, folded: string]> {
  const folded = foldedNeedle(needle);
  return [...lettersOf().spelled].flatMap(([f, cs]) => (folded.includes(f) ? cs.map((c): [string, string] => [c, f]) : []));
}

/**
 * The characters that a needle's folding may stand for in a cell but that no accent makes ("lodz":
 * ł and Ł, ƚ, ȴ…; "strasse": ß, ẞ…), as a class: MySQL's collation folds the others itself, so
 * only a cell holding one of these is asked the regular expression. Undefined when there are none.
 */
export function unmarkedIn(needle: string): string | undefined {
  const folded = foldedNeedle(needle);
  const chars = new Set(foldedChars(needle));
  const found = [...lettersOf().unmarked].flatMap(([f, cs]) => (chars.has(f) || (f.length > 1 && folded.includes(f)) ? cs : []));
  return found.length ? `[${found.join("")}]` : undefined;
}

/**
 * SQLite: a GLOB pattern matching a cell that holds the needle, folded: each letter any of its
 * forms (case and accents), the rest literally (GLOB's own characters as a class of one). SQLite's
 * GLOB reads a class's characters as UTF-8. A letter of two is matched in the cell written out
 * (spelledIn).
 */
export const foldedGlob = (needle: string): string =>
  `*${classes(foldedChars(needle), (c) => (c === "*" || c === "?" || c === "[" ? `[${c}]` : c))}*`;

/** Ways of writing a run of overlapping letters of two at most, each an alternative: a run of "s" has as many as Fibonacci. */
const MAX_SPELLINGS = 16;

/**
 * PostgreSQL and MySQL: a regular expression (for `~*`, REGEXP) of the needle, folded the same
 * way, any other character than a letter or digit escaped. A class costs its regex nothing per
 * character read (translate() of a cell by the forms of the needle's letters took over 5 s on 20
 * cells of 1 MB). Where the folded needle holds what a letter of two folds to ("ss"), either is
 * matched: each way of writing a run of such places that overlap ("sss": sss, ßs, sß) is an
 * alternative, at most MAX_SPELLINGS of them, else each place's first way alone.
 */
export function foldedRegex(needle: string): string {
  const literal = (c: string) => (/[\p{L}\p{N}]/u.test(c) ? c : `\\${c}`);
  const one = (c: string) => charPattern(c, literal);
  const chars = foldedChars(needle);
  // By character, the letters of two that may stand for it and those after it: their folding's length and class.
  const at = chars.map((_, i) =>
    [...lettersOf().spelled].flatMap(([f, cs]) => {
      const length = [...f].length;
      return chars.slice(i, i + length).join("") === f ? [{ length, letters: `[${cs.join("")}]` }] : [];
    }),
  );
  let pattern = "";
  for (let i = 0; i < chars.length; ) {
    if (at[i]!.length === 0) {
      pattern += one(chars[i++]!);
      continue;
    }
    // The run of places where a letter of two may stand, each reaching into the next.
    let end = i + 1;
    for (let j = i; j < end; j++) for (const { length } of at[j]!) end = Math.max(end, j + length);
    // Each way of writing chars[from..end), from the end back; undefined past MAX_SPELLINGS.
    const ways: Array<string[] | undefined> = [];
    ways[end] = [""];
    for (let from = end - 1; from >= i; from--) {
      let out = ways[from + 1]?.map((rest) => one(chars[from]!) + rest);
      for (const { length, letters } of at[from]!) {
        const rest = ways[from + length];
        out = out && rest ? [...out, ...rest.map((r) => letters + r)] : undefined;
      }
      ways[from] = out && out.length <= MAX_SPELLINGS ? out : undefined;
    }
    if (ways[i]) pattern += `(?:${ways[i]!.join("|")})`;
    else
      for (let j = i; j < end; ) {
        const first = at[j]![0];
        if (first && j + first.length <= end) {
          pattern += `(?:${chars
            .slice(j, j + first.length)
            .map(one)
            .join("")}|${first.letters})`;
          j += first.length;
        } else pattern += one(chars[j++]!);
      }
    i = end;
  }
  return pattern;
}
