// Attack on "the dated rows are asked first, then the undated" (postgresRows): a table's search
// on PostgreSQL is now two statements whenever the dated rows found are fewer than the limit,
// which is every search with words that match few rows. The second statement is sent even when
// the question was abandoned during the first (its signal aborted: nothing reads PostgreSQL
// with it), and, on a table whose date column has no index, each statement reads the whole
// table: a search with words reads it twice (each under its own statement timeout) where one
// read did before. Each count below is PostgreSQL's own (EXPLAIN ANALYZE of the statements sent).
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { SqlConnector } from "../../src/connectors/sql/connector";
import { allowList, pinner } from "../../src/net/pin";
import { type ShopTable, shopTable } from "../support/pg-tables";

setDefaultTimeout(60_000);

const LOOPBACK = { pin: pinner(allowList("127.0.0.1")) };
const TABLE = "attack_two_reads";
const ROWS = 100_000;
const table = { name: TABLE, id: "id", title: "title", text: ["note"], date: "placed" };
let pg: ShopTable;

beforeAll(async () => {
  pg = await shopTable(TABLE, async (admin) => {
    // No index on the date column (the operator's table as it is).
    await admin.unsafe(`CREATE TABLE ${TABLE} (id integer PRIMARY KEY, title text, note text, placed timestamp)`);
    await admin.unsafe(
      `INSERT INTO ${TABLE} SELECT g, 'order ' || g, 'placed', CASE WHEN g % 10 = 0 THEN NULL ELSE timestamp '2020-01-01' + g * interval '1 minute' END FROM generate_series(1, ${ROWS}) g`,
    );
    await admin.unsafe(`ANALYZE ${TABLE}`);
  });
});

afterAll(() => pg.drop());

interface PlanNode {
  "Relation Name"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}

/** Rows the plan read from the table (kept and filtered out, over its loops). */
function rowsRead(node: PlanNode): number {
  const own = node["Relation Name"] === TABLE ? (node["Actual Rows"] + (node["Rows Removed by Filter"] ?? 0)) * node["Actual Loops"] : 0;
  return own + (node.Plans ?? []).reduce((n, p) => n + rowsRead(p), 0);
}

/** The statements `read` sends on the table; `onSent` is called as each one is answered. */
async function sentBy(read: (c: SqlConnector) => Promise<unknown>, onSent: () => void = () => {}) {
  const c = new SqlConnector({ url: pg.pgUrl, tables: [table] }, undefined, LOOPBACK);
  const sent: Array<{ sql: string; params: unknown[] }> = [];
  try {
    const driver = await (c as unknown as { open(): Promise<{ select(sql: string, params: unknown[]): Promise<unknown[]> }> }).open();
    const select = driver.select.bind(driver);
    driver.select = async (sql, params) => {
      const rows = await select(sql, params);
      if (sql.includes(`FROM "${TABLE}"`)) {
        sent.push({ sql, params });
        onSent();
      }
      return rows;
    };
    await read(c);
  } finally {
    await c.close();
  }
  return sent;
}

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
  let read = 0;
  for (const s of sent) {
    const [row] = await pg.admin.unsafe(`EXPLAIN (ANALYZE, FORMAT JSON) ${s.sql}`, s.params as never[]);
    read += rowsRead((row as unknown as { "QUERY PLAN": Array<{ Plan: PlanNode }> })["QUERY PLAN"][0]!.Plan);
  }
  // Was 2 × 100,000: the dated rows' statement and the undated rows' statement each read every row.
  expect(read).toBeLessThanOrEqual(ROWS);
});
