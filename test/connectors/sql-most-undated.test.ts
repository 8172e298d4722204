// Attack on "a server's undated rows are asked apart" (serverRows): a "most" question (an order
// by a quantity column) is read with the one query and the table's own order, whose date
// tie-break is `date DESC` with no NULLS LAST. On PostgreSQL a descending order puts NULLs first,
// so among rows tied on the quantity the undated ones came before the newest dated ones (SQLite
// puts them last): with a limit, the newest dated rows were cut. MySQL and MariaDB have no NULLS
// LAST and put NULLs first in an ascending order: the row without a quantity came first for "the
// least". Both servers, the same rows.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SqlConnector } from "../../src/connectors/sql/connector";
import { ORDERED_BY } from "../../src/connectors/types";
import { allowList, pinner } from "../../src/net/pin";
import { mysqlTable } from "../support/mysql-admin";
import { shopTable } from "../support/pg-tables";

setDefaultTimeout(60_000);

const LOOPBACK = { pin: pinner(allowList("127.0.0.1")) };
const TABLE = "attack_most_undated";
const table = { name: TABLE, id: "id", title: "title", text: ["note", "items"], date: "placed" };
// Four orders of 5 items each: two dated (1, 2), two undated (3, 4); the newest (5) counts no items.
const ROWS = `(1, 'order 1', 'items', 5, TIMESTAMP '2024-01-01 00:00:00'),
  (2, 'order 2', 'items', 5, TIMESTAMP '2024-02-01 00:00:00'),
  (3, 'order 3', 'items', 5, NULL),
  (4, 'order 4', 'items', 5, NULL),
  (5, 'order 5', 'items', NULL, TIMESTAMP '2024-03-01 00:00:00')`;

const servers = {
  postgres: async () => {
    const made = await shopTable(TABLE, async (admin) => {
      await admin.unsafe(`CREATE TABLE ${TABLE} (id integer PRIMARY KEY, title text, note text, items integer, placed timestamp)`);
      await admin.unsafe(`INSERT INTO ${TABLE} VALUES ${ROWS}`);
    });
    return { url: made.pgUrl, drop: made.drop };
  },
  mysql: () =>
    mysqlTable(TABLE, async (admin) => {
      await admin.unsafe(`CREATE TABLE ${TABLE} (id INT PRIMARY KEY, title TEXT, note TEXT, items INT, placed DATETIME)`);
      await admin.unsafe(`INSERT INTO ${TABLE} VALUES ${ROWS}`);
    }),
};

for (const dialect of ["postgres", "mysql"] as const) {
  describe(`sql (${dialect}): the most and the least, rows without a date or a quantity`, () => {
    let made: { url: string; drop(): Promise<void> };
    let c: SqlConnector;
    beforeAll(async () => {
      made = await servers[dialect]();
      c = new SqlConnector({ url: made.url, tables: [table] }, undefined, LOOPBACK);
    });
    afterAll(async () => {
      await c?.close();
      await made?.drop();
    });

    test("attack: a 'most' question puts the newest dated rows before undated ones tied on the quantity", async () => {
      const records = await c.search({ terms: ["items"], phrases: [], limit: 2, order: "desc" });
      // Ordered by the items column (all tied), then newest first, undated last (as on SQLite).
      expect(records.map((r) => r.metadata[ORDERED_BY])).toEqual(["items", "items"]);
      // Was ["order 4", "order 3"] on PostgreSQL: `placed DESC` puts the NULLs first there.
      expect(records.map((r) => r.title)).toEqual(["order 2", "order 1"]);
    });

    test("attack: a 'least' question puts the row without a quantity last, not first", async () => {
      const records = await c.search({ terms: ["items"], phrases: [], limit: 5, order: "asc" });
      // MySQL's ASC alone put order 5 (items NULL) first.
      expect(records.map((r) => r.title)).toEqual(["order 2", "order 1", "order 4", "order 3", "order 5"]);
    });
  });
}
