// A table of the test PostgreSQL made fresh for a test file, readable by its read-only role
// "shop" (the connector's): built as the admin, dropped at the end.
import { afterAll, beforeAll } from "bun:test";
import postgres from "postgres";
import { testServers } from "./servers";

export interface ShopTable {
  /** The admin's connection (EXPLAIN, more rows). */
  admin: ReturnType<typeof postgres>;
  /** The read-only role's URL, as a connector is given it. */
  pgUrl: string;
  drop(): Promise<void>;
}

/** Drops `name` if a run before left it, `build`s it as the admin, and lets "shop" read it. */
export async function shopTable(name: string, build: (admin: ReturnType<typeof postgres>) => Promise<void>): Promise<ShopTable> {
  const servers = await testServers();
  const admin = postgres(servers.pgAdminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`DROP TABLE IF EXISTS ${name}`);
  await build(admin);
  await admin.unsafe(`GRANT SELECT ON ${name} TO shop`);
  return {
    admin,
    pgUrl: servers.pgUrl,
    drop: async () => {
      await admin.unsafe(`DROP TABLE IF EXISTS ${name}`);
      await admin.end();
    },
  };
}

/** How `ordersTable` maps in a SQL connector. */
export const ordersMapping = (name: string) => ({ name, id: "id", title: "title", text: ["note"], date: "placed" });

/**
 * A table of `rows` orders placed a minute apart from 2020 (ids 1..rows), every `undatedEvery`th
 * without a date, with an ordinary index on the date column or none, analysed.
 */
export function ordersTable(name: string, rows: number, o: { undatedEvery?: number; dateIndex: boolean }): Promise<ShopTable> {
  const placed = "timestamp '2020-01-01' + g * interval '1 minute'";
  return shopTable(name, async (admin) => {
    await admin.unsafe(`CREATE TABLE ${name} (id integer PRIMARY KEY, title text, note text, placed timestamp)`);
    await admin.unsafe(
      `INSERT INTO ${name} SELECT g, 'order ' || g, 'placed', ${o.undatedEvery ? `CASE WHEN g % ${o.undatedEvery} = 0 THEN NULL ELSE ${placed} END` : placed} FROM generate_series(1, ${rows}) g`,
    );
    if (o.dateIndex) await admin.unsafe(`CREATE INDEX ${name}_placed ON ${name} (placed)`);
    await admin.unsafe(`ANALYZE ${name}`);
  });
}

/** This test file's `ordersTable`, made before its tests and dropped after them: `pg()` once made, and its mapping. */
export function ordersTableOfFile(
  name: string,
  rows: number,
  o: { undatedEvery?: number; dateIndex: boolean },
): { pg: () => ShopTable; mapping: ReturnType<typeof ordersMapping> } {
  let made: ShopTable | undefined;
  beforeAll(async () => {
    made = await ordersTable(name, rows, o);
  });
  afterAll(() => made?.drop());
  return { pg: () => made!, mapping: ordersMapping(name) };
}
