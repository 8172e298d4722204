// Attack on "the dated rows are asked first, then the undated" (postgresRows): a table's search
// on PostgreSQL is now two statements whenever the dated rows found are fewer than the limit,
// which is every search with words that match few rows. The second statement is sent even when
// the question was abandoned during the first (its signal aborted: nothing reads PostgreSQL
// with it), and, on a table whose date column has no index, each statement reads the whole
// table: a search with words reads it twice (each under its own statement timeout) where one
// read did before. Each count below is PostgreSQL's own (EXPLAIN ANALYZE of the statements sent).
import { expect, setDefaultTimeout, test } from "bun:test";
import type { SqlConnector } from "../../src/connectors/sql/connector";
import { rowsReadBy, statementsOn } from "../support/pg-plans";
import { ordersTableOfFile } from "../support/pg-tables";

setDefaultTimeout(60_000);

const ROWS = 100_000;
const TABLE = "attack_two_reads";
// No index on the date column (the operator's table as it is); every tenth order undated.
const orders = ordersTableOfFile(TABLE, ROWS, { undatedEvery: 10, dateIndex: false });
const table = orders.mapping;

const sentBy = (read: (c: SqlConnector) => Promise<unknown>, onSent?: () => void) => statementsOn(orders.pg().pgUrl, table, read, onSent);

test("attack: on PostgreSQL, a question abandoned during a table's read sends no further statement for it", async () => {
  const abandoned = new AbortController();
  const sent = await sentBy(
    (c) => c.search({ terms: ["nowhere"], phrases: [], limit: 10, signal: abandoned.signal }),
    () => abandoned.abort(),
  );
  // Was 2: the undated rows were asked after the question was abandoned.
  expect(sent.length).toBe(1);
});

test("attack: on PostgreSQL, a search with words reads a table without a date index once, not twice", async () => {
  const sent = await sentBy((c) => c.search({ terms: ["nowhere"], phrases: [], limit: 10 }));
  const read = (await rowsReadBy(orders.pg().admin, TABLE, sent)).reduce((n, r) => n + r, 0);
  // Was 2 × 100,000: the dated rows' statement and the undated rows' statement each read every row.
  expect(read).toBeLessThanOrEqual(ROWS);
});
