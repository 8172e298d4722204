// The SQL connector against the Chinook shop: SQLite (the shared file, read-only), a real
// PostgreSQL and a real MariaDB (scripts/test-servers.sh): one suite, three databases.

import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import type { SQL } from "bun";
import postgres from "postgres";
import type { SqlTable } from "../../src/connectors/sql/config";
import { SqlConnector } from "../../src/connectors/sql/connector";
import { parseServerUrl } from "../../src/connectors/sql/server-url";
import { ORDER_RANK, ORDERED_BY } from "../../src/connectors/types";
import { allowList, pinner, type Resolver } from "../../src/net/pin";
import { planQuery } from "../../src/retrieval/plan";
import { CHINOOK_SQLITE, chinookCustomers, chinookInvoices } from "../support/chinook";
import { hostilePostgres } from "../support/hostile-postgres";
import { mysqlAdmin } from "../support/mysql-admin";
import { type TestServers, testServers } from "../support/servers";

// Servers, builds and the model take longer than 5 s on a busy two-core machine.
setDefaultTimeout(60_000);

const sqlitePath = CHINOOK_SQLITE;
const sqliteBefore = { sha: createHash("sha256").update(readFileSync(sqlitePath)).digest("hex"), mtime: statSync(sqlitePath).mtimeMs };

const sqliteTables: SqlTable[] = [
  { ...chinookInvoices(), url: "https://shop.example/invoices/{id}" },
  chinookCustomers(["FirstName", "LastName", "Company", "Country", "Email"]),
];
const pgTables: SqlTable[] = [
  chinookInvoices("postgres"),
  chinookCustomers(["FirstName", "LastName", "Company", "Country", "Email"], "postgres"),
];
const mysqlTables: SqlTable[] = [
  chinookInvoices("mysql"),
  chinookCustomers(["FirstName", "LastName", "Company", "Country", "Email"], "mysql"),
];
const tablesOf = { sqlite: sqliteTables, postgres: pgTables, mysql: mysqlTables };

/** The test servers listen on loopback: allowed here as CORPUS_CONNECTOR_ALLOW_HOSTS=127.0.0.1 would. */
const LOOPBACK = { pin: pinner(allowList("127.0.0.1")) };

let servers: TestServers;
let pgChecksum: () => Promise<string>;
let pgBefore: string;
let admin: postgres.Sql;
let mysql: SQL;
let mysqlBefore: string;
const mysqlChecksum = async () =>
  (await mysql.unsafe("CHECKSUM TABLE Invoice, Customer EXTENDED")).map((r: { Checksum: unknown }) => String(r.Checksum)).join("/");

beforeAll(async () => {
  servers = await testServers();
  admin = postgres(servers.pgAdminUrl, { max: 1, onnotice: () => {} });
  pgChecksum = async () => {
    const rows =
      await admin`SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) AS sum FROM (SELECT * FROM invoice) t UNION ALL SELECT md5(string_agg(c::text, ',' ORDER BY c::text)) FROM customer c`;
    return rows.map((r) => r.sum).join("/");
  };
  pgBefore = await pgChecksum();
  mysql = await mysqlAdmin();
  mysqlBefore = await mysqlChecksum();
});

afterAll(async () => {
  // D19: the databases are exactly as before.
  expect(await pgChecksum()).toBe(pgBefore);
  await admin.end();
  expect(await mysqlChecksum()).toBe(mysqlBefore);
  await mysql.close();
  expect(createHash("sha256").update(readFileSync(sqlitePath)).digest("hex")).toBe(sqliteBefore.sha);
  expect(statSync(sqlitePath).mtimeMs).toBe(sqliteBefore.mtime);
});

