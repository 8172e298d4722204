// Issue 35: HTML nested beyond MAX_HTML_DEPTH is skipped after one pass (html-to-text walked 8 MB
// of it for 6 s and 600 MB, then overflowed its stack); a mail's HTML past MAX_MAIL_HTML_CHARS has
// its tags dropped rather than being made into text (24 MB took mailparser ~45 s and 2.6 GB).
import { describe, expect, test } from "bun:test";
import { extractText, nestsDeeperThan } from "../../src/connectors/files/extract";
import { FileSkipped, MAX_HTML_DEPTH } from "../../src/connectors/files/limits";
import { MAX_MAIL_HTML_CHARS, parseMessage } from "../../src/connectors/maildir/message";
import { htmlMail } from "../support/hostile-sources";

const nested = (n: number) => `<html><body>${"<div>".repeat(n)}deep${"</div>".repeat(n)}</body></html>`;

describe("nesting", () => {
  test("counted as the parser builds it: closed elements, void and implied-end ones and comments do not nest", () => {
    expect(nestsDeeperThan(nested(MAX_HTML_DEPTH - 2), MAX_HTML_DEPTH)).toBe(false);
    expect(nestsDeeperThan(nested(MAX_HTML_DEPTH), MAX_HTML_DEPTH)).toBe(true);
    expect(nestsDeeperThan(`<table>${"<tr><td>x".repeat(50_000)}</table>`, MAX_HTML_DEPTH)).toBe(false);
    expect(nestsDeeperThan(`${"<p>a<br><img src=x>".repeat(50_000)}`, MAX_HTML_DEPTH)).toBe(false);
    expect(nestsDeeperThan(`<!-- ${"<b>".repeat(5_000)} -->${"<i>x</i>".repeat(5_000)}`, MAX_HTML_DEPTH)).toBe(false);
    // An end tag closes down to its element: unclosed ones inside it go too.
    expect(nestsDeeperThan(`${"<div><span><b>x</div>".repeat(5_000)}`, MAX_HTML_DEPTH)).toBe(false);
  });

  test("a file of 8 MB of nested tags is skipped with the reason; ordinary HTML is read", async () => {
    const bytes = new TextEncoder().encode(`<html><body>${"<b>".repeat(2_700_000)}deep</body></html>`);
    const skipped = await extractText(bytes, "html").catch((e: unknown) => e);
    expect(skipped).toBeInstanceOf(FileSkipped);
    expect((skipped as Error).message).toBe(`nests elements deeper than ${MAX_HTML_DEPTH} levels`);
    expect((await extractText(new TextEncoder().encode(nested(50)), "html")).text).toBe("deep");
  });
});

describe("a mail of much HTML", () => {
  test("past MAX_MAIL_HTML_CHARS its text is the HTML without tags, not mailparser's conversion; below, mailparser's", async () => {
    const huge = htmlMail(3, "huge");
    expect(huge.length).toBeGreaterThan(MAX_MAIL_HTML_CHARS);
    const r = await parseMessage(Buffer.from(huge), "1", "1", "file:///1");
    expect(r.title).toBe("huge");
    expect(r.content.startsWith("word")).toBe(true);
    expect(r.content).not.toContain("<p>");
    const small = await parseMessage(Buffer.from(htmlMail(0.01, "small")), "2", "2", "file:///2");
    expect(small.content.startsWith("word")).toBe(true);
    expect(small.content).not.toContain("<p>");
  });
});
