// Attack: a mail crafted by anyone who can write to the user (a long line of '<' and '@', or of
// letters with no comma or line break) makes the regular expressions that find quoting and
// boilerplate backtrack quadratically: QUOTE_START (cite.ts) runs on every cited mail's whole
// content, BOILERPLATE (answer.ts) on every sentence of shape C's sources. They run on the thread
// that serves every user: a 120 KB mail held each question ~2 s end to end (quadratic: a 1 MB
// mail, minutes).
import { expect, test } from "bun:test";
import type { SourceRecord } from "../../src/connectors/types";
import { cite } from "../../src/retrieval/cite";
import type { RankedChunk } from "../../src/retrieval/types";
import { howItGrows } from "../support/growth";

const mail = (content: string): SourceRecord => ({
  id: "1",
  title: "Harbour invoice",
  content,
  source_url: "imap://x/INBOX;UID=1",
  date: null,
  type: "email",
  path: "INBOX/1",
  metadata: { from: "mallory@example.com" },
});

test("citing a mail with a long line of '<' and '@' takes linear time", async () => {
  const citeLineOf = (n: number) => {
    const content = `Your harbour invoice is attached, please pay it by Friday.\nx<${"@".repeat(n)}\n`;
    const chunk = {
      record: mail(content),
      chunkIndex: 0,
      chunks: ["Your harbour invoice is attached", content.slice(60)],
    } as unknown as RankedChunk;
    cite([chunk], ["harbour", "invoice"], () => []);
  };
  expect(await howItGrows(citeLineOf, 15_000)).toBe("linear");
});
