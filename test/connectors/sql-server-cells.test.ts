// D31 on a database server: a search's rows are ranked, chunked and cited on the serving thread,
// and each of its title and text cells is read up to SEARCH_CELL_CHARS characters. SQLite and
// MariaDB cut the cell in SQL; PostgreSQL's arrived whole and was cut here: 20 rows of 1 MB asked
// were 20 MB over the wire and in memory, a question. Counted at a proxy between the connector and
// the server: the bytes the server sent.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SEARCH_CELL_CHARS, SqlConnector } from "../../src/connectors/sql/connector";
import { allowList, pinner } from "../../src/net/pin";
import { mysqlTable } from "../support/mysql-admin";
import { shopTable } from "../support/pg-tables";
import { countingProxy } from "../support/tcp";

setDefaultTimeout(120_000);

const LOOPBACK = { pin: pinner(allowList("127.0.0.1")) };
const TABLE = "attack_big_cells";
const ROWS = 20;
const MB = 1024 * 1024;
const table = { name: TABLE, id: "id", title: "title", text: ["note", "amount"] };

const servers = {
  postgres: async () => {
    const made = await shopTable(TABLE, async (admin) => {
      await admin.unsafe(`CREATE TABLE ${TABLE} (id integer PRIMARY KEY, title text, note text, amount numeric(10,2))`);
      await admin.unsafe(
        `INSERT INTO ${TABLE} SELECT g, 'note ' || g, repeat('lorem ipsum ', ${Math.floor(MB / 12)}) || 'porto', 12.5 + g FROM generate_series(1, ${ROWS}) g`,
      );
    });
    return { url: made.pgUrl, drop: made.drop };
  },
  mysql: () =>
    mysqlTable(TABLE, async (admin) => {
      await admin.unsafe(`CREATE TABLE ${TABLE} (id INT PRIMARY KEY, title TEXT, note LONGTEXT, amount DECIMAL(10,2))`);
      await admin.unsafe(
        `INSERT INTO ${TABLE} SELECT seq, CONCAT('note ', seq), CONCAT(REPEAT('lorem ipsum ', ${Math.floor(MB / 12)}), 'porto'), 12.5 + seq FROM seq_1_to_${ROWS}`,
      );
    }),
};

for (const dialect of ["postgres", "mysql"] as const) {
  describe(`sql (${dialect}): rows of 1 MB cells`, () => {
    let made: { url: string; drop(): Promise<void> };
    beforeAll(async () => {
      made = await servers[dialect]();
    });
    afterAll(() => made?.drop());

    test("attack: a search reads each cell up to SEARCH_CELL_CHARS, cut by the server; a row is still found by a word past them", async () => {
      const target = new URL(made.url);
      const proxy = await countingProxy({ host: target.hostname, port: Number(target.port) });
      target.port = String(proxy.port);
      const c = new SqlConnector({ url: target.toString(), tables: [table] }, undefined, LOOPBACK);
      try {
        await c.health(); // connected, the schema read: what follows is the search alone
        const before = proxy.bytesFromTarget;
        const records = await c.search({ terms: ["porto"], phrases: [], limit: ROWS });
        const sent = proxy.bytesFromTarget - before;
        expect(records.length).toBe(ROWS);
        for (const r of records) {
          expect(r.content.length).toBeLessThanOrEqual(SEARCH_CELL_CHARS + 64);
          expect(r.content).not.toContain("porto");
          // A number stays a number (not cut as text).
          expect(Number(r.metadata.amount)).toBe(12.5 + Number(r.metadata.id));
        }
        // Was 20,971,5xx on PostgreSQL: every cell whole.
        expect(sent).toBeLessThan(ROWS * (SEARCH_CELL_CHARS + 1024));
      } finally {
        await c.close();
        await proxy.close();
      }
    });
  });
}
