// A source read live (SQL) has its newest records embedded ahead, a page at a time, so that the
// first question ranks them by meaning too (src/connectors/embed-ahead.ts).
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { AHEAD_PAGE, AHEAD_RECORDS, embedAhead } from "../../src/connectors/embed-ahead";
import type { PhaseProgress } from "../../src/connectors/progress";
import type { Connector, SourceRecord } from "../../src/connectors/types";
import { createLogger } from "../../src/log";
import { tempDir } from "../helpers";

const log = createLogger("ERROR", () => {});
/** What every run is given besides its embedding: where its progress goes, a clock, a log. */
const quiet = { started: () => {}, now: () => 0, log };
const record = (i: number): SourceRecord => ({
  id: `t/${i}`,
  title: `row ${i}`,
  content: `text of row ${i}`,
  source_url: `file:///db#t/${i}`,
  date: null,
  type: "file",
  path: `t/${i}`,
  metadata: {},
});
const liveSource = (records: SourceRecord[] | Error, asked: number[] = []): Connector => ({
  kind: "sql",
  health: async () => ({ status: "ok" }),
  search: async () => [],
  newest: async (limit) => {
    asked.push(limit);
    if (records instanceof Error) throw records;
    return records;
  },
  close: async () => {},
});

describe("embedAhead", () => {
  test("asks for the newest AHEAD_RECORDS and embeds every record's texts, a page at a time, in order", async () => {
    const asked: number[] = [];
    const pages: string[][] = [];
    const records = Array.from({ length: AHEAD_PAGE * 2 + 5 }, (_, i) => record(i));
    const expected = records.map((r) => `${r.title}\n${r.content}`);
    const done = await embedAhead(liveSource(records, asked), {
      embed: async (texts) => pages.push(texts),
      chunks: async (page) => page.map((r) => [`${r.title}\n${r.content}`]),
      live: () => true,
      ...quiet,
    });
    expect(done).toBe(true);
    expect(asked).toEqual([AHEAD_RECORDS]);
    expect(pages.map((p) => p.length)).toEqual([AHEAD_PAGE, AHEAD_PAGE, 5]);
    expect(pages.flat()).toEqual(expected);
    // Each page's records let go once embedded: nothing of the source is held after.
    expect(records.length).toBe(0);
  });

  test("stops between pages once the connector is no longer live (closed, removed, changed)", async () => {
    const pages: string[][] = [];
    let live = true;
    await embedAhead(liveSource(Array.from({ length: AHEAD_PAGE * 3 }, (_, i) => record(i))), {
      embed: async (texts) => {
        pages.push(texts);
        live = false;
      },
      chunks: async (page) => page.map((r) => [r.content]),
      live: () => live,
      ...quiet,
    });
    expect(pages.length).toBe(1);
  });

  test("a source that fails to answer, or an embedding refused (closing), ends it quietly", async () => {
    const pages: string[][] = [];
    const ahead = {
      embed: async (t: string[]) => pages.push(t),
      chunks: async (page: SourceRecord[]) => page.map((r) => [r.content]),
      live: () => true,
      ...quiet,
    };
    expect(await embedAhead(liveSource(new Error("database gone")), ahead)).toBe(false);
    expect(pages).toEqual([]);
    let calls = 0;
    const refused = embedAhead(liveSource(Array.from({ length: AHEAD_PAGE * 2 }, (_, i) => record(i))), {
      ...ahead,
      embed: async () => {
        calls++;
        throw new Error("closing");
      },
    });
    expect(await refused).toBe(false);
    expect(calls).toBe(1);
  });

  test("its progress, in records, is handed over once they are read and follows each page, with a rate on the injected clock", async () => {
    let at = 0;
    const seen: Array<{ done: number; total: number; rate: number | null }> = [];
    let progress: PhaseProgress | undefined;
    const done = await embedAhead(liveSource(Array.from({ length: AHEAD_PAGE * 2 + 5 }, (_, i) => record(i))), {
      embed: async () => {
        at += 1000;
      },
      chunks: async (page) => page.map((r) => [r.content]),
      live: () => true,
      started: (p) => {
        progress = p;
        const v = p.view();
        seen.push({ done: v.done, total: v.total, rate: v.rate_per_second });
      },
      now: () => at,
      log,
    });
    expect(done).toBe(true);
    expect(seen).toEqual([{ done: 0, total: AHEAD_PAGE * 2 + 5, rate: null }]);
    const last = progress!.view();
    expect([last.phase, last.unit, last.done, last.total, last.eta_seconds]).toEqual([
      "embedding",
      "records",
      AHEAD_PAGE * 2 + 5,
      AHEAD_PAGE * 2 + 5,
      0,
    ]);
    expect(last.rate_per_second).toBe(Math.round(((AHEAD_PAGE * 2 + 5) / 3) * 10) / 10);
  });

  test("nothing to embed: no progress is handed over", async () => {
    let started = 0;
    expect(
      await embedAhead(liveSource([]), {
        embed: async () => {},
        chunks: async () => [],
        live: () => true,
        ...quiet,
        started: () => started++,
      }),
    ).toBe(true);
    expect(started).toBe(0);
  });
});

test("an SQL connector's newest rows are those of at most NEWEST_ROW_BYTES bytes in all their cells: what is read at once stays bounded", async () => {
  const { Database } = await import("bun:sqlite");
  const { SqlConnector, NEWEST_ROW_BYTES } = await import("../../src/connectors/sql/connector");
  const file = join(tempDir("corpus-newest-"), "notes.sqlite");
  const db = new Database(file);
  db.exec("CREATE TABLE note (id INTEGER PRIMARY KEY, title TEXT, body TEXT, extra TEXT)");
  const put = db.query("INSERT INTO note VALUES (?, ?, ?, ?)");
  put.run(1, "short", "a short note", null);
  put.run(2, "long", "x".repeat(NEWEST_ROW_BYTES), null);
  // Every cell counts, the id's too: "3", "exactly" and the text make the bound exactly.
  put.run(3, "exactly", "y".repeat(NEWEST_ROW_BYTES - "exactly".length - 1), null);
  put.run(4, "two cells", "z".repeat(NEWEST_ROW_BYTES / 2), "w".repeat(NEWEST_ROW_BYTES / 2));
  db.close();
  const notes = new SqlConnector({ url: file, tables: [{ name: "note", id: "id", title: "title", text: ["body", "extra"] }] });
  try {
    expect((await notes.newest(AHEAD_RECORDS)).map((r) => r.id)).toEqual(["note/3", "note/1"]);
    // A question still finds the long ones: the bound is embedding ahead's, not the search's.
    expect((await notes.search({ terms: ["long"], phrases: [], limit: 10 })).map((r) => r.id)).toEqual(["note/2"]);
  } finally {
    await notes.close();
  }
});

test("an SQL connector's newest rows: about AHEAD_RECORDS in all, shared among its tables, newest first", async () => {
  const { SqlConnector } = await import("../../src/connectors/sql/connector");
  const { CHINOOK_SQLITE, chinookCustomers, chinookInvoices } = await import("../support/chinook");
  const shop = new SqlConnector({ url: CHINOOK_SQLITE, tables: [chinookInvoices(), chinookCustomers()] });
  try {
    const rows = await shop.newest(100);
    expect(rows.filter((r) => r.id.startsWith("Invoice/")).length).toBe(50);
    expect(rows.filter((r) => r.id.startsWith("Customer/")).length).toBe(50);
    const dates = rows.filter((r) => r.id.startsWith("Invoice/")).map((r) => r.date!);
    expect(dates).toEqual([...dates].sort().reverse());
  } finally {
    await shop.close();
  }
});
