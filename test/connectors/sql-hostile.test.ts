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

for (const dialect of ["sqlite", "postgres", "mysql"] as const) {
  describe(`sql (${dialect}): a NUL in a quoted phrase`, () => {
    let c: SqlConnector;
    beforeAll(async () => {
      const tables: SqlTable[] = [chinookInvoices(dialect), chinookCustomers(["FirstName", "LastName", "Country"], dialect)];
      const servers = await testServers();
      const url = { sqlite: CHINOOK_SQLITE, postgres: servers.pgUrl, mysql: servers.mysqlUrl }[dialect];
      c = new SqlConnector({ url, tables }, undefined, LOOPBACK);
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
  // The connection is alive: closing the pool failed every other search of the connector in
  // flight. 22012 as any data error (22021 was a NUL); 57014 as a statement timeout is (a slow
  // question on a table a migration holds), raised at once by the statement cancelling itself.
  test.each([
    ["22012 (division by zero)", "SELECT 1 / 0", "unavailable"],
    ["57014 (a statement cancelled, as by its timeout)", "SELECT pg_cancel_backend(pg_backend_pid()), pg_sleep(1)", "took longer than"],
  ])("%s keeps the connection: a search under way at the same time is answered", async (_, statement, reason) => {
    const tables: SqlTable[] = [chinookInvoices("postgres"), chinookCustomers(["FirstName", "LastName", "Country"], "postgres")];
    const c = new SqlConnector({ url: (await testServers()).pgUrl, tables }, undefined, LOOPBACK);
    try {
      const internals = c as unknown as {
        withDriver<T>(fn: (d: { select(sql: string, p: unknown[]): Promise<unknown[]> }) => Promise<T>): Promise<T>;
      };
      const { terms, phrases } = planQuery("customers in Germany");
      const [refused, other] = await Promise.allSettled([
        internals.withDriver((d) => d.select(statement, [])),
        c.search({ terms, phrases, limit: 20 }),
      ]);
      expect(refused.status === "rejected" ? (refused.reason as Error).message : "answered").toContain(reason);
      expect(other.status === "fulfilled" ? other.value.length : (other.reason as Error).message).toBeGreaterThan(0);
    } finally {
      await c.close();
    }
  });
});
