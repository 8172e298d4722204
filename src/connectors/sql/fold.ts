// A question's word is asked of a live SQL source as the local index compares words (foldText:
// lower case, without accents), on both sides: "Zurich" finds "Zürich", "wojcik" "Wójcik", and
// "ZÜRICH" or "Émile" are found whatever the case of the stored text. Each engine compares in
// its own way, built from the one folding table below (never the `unaccent` extension, which an
// operator's PostgreSQL may not have):
//   SQLite      GLOB with a class of a letter's forms ("[uUùúûüÙÚÛÜ…]"): its LIKE folds ASCII only
//   PostgreSQL  a regular expression with the same classes (`~*`)
//   MySQL       the accent- and case-insensitive collation utf8mb4_unicode_ci
import { foldText } from "../index-terms";

/**
 * The blocks whose letters carry accents or case that people leave out or type differently:
 * Latin (with its supplements and extensions), Greek, Cyrillic. A letter outside them is
 * compared as it is (a Chinese character has neither).
 */
const FOLDED_BLOCKS: Array<[number, number]> = [
  [0x41, 0x5a],
  [0x61, 0x7a],
  [0xc0, 0x24f],
  [0x370, 0x3ff],
  [0x400, 0x52f],
  [0x1e00, 0x1fff],
];

let formsOf: Map<string, string[]> | undefined;

/** Each folded letter's forms: every character of FOLDED_BLOCKS that foldText folds to it alone (itself first). */
function letterForms(): Map<string, string[]> {
  if (formsOf) return formsOf;
  formsOf = new Map();
  for (const [low, high] of FOLDED_BLOCKS)
    for (let code = low; code <= high; code++) {
      const c = String.fromCharCode(code);
      const folded = foldText(c);
      // "ß" is "ss": a letter of two is not one form of another (the needle keeps it as asked).
      if (folded.length !== 1 || folded === c) continue;
      const forms = formsOf.get(folded) ?? formsOf.set(folded, [folded]).get(folded)!;
      forms.push(c);
    }
  return formsOf;
}

/** The needle's characters as compared: each folded where it folds to one letter, else as asked ("straße" stays). */
function foldedChars(needle: string): string[] {
  return [...needle].map((c) => {
    const f = foldText(c);
    return [...f].length === 1 ? f : c;
  });
}

/** The needle folded as the index folds it, character by character (foldedChars). */
export const foldedNeedle = (needle: string): string => foldedChars(needle).join("");

/** The forms of one folded character: its class of letters, or itself. */
const formsOfChar = (c: string): string[] => letterForms().get(c) ?? [c];

/** The needle as a pattern: each folded letter a class of its forms (`[uUùúûü…]`), any other character as `literal` writes it. */
function classes(needle: string, literal: (c: string) => string): string {
  return foldedChars(needle)
    .map((c) => {
      const forms = formsOfChar(c);
      return forms.length > 1 ? `[${forms.join("")}]` : literal(c);
    })
    .join("");
}

/**
 * SQLite: a GLOB pattern matching a cell that holds the needle, folded: each letter any of its
 * forms (case and accents), the rest literally (GLOB's own characters as a class of one). SQLite's
 * GLOB reads a class's characters as UTF-8.
 */
export const foldedGlob = (needle: string): string => `*${classes(needle, (c) => (c === "*" || c === "?" || c === "[" ? `[${c}]` : c))}*`;

/**
 * PostgreSQL: a regular expression (for `~*`) of the needle, folded the same way, any other
 * character than a letter or digit escaped. A class costs its regex nothing per character read
 * (translate() of a cell by the forms of the needle's letters took over 5 s on 20 cells of 1 MB).
 */
export const foldedRegex = (needle: string): string => classes(needle, (c) => (/[\p{L}\p{N}]/u.test(c) ? c : `\\${c}`));
