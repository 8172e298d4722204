// Attack on "the newest rows of each table (by its date column)" (SqlConnector.newest, and the
// order of every search) on PostgreSQL: ORDER BY date DESC puts NULLs *first* there (SQLite
// puts them last). A table whose undated rows (drafts, orders not yet placed) outnumber the
// limit has only those embedded ahead, never its newest dated rows; the same table in SQLite
// gives its newest dated rows. MariaDB (DESC puts NULLs last there) is asked the same.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { SqlConnector } from "../../src/connectors/sql/connector";
import { allowList, pinner } from "../../src/net/pin";
import { tempDir } from "../helpers";
import { mysqlTable } from "../support/mysql-admin";
import { type ShopTable, shopTable } from "../support/pg-tables";

setDefaultTimeout(60_000);

const LOOPBACK = { pin: pinner(allowList("127.0.0.1")) };
const TABLE = "attack_undated_orders";
const table = { name: TABLE, id: "id", title: "title", text: ["note"], date: "placed" };
let pg: ShopTable;
let my: Awaited<ReturnType<typeof mysqlTable>>;

/** Ten orders placed (ids 1-10, newest last) and ten drafts without a date (ids 11-20). */
const rows = [
  ...Array.from({ length: 10 }, (_, i) => ({
    id: i + 1,
    title: `order ${i + 1}`,
    note: "placed",
    placed: `2024-03-${String(i + 1).padStart(2, "0")} 10:00:00`,
  })),
  ...Array.from({ length: 10 }, (_, i) => ({ id: i + 11, title: `draft ${i + 11}`, note: "draft", placed: null })),
];

beforeAll(async () => {
  pg = await shopTable(TABLE, async (admin) => {
    await admin.unsafe(`CREATE TABLE ${TABLE} (id integer PRIMARY KEY, title text, note text, placed timestamp)`);
    for (const r of rows) await admin`INSERT INTO ${admin(TABLE)} ${admin(r)}`;
  });
  my = await mysqlTable(TABLE, async (admin) => {
    await admin.unsafe(`CREATE TABLE ${TABLE} (id INT PRIMARY KEY, title TEXT, note TEXT, placed DATETIME)`);
    for (const r of rows) await admin.unsafe(`INSERT INTO ${TABLE} VALUES (?, ?, ?, ?)`, [r.id, r.title, r.note, r.placed]);
  });
});

afterAll(async () => {
  await pg.drop();
  await my.drop();
});

async function newestIds(url: string): Promise<string[]> {
  const c = new SqlConnector({ url, tables: [table] }, undefined, LOOPBACK);
  try {
    return (await c.newest(5)).map((r) => r.id);
  } finally {
    await c.close();
  }
}

test("attack: PostgreSQL's newest rows are its undated ones (NULLs first in DESC), SQLite's are its newest dated ones", async () => {
  const dir = join(tempDir("corpus-undated-"), "db");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "orders.sqlite");
  const db = new Database(file);
  db.exec(`CREATE TABLE ${TABLE} (id INTEGER PRIMARY KEY, title TEXT, note TEXT, placed TEXT)`);
  const put = db.query(`INSERT INTO ${TABLE} VALUES (?, ?, ?, ?)`);
  for (const r of rows) put.run(r.id, r.title, r.note, r.placed);
  db.close();

  const newest = [`${TABLE}/10`, `${TABLE}/9`, `${TABLE}/8`, `${TABLE}/7`, `${TABLE}/6`];
  // Was { sqlite: newest, postgres: [".../20", ".../19", …, ".../16"] }: the drafts.
  expect({ sqlite: await newestIds(file), postgres: await newestIds(pg.pgUrl), mysql: await newestIds(my.url) }).toEqual({
    sqlite: newest,
    postgres: newest,
    mysql: newest,
  });
});
