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

describe("attack3: sql (postgres): a statement timeout (57014) of one search", () => {
  // answeredByServer keeps the pool for a SQLSTATE outside classes 08, 53 and 57. 57014 is the
  // statement timeout (or a cancel): about the statement, the connection alive, yet class 57, so
  // the pool is closed under every other search of the connector in flight, as 22021 was. One
  // slow question (a table locked by a long migration, a large scan) fails the others'.
  test("another search of the connector in flight is not failed by it", async () => {
    const servers = await testServers();
    const { default: postgres } = await import("postgres");
    const admin = postgres(servers.pgAdminUrl, { max: 1, onnotice: () => {} });
    const tables: SqlTable[] = [chinookInvoices("postgres"), chinookCustomers(["first_name", "last_name", "country"], "postgres")];
    // chinookCustomers names its columns as given: in the PostgreSQL copy they are snake case already.
    const c = new SqlConnector({ url: servers.pgUrl, tables }, undefined, LOOPBACK);
    const ask = (question: string) => {
      const { terms, phrases } = planQuery(question);
      return c.search({ terms, phrases, limit: 20 });
    };
    try {
      expect((await ask("customers in Germany")).length).toBeGreaterThan(0); // opened, schema checked
      let release = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      let locked = () => {};
      const isLocked = new Promise<void>((r) => {
        locked = r;
      });
      // An operator's migration holds the invoice table for 6 s.
      const migration = admin.begin(async (tx) => {
        await tx`LOCK TABLE invoice IN ACCESS EXCLUSIVE MODE`;
        locked();
        await held;
      });
      await isLocked;
      const first = ask("invoices from Berlin").then(
        () => "ok",
        (e: Error) => e.message,
      );
      await Bun.sleep(3000);
      const second = ask("customers in France").then(
        () => "ok",
        (e: Error) => e.message,
      );
      await Bun.sleep(3000);
      release();
      await migration;
      // The first waited past the statement timeout: it fails, and says so.
      expect(await first).toContain("took longer than");
      // The second waited 3 s of its 5: it is answered.
      expect(await second).toBe("ok");
    } finally {
      await c.close();
      await admin.end({ timeout: 2 });
    }
  });
});
