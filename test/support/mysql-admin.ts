// The test MariaDB's admin (scripts/test-servers.sh), who may build tables the connector's
// read-only user "shop" reads: Bun's client, as the connector uses it.
import { SQL } from "bun";
import { testServers } from "./servers";

export async function mysqlAdmin(): Promise<SQL> {
  return new SQL((await testServers()).mysqlAdminUrl, { max: 1 });
}

/** A table of the test MariaDB made fresh for a test (a run before may have left it), readable by "shop" (SELECT on the database): dropped by `drop`. */
export async function mysqlTable(name: string, build: (admin: SQL) => Promise<void>): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = await mysqlAdmin();
  await admin.unsafe(`DROP TABLE IF EXISTS ${name}`);
  await build(admin);
  return {
    url: (await testServers()).mysqlUrl,
    drop: async () => {
      await admin.unsafe(`DROP TABLE IF EXISTS ${name}`);
      await admin.close();
    },
  };
}
