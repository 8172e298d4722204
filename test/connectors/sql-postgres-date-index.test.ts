// Attack on "undated rows last in both dialects" (ORDER BY date DESC NULLS LAST, this session):
// a PostgreSQL btree index on the date column (ASC NULLS LAST, read backward: DESC NULLS FIRST)
// does not give that order, so every read ordered by it became a whole-table scan and sort. The
// newest rows embedded ahead, and a question limited to recent dates, read each of the table's
// rows to return a few; on a table of tens of millions of rows that is past the connector's 5 s
// statement timeout, tried again every minute a question asks. Before it, ORDER BY date DESC
// read the index backward and stopped at the limit. Each plan below is PostgreSQL's own
// (EXPLAIN ANALYZE of the very statement and parameters the connector sent).
import { expect, setDefaultTimeout, test } from "bun:test";
import type { SqlConnector } from "../../src/connectors/sql/connector";
import { rowsReadBy, statementsOn } from "../support/pg-plans";
import { ordersTableOfFile } from "../support/pg-tables";

setDefaultTimeout(60_000);

const ROWS = 200_000;
const TABLE = "attack_dated_index";
// The operator's index for "newest first": the ordinary one.
const orders = ordersTableOfFile(TABLE, ROWS, { dateIndex: true });
const table = orders.mapping;

/** The statements `read` sends, each with the rows PostgreSQL read from the table to answer it. */
const readsOf = async (read: (c: SqlConnector) => Promise<unknown>) =>
  rowsReadBy(orders.pg().admin, TABLE, await statementsOn(orders.pg().pgUrl, table, read));

test("attack: on PostgreSQL, the newest rows embedded ahead are read through the date column's index, not by reading every row", async () => {
  const reads = await readsOf((c) => c.newest(50));
  expect(reads.length).toBe(1);
  // Was [200000]: a parallel sequential scan of the whole table and a top-N sort (the index read
  // backward gives DESC NULLS FIRST, not the DESC NULLS LAST asked).
  expect(reads[0]).toBeLessThan(1_000);
});

test("attack: on PostgreSQL, a question limited to recent dates reads the index's recent rows, not the whole table", async () => {
  const reads = await readsOf((c) =>
    c.search({ terms: [], phrases: [], limit: 10, dateFrom: new Date("2020-03-01T00:00:00Z"), dateTo: new Date("2021-01-01T00:00:00Z") }),
  );
  expect(reads.length).toBe(1);
  // Was ~ the 200,000 rows (those in the range, read in full and sorted).
  expect(reads[0]).toBeLessThan(1_000);
});
