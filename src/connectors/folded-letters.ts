// Letters that no accent makes: "ł", "ø", "đ", "ß", "æ", "þ" have no decomposition, so NFKD
// leaves them whole and "Lodz" never met "Łódź" (issue 36). Each row is a lower-case letter
// (foldText lower-cases first, so its capital folds too) and how it is written without it, as
// Unicode CLDR's Latin-ASCII transliteration writes it (common/transforms/Latin-ASCII.xml): the
// letters of the Latin blocks a SQL source is asked with (sql/fold.ts) and the small letters of
// their capitals, a letter of two where the language writes two (ß ss, æ ae, œ oe, þ th). A
// letter NFKD already spells ("ĳ" ij, "ǆ" dz, "ŀ" l·) is not repeated here.

/** By lower-case letter, its folded form: one letter, or two where it stands for two. */
export const FOLDED_LETTERS: Readonly<Record<string, string>> = {
  // Latin-1 Supplement
  ß: "ss",
  æ: "ae",
  ð: "d",
  ø: "o",
  þ: "th",
  // Latin Extended-A
  đ: "d",
  ħ: "h",
  ı: "i",
  ĸ: "q",
  ł: "l",
  ŋ: "n",
  œ: "oe",
  ŧ: "t",
  // Latin Extended-B, and the small letters of its capitals (IPA Extensions, Latin Extended-C)
  ƀ: "b",
  ɓ: "b",
  ƃ: "b",
  ƈ: "c",
  ȼ: "c",
  ɖ: "d",
  ɗ: "d",
  ƌ: "d",
  ȡ: "d",
  ɛ: "e",
  ɇ: "e",
  ƒ: "f",
  ɠ: "g",
  ǥ: "g",
  ƕ: "hv",
  ɩ: "i",
  ɨ: "i",
  ɉ: "j",
  ȷ: "j",
  ƙ: "k",
  ƚ: "l",
  ȴ: "l",
  ɲ: "n",
  ƞ: "n",
  ȵ: "n",
  ƣ: "oi",
  ƥ: "p",
  ɍ: "r",
  ȿ: "s",
  ƫ: "t",
  ƭ: "t",
  ʈ: "t",
  ȶ: "t",
  ⱦ: "t",
  ʉ: "u",
  ʋ: "v",
  ƴ: "y",
  ɏ: "y",
  ƶ: "z",
  ȥ: "z",
  ɀ: "z",
  ⱥ: "a",
  // Latin Extended Additional (its capital ẞ lower-cases to ß)
  ỻ: "ll",
  ỽ: "v",
  ỿ: "y",
  // Greek: lower-casing writes a sigma "ς" or "σ" by what follows the letter, one letter either way.
  ς: "σ",
};