for (const dialect of ["sqlite", "postgres", "mysql"] as const) {
  describe(`sql connector: Chinook on ${dialect}`, () => {
    const urlOf = () => ({ sqlite: sqlitePath, postgres: servers.pgUrl, mysql: servers.mysqlUrl })[dialect];
    const make = (over: Partial<{ url: string; tables: SqlTable[] }> = {}) =>
      new SqlConnector({ url: urlOf(), tables: tablesOf[dialect], ...over }, undefined, LOOPBACK);
    let c: SqlConnector;
    beforeAll(() => {
      c = make();
    });
    afterAll(async () => c.close());

    test("health counts the configured tables' rows", async () => {
      expect(await c.health()).toEqual({ status: "ok", records: 412 + 59 });
    });

    test("an accented name asked finds its rows: the planner keeps the accents the database stores", async () => {
      const { terms, phrases } = planQuery("who is François?");
      const records = await c.search({ terms, phrases, limit: 100 });
      expect(records.length).toBeGreaterThan(0);
      for (const r of records) expect(r.content).toContain("François");
    });

    test("an accent left out of the question finds the row that has it, as the index would (fold.ts)", async () => {
      const customer = dialect === "postgres" ? "customer" : "Customer";
      const invoice = dialect === "postgres" ? "invoice" : "Invoice";
      const ask = async (question: string) => {
        const { terms, phrases } = planQuery(question);
        return (await c.search({ terms, phrases, limit: 100 })).map((r) => r.id);
      };
      // Stanisław Wójcik (customer 49), Bjørn Hansen (4), the seven invoices billed to
      // Barbarossastraße 19: letters no accent makes, asked as an English keyboard types them (fold.ts).
      expect(await ask("Stanislaw Wojcik")).toContain(`${customer}/49`);
      expect(await ask("Stanislaw")).toContain(`${customer}/49`);
      expect(await ask("Bjorn")).toContain(`${customer}/4`);
      expect((await ask("Barbarossastrasse")).filter((id) => id.startsWith(`${invoice}/`))).toHaveLength(7);
      // Montréal's seven invoices, asked as an English keyboard types it, and in capitals.
      for (const question of ["invoices billed to Montreal", "MONTRÉAL"]) {
        const montreal = (await ask(question)).filter((id) => id.startsWith(`${invoice}/`));
        expect(montreal).toHaveLength(7);
      }
    });

    test("invoices from Germany in 2021: rows found, dates and metadata right", async () => {
      const from = new Date("2021-01-01T00:00:00Z");
      const to = new Date("2022-01-01T00:00:00Z");
      const records = (await c.search({ terms: ["germany"], phrases: [], limit: 100, dateFrom: from, dateTo: to })).filter((r) =>
        r.path.toLowerCase().startsWith("invoice/"),
      );
      // What the database itself says, asked directly.
      const expected =
        dialect === "sqlite"
          ? new Database(sqlitePath, { readonly: true })
              .query<{ n: number }, []>(
                "SELECT count(*) AS n FROM Invoice WHERE BillingCountry = 'Germany' AND InvoiceDate >= '2021-01-01' AND InvoiceDate < '2022-01-01'",
              )
              .get()!.n
          : dialect === "mysql"
            ? Number(
                (
                  await mysql`SELECT count(*) AS n FROM Invoice WHERE BillingCountry = 'Germany' AND InvoiceDate >= '2021-01-01' AND InvoiceDate < '2022-01-01'`
                )[0].n,
              )
            : Number(
                (
                  await admin`SELECT count(*) AS n FROM invoice WHERE billing_country = 'Germany' AND invoice_date >= '2021-01-01' AND invoice_date < '2022-01-01'`
                )[0]!.n,
              );
      expect(expected).toBeGreaterThan(0);
      expect(records.length).toBe(expected);
      for (const r of records) {
        expect(r.content).toContain("Germany");
        expect(r.date! >= from.toISOString() && r.date! < to.toISOString()).toBe(true);
        expect(r.metadata).toHaveProperty(dialect === "postgres" ? "total" : "Total");
      }
      if (dialect === "sqlite") expect(records[0]!.source_url).toMatch(/^https:\/\/shop\.example\/invoices\/\d+$/);
      else {
        expect(records[0]!.source_url).toMatch(
          dialect === "postgres"
            ? /^postgres:\/\/127\.0\.0\.1:\d+\/chinook#invoice\/\d+$/
            : /^mysql:\/\/127\.0\.0\.1:\d+\/chinook#Invoice\/\d+$/,
        );
        expect(records[0]!.source_url).not.toContain("shop-pass");
      }
    });

    test("the highest total in Brazil: invoices sorted by the numeric column the question names, ranked in metadata", async () => {
      const total = dialect === "postgres" ? "total" : "Total";
      const records = (await c.search({ terms: ["total", "brazil"], phrases: [], limit: 100, order: "desc" })).filter((r) =>
        r.path.toLowerCase().startsWith("invoice/"),
      );
      const largest =
        dialect === "sqlite"
          ? new Database(sqlitePath, { readonly: true })
              .query<{ t: number }, []>("SELECT max(Total) AS t FROM Invoice WHERE BillingCountry = 'Brazil'")
              .get()!.t
          : dialect === "mysql"
            ? Number((await mysql`SELECT max(Total) AS t FROM Invoice WHERE BillingCountry = 'Brazil'`)[0].t)
            : Number((await admin`SELECT max(total) AS t FROM invoice WHERE billing_country = 'Brazil'`)[0]!.t);
      expect(Number(records[0]!.metadata[total])).toBe(largest);
      expect(records[0]!.metadata).toMatchObject({ [ORDERED_BY]: total, [ORDER_RANK]: 1 });
      const totals = records.map((r) => Number(r.metadata[total]));
      expect(totals).toEqual([...totals].sort((a, b) => b - a));
      // The smallest first when asked; a term naming a text column (country) sorts nothing.
      const asc = (await c.search({ terms: ["total", "brazil"], phrases: [], limit: 100, order: "asc" })).filter((r) =>
        r.path.toLowerCase().startsWith("invoice/"),
      );
      expect(Number(asc[0]!.metadata[total])).toBe(Math.min(...totals));
      const byText = await c.search({ terms: ["country", "brazil"], phrases: [], limit: 5, order: "desc" });
      for (const r of byText) expect(r.metadata[ORDER_RANK]).toBeUndefined();
    });

    test("a superlative over rows: sorted by the amount the question names, not matched by its words", async () => {
      const total = dialect === "postgres" ? "total" : "Total";
      const ask = async (question: string) => {
        const p = planQuery(question);
        const records = await c.search({
          terms: p.terms,
          phrases: p.phrases,
          limit: 20,
          names: p.names,
          ...(p.order ? { order: p.order } : {}),
          ...(p.timeAsked ? { dateFrom: p.dateFrom, dateTo: p.dateTo } : {}),
        });
        return records.filter((r) => r.path.toLowerCase().startsWith("invoice/"));
      };
      // No row holds "largest", "invoice", "total" or "shop": the shop's largest invoice, 404 (25.86).
      for (const question of ["What is the largest invoice total in the shop?", "Which invoice had the highest total?"]) {
        const [first] = await ask(question);
        expect({ question, id: first?.id, total: Number(first?.metadata[total]) }).toEqual({
          question,
          id: `${dialect === "postgres" ? "invoice" : "Invoice"}/404`,
          total: 25.86,
        });
        expect(first!.metadata).toMatchObject({ [ORDERED_BY]: total, [ORDER_RANK]: 1 });
      }
      // Within the time asked, smallest first.
      const smallest = await ask("Smallest invoice total in 2023?");
      expect(Number(smallest[0]!.metadata[total])).toBe(0.99);
      for (const r of smallest) expect(r.date!.startsWith("2023-")).toBe(true);
      // A name no invoice holds is no licence to answer with the largest of all.
      expect(await ask("What is the largest invoice total of Helena?")).toEqual([]);
    });

    test("customers by name; values are bound, never spliced", async () => {
      const records = await c.search({ terms: ["schneider"], phrases: [], limit: 5 });
      expect(records.some((r) => /schneider/i.test(r.title))).toBe(true);
      const injection = await c.search({ terms: ["x' OR '1'='1", "%"], phrases: [], limit: 5 });
      expect(injection).toEqual([]);
    });

    test("a write through the connector's own connection fails", async () => {
      if (dialect !== "mysql") {
        await expect(c.attemptWrite(dialect === "sqlite" ? "DELETE FROM Invoice" : "DELETE FROM invoice")).rejects.toThrow(/read-?only/i);
        return;
      }
      // MariaDB checks the user's grants first: "shop" may only SELECT. A user who may write (the
      // admin) is refused by the READ ONLY transaction itself.
      await expect(c.attemptWrite("DELETE FROM Invoice")).rejects.toThrow(/DELETE command denied/);
      const writer = make({ url: servers.mysqlAdminUrl });
      try {
        for (const write of ["DELETE FROM Invoice", "UPDATE Customer SET Email = 'x'", "CREATE TEMPORARY TABLE corpus_t (x int)"])
          await expect(writer.attemptWrite(write)).rejects.toThrow(/READ ONLY transaction/);
      } finally {
        await writer.close();
      }
    });

    test("an unknown table or column is status error with a clear reason", async () => {
      const badTable = make({ tables: [{ ...tablesOf[dialect][0]!, name: "orders" }] });
      expect(await badTable.health()).toEqual({ status: "error", reason: "table orders does not exist" });
      const badColumn = make({ tables: [{ ...tablesOf[dialect][0]!, text: ["secret_column"] }] });
      expect((await badColumn.health()).reason).toMatch(/has no column secret_column/);
    });
  });
}

