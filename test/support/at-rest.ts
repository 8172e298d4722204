// The byte scan of what an attacker copies (D25): files of a data folder, or a pg_dump of the
// shared database (D33), searched byte by byte for words, names and paths, case-insensitively.

/** Made-up words, and the first six letters of each: what a scan looks for where a record's words were. */
export const needlesOf = (words: string[]) => [...words, ...words.map((w) => w.slice(0, 6))];

/** "<name>: <needle>" for each needle found in any of `copies` (read as Latin-1, so any byte sequence is text). */
export function spelledIn(copies: Array<{ name: string; bytes: Uint8Array }>, needles: string[]): string[] {
  const found: string[] = [];
  for (const c of copies) {
    const text = Buffer.from(c.bytes).toString("latin1").toLowerCase();
    for (const n of needles) if (text.includes(n.toLowerCase())) found.push(`${c.name}: ${n}`);
  }
  return found;
}
