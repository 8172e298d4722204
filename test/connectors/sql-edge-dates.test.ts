// Attack: request dates at the calendar's start against the SQL connector. storedRange
// (retrieval/gather.ts) clamps bounds to years 0000-9999, and REST accepts "0000-01-01": but
// PostgreSQL has no year 0 ("date/time field value out of range: 0000-06-01T00:00:00.000Z"), so
// a filter in year 0 fails the PostgreSQL connector and the answer is silently empty instead of
// every row after it. SQLite compares text and holds; so must MariaDB, whose DATETIME starts at year 1000.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { bearer, postJson, tempDir, testApp } from "../helpers";
import { chinookInvoices } from "../support/chinook";
import { testServers } from "../support/servers";
import { operatorFile } from "../support/sources";

setDefaultTimeout(120_000);

type App = Awaited<ReturnType<typeof testApp>>;
let t: App;
let token: string;

beforeAll(async () => {
  const servers = await testServers();
  const lite = join(tempDir("corpus-sql-edge-"), "shop.sqlite");
  const db = new Database(lite);
  db.run("CREATE TABLE invoice (id INTEGER PRIMARY KEY, city TEXT, country TEXT, created TEXT)");
  db.run("INSERT INTO invoice VALUES (1, 'Berlin', 'Germany', '2021-06-12 10:00:00'), (2, 'Paris', 'France', '2022-01-03 00:00:00')");
  db.close();
  const file = operatorFile([
    { id: "pg", kind: "sql", label: "Shop (PostgreSQL)", config: { url: servers.pgUrl, tables: [chinookInvoices("postgres")] } },
    { id: "my", kind: "sql", label: "Shop (MariaDB)", config: { url: servers.mysqlUrl, tables: [chinookInvoices("mysql")] } },
    {
      id: "lite",
      kind: "sql",
      label: "Shop (SQLite)",
      config: { url: lite, tables: [{ name: "invoice", id: "id", title: "city", text: ["country"], date: "created" }] },
    },
  ]);
  t = await testApp({ CORPUS_CONNECTORS_FILE: file });
  token = (await t.services.auth.issuer.issue("alice", ["corpus:search"])).token;
});

afterAll(async () => {
  await t?.services.close();
});

test("attack: filters at year 0 and year 9999 bound (or exclude) both dialects' rows as the calendar says", async () => {
  const found: Record<string, boolean> = {};
  const expected: Record<string, boolean> = {};
  for (const [filters, any] of [
    [{}, true],
    [{ date_from: "0000-06-01" }, true],
    [{ date_from: "0000-01-01" }, true],
    [{ date_to: "0000-01-01" }, false],
    [{ date_to: "0000-01-01T00:00:00.000+23:59" }, false],
    [{ date_from: "9999-12-31T23:59:59.999Z" }, false],
    [{ date_to: "9999-12-31" }, true],
  ] as const) {
    for (const c of ["pg", "my", "lite"]) {
      const r = await t.app.handle(postJson("/v1/query", { q: "Germany", filters: { ...filters, connectors: [c] } }, bearer(token)));
      expect(r.status).toBe(200);
      const key = `${c} ${JSON.stringify(filters)}`;
      found[key] = ((await r.json()) as any).results.length > 0;
      expected[key] = any;
    }
  }
  expect(found).toEqual(expected);
});
