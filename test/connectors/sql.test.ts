// The SQL connector against the Chinook shop: SQLite (the shared file, read-only) and a real
// PostgreSQL (scripts/test-servers.sh).
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { Database } from "bun:sqlite";
import postgres from "postgres";
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { SqlConnector, type SqlTable } from "../../src/connectors/sql/connector";
import { SHARED_DATA, testServers, type TestServers } from "../support/servers";

// Servers, builds and the model take longer than 5 s on a busy two-core machine.
setDefaultTimeout(60_000);

const sqlitePath = join(SHARED_DATA, "chinook", "Chinook_Sqlite.sqlite");
const sqliteBefore = { sha: createHash("sha256").update(readFileSync(sqlitePath)).digest("hex"), mtime: statSync(sqlitePath).mtimeMs };

const sqliteTables: SqlTable[] = [
  { name: "Invoice", id: "InvoiceId", title: "BillingCity", text: ["BillingAddress", "BillingCity", "BillingCountry", "Total"], date: "InvoiceDate", url: "https://shop.example/invoices/{id}" },
  { name: "Customer", id: "CustomerId", title: "LastName", text: ["FirstName", "LastName", "Company", "Country", "Email"] },
];
const pgTables: SqlTable[] = [
  { name: "invoice", id: "invoice_id", title: "billing_city", text: ["billing_address", "billing_city", "billing_country", "total"], date: "invoice_date" },
  { name: "customer", id: "customer_id", title: "last_name", text: ["first_name", "last_name", "company", "country", "email"] },
];

let servers: TestServers;
let pgChecksum: () => Promise<string>;
let pgBefore: string;
let admin: postgres.Sql;

beforeAll(async () => {
  servers = await testServers();
  admin = postgres(servers.pgAdminUrl, { max: 1, onnotice: () => {} });
  pgChecksum = async () => {
    const rows = await admin`SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) AS sum FROM (SELECT * FROM invoice) t UNION ALL SELECT md5(string_agg(c::text, ',' ORDER BY c::text)) FROM customer c`;
    return rows.map((r) => r.sum).join("/");
  };
  pgBefore = await pgChecksum();
});

afterAll(async () => {
  // D19: the databases are exactly as before.
  expect(await pgChecksum()).toBe(pgBefore);
  await admin.end();
  expect(createHash("sha256").update(readFileSync(sqlitePath)).digest("hex")).toBe(sqliteBefore.sha);
  expect(statSync(sqlitePath).mtimeMs).toBe(sqliteBefore.mtime);
});

for (const dialect of ["sqlite", "postgres"] as const) {
  describe(`sql connector: Chinook on ${dialect}`, () => {
    const make = (over: Partial<{ url: string; tables: SqlTable[] }> = {}) =>
      new SqlConnector({ url: dialect === "sqlite" ? sqlitePath : servers.pgUrl, tables: dialect === "sqlite" ? sqliteTables : pgTables, ...over });
    let c: SqlConnector;
    beforeAll(() => {
      c = make();
    });
    afterAll(async () => c.close());

    test("health counts the configured tables' rows", async () => {
      expect(await c.health()).toEqual({ status: "ok", records: 412 + 59 });
    });

    test("invoices from Germany in 2021: rows found, dates and metadata right", async () => {
      const from = new Date("2021-01-01T00:00:00Z");
      const to = new Date("2022-01-01T00:00:00Z");
      const records = (await c.search({ terms: ["germany"], phrases: [], limit: 100, dateFrom: from, dateTo: to })).filter((r) => r.path.toLowerCase().startsWith("invoice/"));
      // What the database itself says, asked directly.
      const expected =
        dialect === "sqlite"
          ? new Database(sqlitePath, { readonly: true }).query<{ n: number }, []>("SELECT count(*) AS n FROM Invoice WHERE BillingCountry = 'Germany' AND InvoiceDate >= '2021-01-01' AND InvoiceDate < '2022-01-01'").get()!.n
          : Number((await admin`SELECT count(*) AS n FROM invoice WHERE billing_country = 'Germany' AND invoice_date >= '2021-01-01' AND invoice_date < '2022-01-01'`)[0]!.n);
      expect(expected).toBeGreaterThan(0);
      expect(records.length).toBe(expected);
      for (const r of records) {
        expect(r.content).toContain("Germany");
        expect(r.date! >= from.toISOString() && r.date! < to.toISOString()).toBe(true);
        expect(r.metadata).toHaveProperty(dialect === "sqlite" ? "Total" : "total");
      }
      if (dialect === "sqlite") expect(records[0]!.source_url).toMatch(/^https:\/\/shop\.example\/invoices\/\d+$/);
      else {
        expect(records[0]!.source_url).toMatch(/^postgres:\/\/127\.0\.0\.1:\d+\/chinook#invoice\/\d+$/);
        expect(records[0]!.source_url).not.toContain("shop-pass");
      }
    });

    test("customers by name; values are bound, never spliced", async () => {
      const records = await c.search({ terms: ["schneider"], phrases: [], limit: 5 });
      expect(records.some((r) => /schneider/i.test(r.title))).toBe(true);
      const injection = await c.search({ terms: ["x' OR '1'='1", "%"], phrases: [], limit: 5 });
      expect(injection).toEqual([]);
    });

    test("a write through the connector's own connection fails", async () => {
      await expect(c.attemptWrite(dialect === "sqlite" ? "DELETE FROM Invoice" : "DELETE FROM invoice")).rejects.toThrow(/read-?only/i);
    });

    test("an unknown table or column is status error with a clear reason", async () => {
      const badTable = make({ tables: [{ ...(dialect === "sqlite" ? sqliteTables[0]! : pgTables[0]!), name: "orders" }] });
      expect(await badTable.health()).toEqual({ status: "error", reason: "table orders does not exist" });
      const badColumn = make({ tables: [{ ...(dialect === "sqlite" ? sqliteTables[0]! : pgTables[0]!), text: ["secret_column"] }] });
      expect((await badColumn.health()).reason).toMatch(/has no column secret_column/);
    });
  });
}

describe("sql connector: unreachable databases", () => {
  test("a dead server, a wrong password and a missing file are status error, never a crash", async () => {
    const dead = new SqlConnector({ url: "postgres://shop:x@127.0.0.1:1/chinook", tables: pgTables });
    expect(await dead.health()).toEqual({ status: "error", reason: "database postgres://shop:***@127.0.0.1:1/chinook refused the connection" });
    const wrong = new SqlConnector({ url: servers.pgUrl.replace("shop-pass", "nope"), tables: pgTables });
    const w = await wrong.health();
    expect(w.status).toBe("error");
    expect(w.reason).toContain("login failed");
    expect(w.reason).not.toContain("nope");
    const missing = new SqlConnector({ url: "/nonexistent/shop.sqlite", tables: sqliteTables });
    expect(await missing.health()).toEqual({ status: "error", reason: "SQLite database /nonexistent/shop.sqlite not found" });
    await wrong.close();
  });
});
