// Attack on "PostgreSQL's undated rows are asked apart" (postgresRows): a "most" question
// (an order by a quantity column) is read with the one query and the table's own order, whose
// date tie-break is now `date DESC` with no NULLS LAST. On PostgreSQL a descending order puts
// NULLs first, so among rows tied on the quantity the undated ones come before the newest dated
// ones (SQLite, and PostgreSQL before this change, put them last): with a limit, the newest
// dated rows are cut.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { SqlConnector } from "../../src/connectors/sql/connector";
import { ORDERED_BY } from "../../src/connectors/types";
import { allowList, pinner } from "../../src/net/pin";
import { type ShopTable, shopTable } from "../support/pg-tables";

setDefaultTimeout(60_000);

const LOOPBACK = { pin: pinner(allowList("127.0.0.1")) };
const TABLE = "attack_most_undated";
const table = { name: TABLE, id: "id", title: "title", text: ["note", "items"], date: "placed" };
let pg: ShopTable;

beforeAll(async () => {
  pg = await shopTable(TABLE, async (admin) => {
    await admin.unsafe(`CREATE TABLE ${TABLE} (id integer PRIMARY KEY, title text, note text, items integer, placed timestamp)`);
    // Four orders of 5 items each: two dated (1, 2), two undated (3, 4).
    await admin.unsafe(
      `INSERT INTO ${TABLE} VALUES
        (1, 'order 1', 'items', 5, timestamp '2024-01-01'),
        (2, 'order 2', 'items', 5, timestamp '2024-02-01'),
        (3, 'order 3', 'items', 5, NULL),
        (4, 'order 4', 'items', 5, NULL)`,
    );
  });
});

afterAll(() => pg.drop());

test("attack: on PostgreSQL, a 'most' question puts the newest dated rows before undated ones tied on the quantity", async () => {
  const c = new SqlConnector({ url: pg.pgUrl, tables: [table] }, undefined, LOOPBACK);
  try {
    const records = await c.search({ terms: ["items"], phrases: [], limit: 2, order: "desc" });
    // Ordered by the items column (all tied), then newest first, undated last (as on SQLite).
    expect(records.map((r) => r.metadata[ORDERED_BY])).toEqual(["items", "items"]);
    // Was ["order 4", "order 3"]: `placed DESC` puts the NULLs first on PostgreSQL.
    expect(records.map((r) => r.title)).toEqual(["order 2", "order 1"]);
  } finally {
    await c.close();
  }
});
