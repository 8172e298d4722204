// D31 (issue 35): a source's bytes are parsed in the reading worker, never on the thread that
// serves requests, and each record has a budget of CPU time: past it, the worker is ended, the
// record skipped with its reason, and the next job gets a fresh worker. Budgets here are small
// so that the tests are quick; the inputs take several times theirs.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SourceReader, SourceUnreadable, tookTooLong } from "../../src/connectors/reading/reader";
import { SourceSkipped } from "../../src/connectors/types";

setDefaultTimeout(60_000);

const encode = (s: string) => new TextEncoder().encode(s);
/** A CSV whose one line is 600,000 columns: ~3-6 s of csv-parse (measured), all of it on one line. */
const wideCsv = () => encode("x,".repeat(600_000));
/** A mail of `kb` KB of HTML: mailparser turns it into text, ~0.1-0.3 s for 200 KB. */
const htmlMail = (kb: number, subject: string) =>
  `From: a@example.com\nTo: b@example.com\nSubject: ${subject}\nContent-Type: text/html\n\n${"<p>word ".repeat(kb * 128)}\n`;

/** Runs `work` while a 10 ms timer ticks on this thread: the longest gap between ticks, and how long it all took. */
async function timed<T>(work: () => Promise<T>): Promise<{ value: T | Error; longestGapMs: number; tookMs: number }> {
  let last = performance.now();
  let longestGapMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longestGapMs = Math.max(longestGapMs, now - last);
    last = now;
  }, 10);
  const started = performance.now();
  const value = await work().catch((e: Error) => e);
  clearInterval(timer);
  return { value, longestGapMs, tookMs: performance.now() - started };
}

const readers: SourceReader[] = [];
const reader = (budgetMs: number) => {
  const r = new SourceReader({ budgetMs });
  readers.push(r);
  return r;
};
afterAll(() => {
  for (const r of readers) r.close();
});

describe("the reading worker", () => {
  test("a record over its budget is skipped with the reason, this thread kept serving meanwhile, and the next record is read by a fresh worker", async () => {
    const r = reader(500);
    const { value, longestGapMs, tookMs } = await timed(() => r.file(wideCsv(), "csv"));
    expect(value).toBeInstanceOf(SourceSkipped);
    expect((value as Error).message).toBe(tookTooLong(500));
    expect(r.restarts).toBe(1);
    // Parsed here, the line held this thread for all of it; the worker leaves it free (a ratio:
    // the machine may be busy).
    expect(longestGapMs).toBeLessThan(tookMs / 2);
    expect(await r.file(encode("The offsite is in Lisbon."), "text")).toEqual({ text: "The offsite is in Lisbon." });
  });

  test("broken data is SourceUnreadable; a bound is SourceSkipped with its reason; neither ends the worker", async () => {
    const r = reader(5_000);
    await expect(r.file(encode("%PDF-1.4 not really"), "pdf")).rejects.toBeInstanceOf(SourceUnreadable);
    await expect(r.file(encode(`[${"{},".repeat(1_000_001)}0]`), "json")).rejects.toThrow("holds more than 2000000 values");
    expect(r.restarts).toBe(0);
    expect((await r.file(encode("# Plan\n\nPorto."), "markdown")).title).toBe("Plan");
  });

  test("each message of an mbox has a budget of its own: a mailbox taking several budgets in all is read whole", async () => {
    const r = reader(800);
    const messages = Array.from({ length: 12 }, (_, i) => `From a@example.com Mon Jan  1 00:00:00 2024\n${htmlMail(200, `part ${i}`)}`);
    const started = performance.now();
    const records = await r.mail(encode(messages.join("")), { id: "box.mbox", url: "file:///box.mbox", mbox: true });
    expect(records.map((m) => m.title)).toEqual(messages.map((_, i) => `part ${i}`));
    expect(records[3]!.id).toBe("box.mbox#4");
    expect(r.restarts).toBe(0);
    console.log(`12 messages of 200 KB: ${(performance.now() - started).toFixed(0)} ms (a budget: 800 ms of CPU each)`);
  });

  test("a whole file has a budget too: an mbox of many messages, each within its own, is skipped past JOB_BUDGETS of them", async () => {
    const r = new SourceReader({ budgetMs: 800, jobBudgets: 2 });
    readers.push(r);
    // 40 messages of 200 KB: each ~0.1-0.3 s (under 800 ms), all together several times 1.6 s.
    const messages = Array.from({ length: 40 }, (_, i) => `From a@example.com Mon Jan  1 00:00:00 2024\n${htmlMail(200, `part ${i}`)}`);
    const read = await r.mail(encode(messages.join("")), { id: "big.mbox", url: "file:///big.mbox", mbox: true }).catch((e: Error) => e);
    expect(read).toBeInstanceOf(SourceSkipped);
    expect((read as Error).message).toBe(tookTooLong(1_600));
    expect(r.restarts).toBe(1);
    // The next job is read by a fresh worker.
    expect(await r.file(encode("The offsite is in Porto."), "text")).toEqual({ text: "The offsite is in Porto." });
  });

  test("a question's message is read before the folder's files waiting in line", async () => {
    const r = reader(5_000);
    const order: string[] = [];
    const files = [1, 2, 3].map((i) => r.file(encode(`a,b\n${"1,2\n".repeat(50_000)}`), "csv").then(() => order.push(`file ${i}`)));
    const question = r
      .mail(encode(htmlMail(1, "asked")), { id: "INBOX/1", url: "imap://x/INBOX;UID=1", mbox: false }, { urgent: true })
      .then(() => order.push("question"));
    await Promise.all([...files, question]);
    // The first file was under way when the question came; the question went before the others.
    expect(order).toEqual(["file 1", "question", "file 2", "file 3"]);
  });
});