// SQLite has no schemas to name (a dotted name is a table that does not exist).
for (const dialect of ["postgres", "mysql"] as const) {
  test(`sql connector (${dialect}): a table named with its schema (public.invoice, chinook.Invoice) is read as the table`, async () => {
    const [invoices] = tablesOf[dialect];
    const name = `${dialect === "postgres" ? "public" : "chinook"}.${invoices!.name}`;
    const url = dialect === "postgres" ? servers.pgUrl : servers.mysqlUrl;
    const qualified = new SqlConnector({ url, tables: [{ ...invoices!, name }] }, undefined, LOOPBACK);
    try {
      // Was "unavailable": the name was quoted whole, as one identifier with a dot in it.
      expect(await qualified.health()).toEqual({ status: "ok", records: 412 });
      expect((await qualified.search({ terms: ["berlin"], phrases: [], limit: 100 })).length).toBeGreaterThan(0);
    } finally {
      await qualified.close();
    }
  });
}

describe("sql connector: unreachable databases", () => {
  test("a dead server, a wrong password and a missing file are status error, never a crash", async () => {
    const dead = new SqlConnector({ url: "postgres://shop:x@127.0.0.1:1/chinook", tables: pgTables }, undefined, LOOPBACK);
    expect(await dead.health()).toEqual({ status: "error", reason: "database postgres://shop:***@127.0.0.1:1/chinook cannot be reached" });
    const wrong = new SqlConnector({ url: servers.pgUrl.replace("shop-pass", "nope"), tables: pgTables }, undefined, LOOPBACK);
    const w = await wrong.health();
    expect(w.status).toBe("error");
    expect(w.reason).toContain("login failed");
    expect(w.reason).not.toContain("nope");
    const missing = new SqlConnector({ url: "/nonexistent/shop.sqlite", tables: sqliteTables });
    expect(await missing.health()).toEqual({ status: "error", reason: "SQLite database /nonexistent/shop.sqlite not found" });
    await wrong.close();
    const deadMysql = new SqlConnector({ url: "mysql://shop:x@127.0.0.1:1/chinook", tables: mysqlTables }, undefined, LOOPBACK);
    expect(await deadMysql.health()).toEqual({
      status: "error",
      reason: "database mysql://shop:***@127.0.0.1:1/chinook cannot be reached",
    });
    const wrongMysql = new SqlConnector({ url: servers.mysqlUrl.replace("shop-pass", "nope"), tables: mysqlTables }, undefined, LOOPBACK);
    const wm = await wrongMysql.health();
    expect(wm).toEqual({ status: "error", reason: expect.stringContaining("login failed") });
    expect(wm.reason).not.toContain("nope");
    await wrongMysql.close();
    const noDatabase = new SqlConnector(
      { url: servers.mysqlUrl.replace("/chinook", "/nowhere"), tables: mysqlTables },
      undefined,
      LOOPBACK,
    );
    // The user may not see another database: MariaDB says so as it says a wrong password.
    expect((await noDatabase.health()).reason).toMatch(/login failed|does not exist/);
    await noDatabase.close();
  });
});

