// Cutting text for display: at a grapheme's edge, so that a cut never leaves half an emoji (a
// lone surrogate, which strict JSON and UTF-8 encoders refuse) or a letter without its accent.

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Written inside words without being part of them (pasted from web pages and PDFs): soft hyphen, zero-width space, word joiner, BOM. */
export const INVISIBLE = /[\u00AD\u200B\u2060\uFEFF]/g;

/** `text` if it is at most `max` UTF-16 units long, else its longest head of whole graphemes that fits with the ellipsis. */
export function cutText(text: string, max: number, ellipsis = "..."): string {
  if (text.length <= max) return text;
  const room = max - ellipsis.length;
  let end = 0;
  // Segmented from the text's start (a window that began inside a grapheme, a long one or a run
  // of flags, cut it wrongly), up to the whole code point after the cut: whether the text may
  // break there depends on it (a skin tone, an emoji after a joiner).
  for (const { index, segment } of graphemes.segment(text.slice(0, room + 2))) {
    if (index + segment.length > room) break;
    end = index + segment.length;
  }
  return `${text.slice(0, end)}${ellipsis}`;
}

/**
 * A copy of `s` that keeps nothing else alive. A string cut from another (split, slice, match)
 * holds the whole of the one it was cut from: a word remembered from a mail kept that mail's
 * text (the Enron maildir's 30,530 words remembered held 18.7 MB). Parsing makes a new string.
 */
export const ownCopy = (s: string): string => JSON.parse(JSON.stringify(s)) as string;
