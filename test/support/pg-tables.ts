// A table of the test PostgreSQL made fresh for a test file, readable by its read-only role
// "shop" (the connector's): built as the admin, dropped at the end.
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
