// Attack: a NUL in a question (a quoted phrase keeps it) sent to PostgreSQL. PostgreSQL refuses
// a text parameter holding a NUL (22021, invalid byte sequence); the connector takes that error
// for a dead connection: the search fails, and the pool is closed under every other search of
// the connector in flight (an operator's connector is shared by every user).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { SqlTable } from "../../src/connectors/sql/config";
import { SqlConnector } from "../../src/connectors/sql/connector";
import { allowList, pinner } from "../../src/net/pin";
import { planQuery } from "../../src/retrieval/plan";
import { CHINOOK_SQLITE, chinookCustomers, chinookInvoices } from "../support/chinook";
import { testServers } from "../support/servers";

setDefaultTimeout(60_000);

const LOOPBACK = { pin: pinner(allowList("127.0.0.1")) };

for (const dialect of ["sqlite", "postgres"] as const) {
  describe(`sql (${dialect}): a NUL in a quoted phrase`, () => {
    let c: SqlConnector;
    beforeAll(async () => {
      const tables: SqlTable[] = [chinookInvoices(dialect), chinookCustomers(["FirstName", "LastName", "Country"], dialect)];
      c = new SqlConnector({ url: dialect === "sqlite" ? CHINOOK_SQLITE : (await testServers()).pgUrl, tables }, undefined, LOOPBACK);
    });
    afterAll(async () => c.close());

    const ask = (question: string) => {
      const { terms, phrases } = planQuery(question);
      return c.search({ terms, phrases, limit: 20 });
    };

    test("is answered (the NUL dropped or the needle skipped), not a failed search", async () => {
      const records = await ask('customers in "Brazil\u0000" or Germany');
      expect(records.length).toBeGreaterThan(0);
    });

    test("another search of the connector running at the same time is not failed by it", async () => {
      const results = await Promise.allSettled([
        ask("customers in Germany"),
        ask('customers in "Brazil\u0000"'),
        ask("customers in Germany"),
        ask("customers in France"),
      ]);
      const outcome = (r: PromiseSettledResult<unknown>) => (r.status === "fulfilled" ? "ok" : (r.reason as Error).message);
      expect([results[0]!, results[2]!, results[3]!].map(outcome)).toEqual(["ok", "ok", "ok"]);
    });
  });
}

describe("sql (postgres): a statement the server refuses", () => {
  test("keeps the connection: a search under way at the same time is answered", async () => {
    const tables: SqlTable[] = [chinookInvoices("postgres"), chinookCustomers(["FirstName", "LastName", "Country"], "postgres")];
    const c = new SqlConnector({ url: (await testServers()).pgUrl, tables }, undefined, LOOPBACK);
    try {
      const internals = c as unknown as {
        withDriver<T>(fn: (d: { select(sql: string, p: unknown[]): Promise<unknown[]> }) => Promise<T>): Promise<T>;
      };
      const { terms, phrases } = planQuery("customers in Germany");
      const [refused, other] = await Promise.allSettled([
        internals.withDriver((d) => d.select("SELECT 1 / 0", [])),
        c.search({ terms, phrases, limit: 20 }),
      ]);
      expect(refused.status).toBe("rejected");
      expect(other.status === "fulfilled" ? other.value.length : (other.reason as Error).message).toBeGreaterThan(0);
    } finally {
      await c.close();
    }
  });
});
