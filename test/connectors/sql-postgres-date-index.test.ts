// Attack on "undated rows last in both dialects" (ORDER BY date DESC NULLS LAST, this session):
// a PostgreSQL btree index on the date column (ASC NULLS LAST, read backward: DESC NULLS FIRST)
// does not give that order, so every read ordered by it became a whole-table scan and sort. The
// newest rows embedded ahead, and a question limited to recent dates, read each of the table's
// rows to return a few; on a table of tens of millions of rows that is past the connector's 5 s
// statement timeout, tried again every minute a question asks. Before it, ORDER BY date DESC
// read the index backward and stopped at the limit. Each plan below is PostgreSQL's own
// (EXPLAIN ANALYZE of the very statement and parameters the connector sent).
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { SqlConnector } from "../../src/connectors/sql/connector";
import { allowList, pinner } from "../../src/net/pin";
import { type ShopTable, shopTable } from "../support/pg-tables";

setDefaultTimeout(60_000);

const LOOPBACK = { pin: pinner(allowList("127.0.0.1")) };
const TABLE = "attack_dated_index";
const ROWS = 200_000;
const table = { name: TABLE, id: "id", title: "title", text: ["note"], date: "placed" };
let pg: ShopTable;

beforeAll(async () => {
  pg = await shopTable(TABLE, async (admin) => {
    await admin.unsafe(`CREATE TABLE ${TABLE} (id integer PRIMARY KEY, title text, note text, placed timestamp)`);
    await admin.unsafe(
      `INSERT INTO ${TABLE} SELECT g, 'order ' || g, 'placed', timestamp '2020-01-01' + g * interval '1 minute' FROM generate_series(1, ${ROWS}) g`,
    );
    // The operator's index for "newest first": the ordinary one.
    await admin.unsafe(`CREATE INDEX ${TABLE}_placed ON ${TABLE} (placed)`);
    await admin.unsafe(`ANALYZE ${TABLE}`);
  });
});

afterAll(() => pg.drop());

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  Plans?: PlanNode[];
}

/** Rows the plan read from the table (every scan node on it, over its loops). */
function rowsRead(node: PlanNode): number {
  const own = node["Relation Name"] === TABLE ? node["Actual Rows"] * node["Actual Loops"] : 0;
  return own + (node.Plans ?? []).reduce((n, p) => n + rowsRead(p), 0);
}

/** The statements `read` sends, each with the rows PostgreSQL read from the table to answer it. */
async function readsOf(read: (c: SqlConnector) => Promise<unknown>): Promise<number[]> {
  const c = new SqlConnector({ url: pg.pgUrl, tables: [table] }, undefined, LOOPBACK);
  const sent: Array<{ sql: string; params: unknown[] }> = [];
  try {
    // The connector's own driver, each statement noted as it goes.
    const driver = await (c as unknown as { open(): Promise<{ select(sql: string, params: unknown[]): Promise<unknown[]> }> }).open();
    const select = driver.select.bind(driver);
    driver.select = (sql, params) => {
      if (sql.includes(`FROM "${TABLE}"`)) sent.push({ sql, params });
      return select(sql, params);
    };
    await read(c);
  } finally {
    await c.close();
  }
  const out: number[] = [];
  for (const s of sent) {
    const [row] = await pg.admin.unsafe(`EXPLAIN (ANALYZE, FORMAT JSON) ${s.sql}`, s.params as never[]);
    const plan = (row as unknown as { "QUERY PLAN": Array<{ Plan: PlanNode }> })["QUERY PLAN"][0]!.Plan;
    out.push(rowsRead(plan));
  }
  return out;
}

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