describe("sql connector: the PostgreSQL connection is made of the connector's config only (D26)", () => {
  const PG_ENV = {
    PGHOST: "10.9.9.9",
    PGPORT: "1",
    PGUSER: "operator",
    PGUSERNAME: "operator",
    PGPASSWORD: "operator-secret-password",
    PGDATABASE: "operator_db",
    PGAPPNAME: "leaky",
    PGSSL: "require",
    PGSSLMODE: "require",
    PGTARGETSESSIONATTRS: "standby",
    PGTARGET_SESSION_ATTRS: "standby",
    PGMAX: "50",
    PGDEBUG: "true",
  };

  test("the server's PGPASSWORD, PGUSER, PGDATABASE… are never sent: a hostile server records what it gets", async () => {
    const saved = Object.fromEntries(Object.keys(PG_ENV).map((k) => [k, process.env[k]]));
    Object.assign(process.env, PG_ENV);
    const server = await hostilePostgres("ask-password");
    try {
      // No password in the URL: postgres.js used to send the server's PGPASSWORD here.
      const c = new SqlConnector({ url: `postgres://shop@127.0.0.1:${server.port}/chinook`, tables: pgTables }, undefined, LOOPBACK);
      expect(await c.health()).toMatchObject({ status: "error", reason: expect.stringContaining("login failed") });
      await c.close();
      expect(server.passwords).toEqual([""]);
      expect(server.startups).toEqual([
        {
          user: "shop",
          database: "chinook",
          client_encoding: "UTF8",
          application_name: "corpus",
          default_transaction_read_only: "true",
          statement_timeout: "5000",
        },
      ]);
      expect(JSON.stringify(server.startups)).not.toContain("operator");
      // The environment is as it was.
      expect(process.env.PGPASSWORD).toBe("operator-secret-password");
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      await server.close();
    }
  });

  test("a URL is read by corpus: one host, a user required, only sslmode as a parameter", () => {
    expect(parseServerUrl("postgres://shop:p%40ss@DB.example:6432/chinook?sslmode=verify-full")).toEqual({
      engine: "postgres",
      host: "db.example",
      port: 6432,
      user: "shop",
      password: "p@ss",
      database: "chinook",
      sslmode: "verify-full",
    });
    expect(parseServerUrl("postgresql://shop@127.1")).toMatchObject({
      host: "127.0.0.1",
      port: 5432,
      password: "",
      database: "shop",
      sslmode: "disable",
    });
    for (const [url, message] of [
      ["postgres://127.0.0.1/chinook", "must name the user"],
      ["postgres://:pw@127.0.0.1/chinook", "must name the user"],
      ["postgres://shop@h1,h2/chinook", "one host name or IP address"],
      ["postgres://shop@%2Fvar%2Frun%2Fpostgresql/chinook", "one host name or IP address"],
      ["postgres://shop@db.example/chinook?options=-c%20default_transaction_read_only%3Doff", 'parameter "options" is not allowed'],
      ["postgres://shop@db.example/chinook?host=/var/run/postgresql", 'parameter "host" is not allowed'],
      ["postgres://shop@db.example/chinook?target_session_attrs=read-write", 'parameter "target_session_attrs" is not allowed'],
      ["postgres://shop@db.example/chinook?application_name=x", 'parameter "application_name" is not allowed'],
      ["postgres://shop@db.example/chinook?password=x", 'parameter "password" is not allowed'],
      ["postgres://shop@db.example/chinook?sslmode=prefer", "sslmode must be one of disable, require, verify-full"],
      ["postgres://shop@db.example/a/b", "just the database name"],
      ["postgres://shop@db.example/chinook#x", "fragment"],
    ] as const) {
      expect(() => parseServerUrl(url)).toThrow(message);
    }
  });

  test("a URL parameter cannot switch off the read-only session: the connector refuses it before connecting", async () => {
    const server = await hostilePostgres("ask-password");
    try {
      const c = new SqlConnector(
        { url: `postgres://shop:x@127.0.0.1:${server.port}/chinook?options=-c%20default_transaction_read_only%3Doff`, tables: pgTables },
        undefined,
        LOOPBACK,
      );
      expect(await c.health()).toEqual({ status: "error", reason: expect.stringContaining('parameter "options" is not allowed') });
      expect(server.connections).toBe(0);
    } finally {
      await server.close();
    }
  });
});

