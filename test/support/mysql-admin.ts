// The test MariaDB's admin (scripts/test-servers.sh), who may build tables the connector's
// read-only user "shop" reads: Bun's client, as the connector uses it.
import { SQL } from "bun";
import { testServers } from "./servers";

export async function mysqlAdmin(): Promise<SQL> {
  return new SQL((await testServers()).mysqlAdminUrl, { max: 1 });
}
