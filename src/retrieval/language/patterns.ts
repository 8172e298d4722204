// Small builders from the language tables' rows to patterns (D32): rows are plain words.

/** A word as a pattern: regex characters escaped, a space or hyphen inside it as any run of them ("sub-total", "sub total"). */
export const literal = (word: string) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/[\s-]+/g, "[\\s-]{0,2}");

/** Any of `words`, longest first (so "grand total" is tried before "total"), as a non-capturing group. */
export const anyOf = (words: readonly string[]) =>
  `(?:${[...new Set(words)]
    .sort((a, b) => b.length - a.length)
    .map(literal)
    .join("|")})`;

/** Any of `words` as whole words (no letter right before or after), for a `u` pattern. */
export const wholeWords = (words: readonly string[], plural = "") => `(?<![\\p{L}])${anyOf(words)}${plural}(?![\\p{L}])`;