describe("sql connector: connections pinned and bounded (issue 13 items 6, 7)", () => {
  test("a server that closes after authentication gets a bounded number of connections, with backoff on an injected clock", async () => {
    const server = await hostilePostgres("close-after-auth");
    let clock = 1_000_000;
    const c = new SqlConnector({ url: `postgres://shop:x@127.0.0.1:${server.port}/chinook`, tables: pgTables }, undefined, {
      ...LOOPBACK,
      now: () => clock,
    });
    try {
      const first = await c.health();
      expect(first).toEqual({
        status: "error",
        reason: `database postgres://shop:***@127.0.0.1:${server.port}/chinook cannot be reached; next attempt in 1 s`,
      });
      // The pool's two connections, then no more: the old driver reconnected without end.
      expect(server.connections).toBe(2);
      await Bun.sleep(50); // nothing runs behind the answer
      expect(server.connections).toBe(2);
      // Asked again before the backoff is over: the same reason, no connection.
      expect((await c.health()).status).toBe("error");
      expect(server.connections).toBe(2);
      // After 1 s one more attempt; then 2 s, 4 s … apart.
      const seen: number[] = [];
      for (let second = 1; second <= 15; second++) {
        clock += 1000;
        await c.health();
        seen.push(server.connections);
      }
      expect(seen).toEqual([3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 6]);
    } finally {
      await c.close();
      await server.close();
    }
  });

  test("accept-and-close, silent, a refused port and a policy refusal: bounded, and the unreachable ones give one answer", async () => {
    const server = await hostilePostgres("accept-and-close");
    const c = new SqlConnector({ url: `postgres://shop:x@127.0.0.1:${server.port}/chinook`, tables: pgTables }, undefined, LOOPBACK);
    const closed = await c.health();
    expect(server.connections).toBeLessThanOrEqual(2);
    await Bun.sleep(50);
    expect(server.connections).toBeLessThanOrEqual(2);
    await c.close();
    await server.close();
    const refused = await new SqlConnector(
      { url: `postgres://shop:x@127.0.0.1:${server.port}/chinook`, tables: pgTables },
      undefined,
      LOOPBACK,
    ).health();
    const strip = (reason?: string) => reason?.replace(/; next attempt in \d+ s$/, "");
    expect(strip(closed.reason)).toBe(strip(refused.reason));
    // Accepts and never speaks: the same answer once the (here shortened) connect timeout is over.
    const quiet = await hostilePostgres("silent");
    const silent = await new SqlConnector({ url: `postgres://shop:x@127.0.0.1:${quiet.port}/chinook`, tables: pgTables }, undefined, {
      ...LOOPBACK,
      connectTimeoutMs: 300,
    }).health();
    await quiet.close();
    expect(silent.reason?.replace(String(quiet.port), String(server.port))).toBe(refused.reason);
    // Not listed: refused by the policy, before any connection.
    const policy = await new SqlConnector({ url: `postgres://shop:x@127.0.0.1:${server.port}/chinook`, tables: pgTables }).health();
    expect(policy.reason).toContain("127.0.0.1 is a loopback address");
    expect(policy.reason).toContain("CORPUS_CONNECTOR_ALLOW_HOSTS");
  });

  test("DNS rebinding: each connection resolves once and goes to the address it checked", async () => {
    // A second listener on 127.0.0.2 at the real server's port: where a rebinding would lead.
    const port = Number(new URL(servers.pgUrl).port);
    const rebound = await hostilePostgres("accept-and-close", "127.0.0.2", port);
    const answers: string[][] = [];
    let calls = 0;
    const resolve: Resolver = async () => {
      const answer = calls++ === 0 ? ["127.0.0.1"] : ["127.0.0.2"];
      answers.push(answer);
      return answer;
    };
    const pin = pinner(allowList("127.0.0.1"), resolve);
    const url = servers.pgUrl.replace("127.0.0.1", "db.rebind.test");
    const c = new SqlConnector({ url, tables: pgTables }, undefined, { pin });
    try {
      expect(await c.health()).toEqual({ status: "ok", records: 412 + 59 });
      expect(calls).toBe(1);
      expect(rebound.connections).toBe(0);
      // A later connection resolves again, and what it is answered is checked again.
      await c.close();
      const again = await c.health();
      expect(again.reason).toContain("db.rebind.test is not a public address");
      expect(rebound.connections).toBe(0);
    } finally {
      await c.close();
      await rebound.close();
    }
  });
});
