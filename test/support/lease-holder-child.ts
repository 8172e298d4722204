// A node holding a lease on the shared PostgreSQL (test/jobs/leases-stores.test.ts): claims the
// work named by its second argument for 1 s, renews it every 50 ms, and prints each lease as a
// JSON line, until it is killed. Arguments: the database URL, the work's name, the holder's id.
import postgres from "postgres";
import { PostgresLeases } from "../../src/jobs/leases-postgres";

export const LEASE_TTL_MS = 1_000;
const RENEW_MS = 50;

if (import.meta.main) {
  const [url, name, holder] = process.argv.slice(2) as [string, string, string];
  const leases = new PostgresLeases(postgres(url, { max: 1, onnotice: () => {} }));
  let [lease] = await leases.claim([name], holder, LEASE_TTL_MS);
  if (!lease) throw new Error("the lease was held by another");
  console.log(JSON.stringify(lease));
  for (;;) {
    await Bun.sleep(RENEW_MS);
    lease = await leases.renew(lease, LEASE_TTL_MS);
    if (!lease) throw new Error("the lease was lost");
    console.log(JSON.stringify(lease));
  }
}
