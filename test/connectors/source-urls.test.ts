// Issue 13 finding 5: every user saw the operator connectors' account, host and database in
// search results: source_url imap://enron@127.0.0.1:10143/INBOX;UID=1481 (REST shapes B and C,
// MCP corpus_search's text and structuredContent, the archive), postgres://host:port/db#… for
// PostgreSQL without a URL template, the operator's absolute file:// path for SQLite. Asked as a
// second, plain user of the real app, against the real Dovecot and PostgreSQL on loopback.

import { Database } from "bun:sqlite";
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { citation, sourceUrlFor } from "../../src/connectors/source-url";
import type { SourceRecord } from "../../src/connectors/types";
import { bearer, postJson, tempDir, testApp } from "../helpers";
import { CHINOOK_SQLITE } from "../support/chinook";
import { type TestServers, testServers } from "../support/servers";
import { imapSource, operatorFile } from "../support/sources";

setDefaultTimeout(60_000);

let servers: TestServers;
beforeAll(async () => {
  servers = await testServers();
});

const CHINOOK = CHINOOK_SQLITE;
const liteInvoices = [{ name: "Invoice", id: "InvoiceId", title: "BillingCity", text: ["BillingCountry", "BillingCity"] }];
const pgInvoices = [{ name: "invoice", id: "invoice_id", title: "billing_city", text: ["billing_country", "billing_city"] }];

async function setup() {
  const { imap } = servers;
  const file = operatorFile([
    imapSource(imap, "opmail", "Company mail"),
    { id: "oplite", kind: "sql", label: "Shop (SQLite)", config: { url: CHINOOK, tables: liteInvoices } },
    { id: "oppg", kind: "sql", label: "Shop (PostgreSQL)", config: { url: servers.pgUrl, tables: pgInvoices } },
    { id: "opmy", kind: "sql", label: "Shop (MariaDB)", config: { url: servers.mysqlUrl, tables: liteInvoices } },
    {
      id: "opweb",
      kind: "sql",
      label: "Shop (web)",
      config: { url: CHINOOK, tables: [{ ...liteInvoices[0], url: "https://shop.example/invoices/{id}" }] },
    },
  ]);
  const roots = tempDir("corpus-roots-");
  const t = await testApp({ CORPUS_CONNECTORS_FILE: file, CORPUS_CONNECTOR_ROOTS: join(roots, "{user}") });
  const gina = (await t.services.auth.issuer.issue("gina", ["corpus:search", "connectors:read", "connectors:write"] as never)).token;
  return { ...t, gina, roots };
}

/** Everything of the operator's that a user must never be shown, as it would appear in a URL (the account name alone is in the mail itself). */
const secrets = () => [
  `${servers.imap.user}@${servers.imap.host}`,
  `${servers.imap.host}:${servers.imap.port}`,
  String(servers.imap.port),
  new URL(servers.pgUrl).port,
  new URL(servers.mysqlUrl).port,
  CHINOOK,
  "imap://",
  "postgres://",
  "mysql://",
  "file://",
];

const urlsOf = (body: any): string[] =>
  body.results ? body.results.flatMap((g: any) => g.chunks.map((c: any) => c.source_url)) : body.sources.map((s: any) => s.source_url);

