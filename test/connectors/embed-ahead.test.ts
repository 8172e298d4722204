// A source read live (SQL) has its newest records embedded ahead, a page at a time, so that the
// first question ranks them by meaning too (src/connectors/embed-ahead.ts).
import { describe, expect, test } from "bun:test";
import { AHEAD_PAGE, AHEAD_RECORDS, embedAhead } from "../../src/connectors/embed-ahead";
import type { Connector, SourceRecord } from "../../src/connectors/types";
import { createLogger } from "../../src/log";

const log = createLogger("ERROR", () => {});
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
    await embedAhead(liveSource(records, asked), {
      embed: async (texts) => pages.push(texts),
      chunker: (r) => [`${r.title}\n${r.content}`],
      live: () => true,
      log,
    });
    expect(asked).toEqual([AHEAD_RECORDS]);
    expect(pages.map((p) => p.length)).toEqual([AHEAD_PAGE, AHEAD_PAGE, 5]);
    expect(pages.flat()).toEqual(records.map((r) => `${r.title}\n${r.content}`));
  });

  test("stops between pages once the connector is no longer live (closed, removed, changed)", async () => {
    const pages: string[][] = [];
    let live = true;
    await embedAhead(liveSource(Array.from({ length: AHEAD_PAGE * 3 }, (_, i) => record(i))), {
      embed: async (texts) => {
        pages.push(texts);
        live = false;
      },
      chunker: (r) => [r.content],
      live: () => live,
      log,
    });
    expect(pages.length).toBe(1);
  });

  test("a source that fails to answer, or an embedding refused (closing), ends it quietly", async () => {
    const pages: string[][] = [];
    const ahead = { embed: async (t: string[]) => pages.push(t), chunker: (r: SourceRecord) => [r.content], live: () => true, log };
    await embedAhead(liveSource(new Error("database gone")), ahead);
    expect(pages).toEqual([]);
    let calls = 0;
    await embedAhead(liveSource(Array.from({ length: AHEAD_PAGE * 2 }, (_, i) => record(i))), {
      ...ahead,
      embed: async () => {
        calls++;
        throw new Error("closing");
      },
    });
    expect(calls).toBe(1);
  });
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
