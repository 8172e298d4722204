// Cutting text for display: at a grapheme's edge, so that a cut never leaves half an emoji (a
// lone surrogate, which strict JSON and UTF-8 encoders refuse) or a letter without its accent.

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** `text` if it is at most `max` UTF-16 units long, else its longest head of whole graphemes that fits with the ellipsis. */
export function cutText(text: string, max: number, ellipsis = "..."): string {
  if (text.length <= max) return text;
  const room = max - ellipsis.length;
  let end = 0;
  // Only the graphemes around the cut need segmenting: one is at most a few dozen units.
  const from = Math.max(0, room - 64);
  for (const { index, segment } of graphemes.segment(text.slice(from, room + 64))) {
    if (from + index + segment.length > room) break;
    end = from + index + segment.length;
  }
  return `${text.slice(0, end)}${ellipsis}`;
}