describe("search results name no operator host, account, database or path (issue 13 finding 5)", () => {
  test("REST shapes B and C: corpus://<connector>/<path>; a public URL template the operator chose is kept", async () => {
    const { app, gina } = await setup();
    const ask = async (body: Record<string, unknown>) => {
      const r = await app.handle(postJson("/v1/query", body, bearer(gina)));
      expect(r.status).toBe(200);
      return (await r.json()) as any;
    };
    const mail = await ask({ query: "Skilling", max_results: 2, connectors: ["opmail"] });
    expect(urlsOf(mail).length).toBeGreaterThan(0);
    for (const url of urlsOf(mail)) expect(url).toMatch(/^corpus:\/\/opmail\/INBOX;UIDVALIDITY=\d+\/;UID=\d+$/);
    const shapeC = await ask({ query: "Skilling", conversation_id: null, connectors: ["opmail"] });
    for (const url of urlsOf(shapeC)) expect(url).toMatch(/^corpus:\/\/opmail\/INBOX;UIDVALIDITY=\d+\/;UID=\d+$/);

    // oplite and opweb read the same rows: asked together, copies collapse into one result
    // (issue 16), so each is also asked alone.
    const shops = await ask({ query: "invoices from Germany", max_results: 2, connectors: ["oplite", "oppg"] });
    const web = await ask({ query: "invoices from Germany", max_results: 2, connectors: ["opweb"] });
    // MariaDB's copy holds SQLite's rows under SQLite's names: alone too.
    const my = await ask({ query: "invoices from Germany", max_results: 2, connectors: ["opmy"] });
    const byConnector = Object.fromEntries(
      [...shops.results, ...web.results, ...my.results].map((g: any) => [g.connector, g.chunks.map((c: any) => c.source_url)]),
    );
    expect(Object.keys(byConnector).sort()).toEqual(["oplite", "opmy", "oppg", "opweb"]);
    for (const url of byConnector.opmy) expect(url).toMatch(/^corpus:\/\/opmy\/Invoice\/\d+$/);
    for (const url of byConnector.oplite) expect(url).toMatch(/^corpus:\/\/oplite\/Invoice\/\d+$/);
    for (const url of byConnector.oppg) expect(url).toMatch(/^corpus:\/\/oppg\/invoice\/\d+$/);
    for (const url of byConnector.opweb) expect(url).toMatch(/^https:\/\/shop\.example\/invoices\/\d+$/);

    for (const body of [mail, shapeC, shops, web, my]) {
      const text = JSON.stringify(body);
      for (const secret of secrets()) expect({ secret, found: text.includes(secret) }).toEqual({ secret, found: false });
    }
  });

  test("MCP corpus_search: the text and structuredContent alike", async () => {
    const { app, gina } = await setup();
    const r = await app.handle(
      postJson(
        "/mcp",
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "corpus_search", arguments: { query: "Skilling invoices from Germany", maxResults: 8 } },
        },
        { accept: "application/json, text/event-stream", ...bearer(gina) },
      ),
    );
    expect(r.status).toBe(200);
    const body = (await r.json()) as any;
    const results = body.result.structuredContent.results as Array<{ connector: string; source_url: string }>;
    expect(results.length).toBeGreaterThan(0);
    for (const { connector, source_url } of results) {
      expect(source_url.startsWith(connector === "opweb" ? "https://shop.example/" : `corpus://${connector}/`)).toBe(true);
      expect(body.result.content[0].text).toContain(source_url);
    }
    const text = JSON.stringify(body);
    for (const secret of secrets()) expect({ secret, found: text.includes(secret) }).toEqual({ secret, found: false });
  });

  test("a user's own connector keeps its own URL, never with a password", async () => {
    const { app, gina, roots } = await setup();
    mkdirSync(join(roots, "gina"));
    const own = join(roots, "gina", "shop.sqlite");
    const db = new Database(own);
    db.exec("CREATE TABLE invoice (id INTEGER PRIMARY KEY, city TEXT)");
    db.query("INSERT INTO invoice (city) VALUES (?)").run("Quokkaville");
    db.close();
    const add = (id: string, table: Record<string, unknown>) =>
      app.handle(
        postJson(
          "/v1/connectors",
          { id, kind: "sql", config: { url: own, tables: [{ name: "invoice", id: "id", title: "city", text: ["city"], ...table }] } },
          bearer(gina),
        ),
      );
    expect((await add("mine", {})).status).toBe(200);
    expect((await add("mineweb", { url: "https://gina:hunter2@shop.example/i/{id}" })).status).toBe(200);
    const r = await app.handle(postJson("/v1/query", { query: "Quokkaville", connectors: ["mine", "mineweb"] }, bearer(gina)));
    const urls = Object.fromEntries(((await r.json()) as any).results.map((g: any) => [g.connector, g.chunks[0].source_url]));
    expect(urls).toEqual({ mine: `file://${own}#invoice/1`, mineweb: "https://gina@shop.example/i/1" });
  });

  test("one function per record: a path's segments are escaped; templates lose only a password", () => {
    const record = (source_url: string, path: string) => ({ source_url, path }) as SourceRecord;
    expect(citation("docs", "2024/March invoices/#1 a?b.txt")).toBe("corpus://docs/2024/March%20invoices/%231%20a%3Fb.txt");
    expect(sourceUrlFor({ id: "m", owner: "operator" }, record("file:///srv/mail/cur/1", "cur/1"))).toBe("corpus://m/cur/1");
    expect(sourceUrlFor({ id: "w", owner: "operator" }, record("https://op:pw@erp.example/o/7", "o/7"))).toBe("https://op@erp.example/o/7");
    expect(sourceUrlFor({ id: "u", owner: "user" }, record("imap://me@mail.example:993/INBOX;UID=4", "INBOX/4"))).toBe(
      "imap://me@mail.example:993/INBOX;UID=4",
    );
  });
});
