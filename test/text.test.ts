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
