// Cutting text for display (src/text.ts).
import { expect, test } from "bun:test";
import { cutText } from "../src/text";

test("a text that fits is kept; a longer one is cut with the ellipsis within the limit", () => {
  expect(cutText("harbour", 7)).toBe("harbour");
  expect(cutText("harbour audit", 10)).toBe("harbour...");
});

test("never half an emoji, a flag or a letter without its accent", () => {
  const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
  for (const tail of ["😀😀😀", "🇵🇱🇵🇱", "👩‍👩‍👧 x", "e\u0301e\u0301e\u0301"]) {
    for (let pad = 0; pad < 6; pad++) {
      const text = `${"a".repeat(pad)}${tail.repeat(4)}`;
      const cut = cutText(text, 10);
      expect(cut.length).toBeLessThanOrEqual(10);
      expect(loneSurrogate.test(cut)).toBe(false);
      expect(text.startsWith(cut.slice(0, -3))).toBe(true);
      // What is kept ends where a grapheme ends: the next one starts right after it.
      const kept = cut.slice(0, -3);
      const [first] = new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(text.slice(kept.length));
      expect(first?.index).toBe(0);
      expect(kept.normalize("NFC")).not.toMatch(/\u0301$/);
      if (tail.startsWith("e")) expect(kept.endsWith("e")).toBe(false);
    }
  }
});

// attack3: the cut segments only a window of 64 units either side of the cut, from `room - 64`.
// When that window starts inside a grapheme, the window's graphemes are not the text's.
test("a grapheme longer than the window, just before the cut, does not cost the text before it", () => {
  // 520 letters, then one letter with 150 combining marks (Zalgo text, or a crafted mail) over
  // the cut at 597: the window's first grapheme runs past the cut, `end` stays 0 and the snippet
  // is '...' alone; the 520 letters before it fit. (The old cut sent 597 units of text.)
  const text = `${"a".repeat(520)}e${"\u0301".repeat(150)}${"b".repeat(100)}`;
  const cut = cutText(text, 600);
  expect(cut).toBe(`${"a".repeat(520)}...`);
});

test("a run of flags over the cut is not cut through a flag", () => {
  // 200 flags (4 units each): the window starts at 533, inside a regional indicator, and pairs
  // the indicators of two flags: the snippet ends with half a flag ('🇵' alone, shown as a letter).
  const text = "🇵🇱".repeat(200);
  for (const max of [600, 500]) {
    const kept = cutText(text, max).slice(0, -3);
    expect([max, kept.length % 4]).toEqual([max, 0]);
  }
});

test("an emoji joined or toned across the cut is kept whole or left out whole", () => {
  for (const emoji of ["👩\u200D💻", "👍🏽", "👩🏾\u200D🤝\u200D👨🏻"]) {
    for (let pad = 0; pad < 12; pad++) {
      const text = `${"a".repeat(pad)}${emoji.repeat(6)}`;
      const kept = cutText(text, 20).slice(0, -3);
      const rest = text.slice(kept.length);
      expect([emoji, pad, rest.startsWith(emoji)]).toEqual([emoji, pad, true]);
    }
  }
});
