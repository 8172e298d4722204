// The connector control plane (D18, D20, D5) through the real app, with real sources.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bearer, postJson, req, tempDir, testApp } from "../helpers";
import { SHARED_DATA, testServers, type TestServers } from "../support/servers";

setDefaultTimeout(60_000);

let servers: TestServers;
beforeAll(async () => {
  servers = await testServers();
});

async function setup(env: Record<string, string> = {}) {
  const roots = tempDir("corpus-roots-");
  const t = await testApp({ CORPUS_CONNECTOR_ROOTS: roots, ...env });
  const token = async (user = "alice", scopes = ["connectors:read", "connectors:write"]) => (await t.services.auth.issuer.issue(user, scopes as never)).token;
  return { ...t, roots, token };
}

const add = (tok: string, body: unknown) => postJson("/v1/connectors", body, bearer(tok));
const list = async (app: { handle(r: Request): Promise<Response> | Response }, tok: string) =>
  ((await (await app.handle(req("/v1/connectors", { headers: bearer(tok) }))).json()) as { connectors: Array<Record<string, any>> }).connectors;

describe("GET/POST/DELETE /v1/connectors", () => {
  test("add a files connector under the allowed roots; it is listed with status and record count; then removed", async () => {
    const { app, roots, token } = await setup();
    const docs = join(roots, "docs");
    mkdirSync(docs);
    cpSync(join(SHARED_DATA, "invoices", "Orlen.txt"), join(docs, "Orlen.txt"));
    const tok = await token();
    const r = await app.handle(add(tok, { id: "docs", kind: "files", label: "Invoices", config: { path: docs } }));
    expect(r.status).toBe(200);
    const created = (await r.json()) as Record<string, unknown>;
    expect(created).toMatchObject({ id: "docs", kind: "files", label: "Invoices", owner: "user", config: { path: docs } });
    expect(["ok", "indexing"]).toContain(created.status as string);
    await Bun.sleep(300);
    const [listed] = await list(app, tok);
    expect(listed).toMatchObject({ id: "docs", status: "ok", records: 1 });

    const del = await app.handle(req("/v1/connectors/docs", { method: "DELETE", headers: bearer(tok) }));
    expect(await del.json()).toEqual({ id: "docs", deleted: true });
    expect(await list(app, tok)).toEqual([]);
    const again = await app.handle(req("/v1/connectors/docs", { method: "DELETE", headers: bearer(tok) }));
    expect(again.status).toBe(404);
  });

  test("an IMAP connector: the password is stored sealed and never returned; a wrong one is saved with status error", async () => {
    const { app, token, config, db } = await setup();
    const tok = await token();
    const imap = { host: servers.imap.host, port: servers.imap.port, secure: false, user: servers.imap.user, password: servers.imap.password, mailbox: "INBOX" };
    const ok = (await (await app.handle(add(tok, { id: "mail", kind: "imap", config: imap }))).json()) as Record<string, any>;
    expect(ok).toMatchObject({ id: "mail", status: "ok", records: 1702 });
    expect(ok.config).not.toHaveProperty("password");
    expect(JSON.stringify(ok)).not.toContain(servers.imap.password);

    const bad = (await (await app.handle(add(tok, { id: "mail2", kind: "imap", config: { ...imap, password: "wrong-pass-123" } }))).json()) as Record<string, any>;
    expect(bad).toMatchObject({ id: "mail2", status: "error", reason: `IMAP login failed for enron at 127.0.0.1:${servers.imap.port}` });

    const listed = JSON.stringify(await list(app, tok));
    expect(listed).not.toContain(servers.imap.password);
    expect(listed).not.toContain("wrong-pass-123");
    // At rest: neither password is in any file of the data dir.
    db.exec("PRAGMA wal_checkpoint(FULL)");
    for (const f of readdirSync(config.CORPUS_DATA_DIR)) {
      const bytes = readFileSync(join(config.CORPUS_DATA_DIR, f));
      expect(bytes.includes(Buffer.from(servers.imap.password))).toBe(false);
      expect(bytes.includes(Buffer.from("wrong-pass-123"))).toBe(false);
    }
  });

  test("a PostgreSQL connector: the URL's password is never shown", async () => {
    const { app, token } = await setup();
    const tok = await token();
    const body = { id: "shop", kind: "sql", config: { url: servers.pgUrl, tables: [{ name: "invoice", id: "invoice_id", title: "billing_city", text: ["billing_country"], date: "invoice_date" }] } };
    const created = (await (await app.handle(add(tok, body))).json()) as Record<string, any>;
    expect(created).toMatchObject({ status: "ok", records: 412 });
    expect(created.config.url).toBe(servers.pgUrl.replace("shop-pass", "***"));
  });

  test("bad input: 400 naming the field, 409 for a taken id, 403 for paths outside the roots or in the data dir", async () => {
    const { app, token, roots, config } = await setup();
    const tok = await token();
    const cases: Array<[unknown, number, RegExp]> = [
      [{ id: "Bad Id", kind: "files", config: { path: roots } }, 400, /^id: /],
      [{ id: "x", kind: "ftp", config: {} }, 400, /kind/],
      [{ id: "x", kind: "imap", config: { host: "h", user: "u", password: "p", port: 99999 } }, 400, /^config\.port: /],
      [{ id: "x", kind: "sql", config: { url: servers.pgUrl, tables: [{ name: "invoice; DROP TABLE x", id: "a", title: "b", text: ["c"] }] } }, 400, /^config\.tables\.0\.name: /],
      [{ id: "x", kind: "files", config: { path: roots }, extra: 1 }, 400, /extra/],
      [{ id: "x", kind: "files", config: { path: "relative/docs" } }, 400, /absolute/],
      [{ id: "x", kind: "files", config: { path: "/etc" } }, 403, /outside the folders/],
      [{ id: "x", kind: "sql", config: { url: "/etc/passwd", tables: [{ name: "t", id: "a", title: "b", text: ["c"] }] } }, 403, /outside the folders/],
      [{ id: "x", kind: "maildir", config: { path: config.CORPUS_DATA_DIR } }, 403, /data folder/],
    ];
    for (const [body, status, message] of cases) {
      const r = await app.handle(add(tok, body));
      const json = (await r.json()) as { type: string; message: string };
      expect([JSON.stringify(body), r.status]).toEqual([JSON.stringify(body), status]);
      expect(json.message).toMatch(message);
    }
    await app.handle(add(tok, { id: "dup", kind: "files", config: { path: roots } }));
    const dup = await app.handle(add(tok, { id: "dup", kind: "files", config: { path: roots } }));
    expect(dup.status).toBe(409);
  });

  test("local connectors are refused while CORPUS_CONNECTOR_ROOTS is empty", async () => {
    const { app, token } = await setup({ CORPUS_CONNECTOR_ROOTS: "" });
    const r = await app.handle(add(await token(), { id: "x", kind: "files", config: { path: "/srv" } }));
    expect(r.status).toBe(403);
    expect(((await r.json()) as { message: string }).message).toContain("CORPUS_CONNECTOR_ROOTS");
  });

  test("scopes (D5): reading needs connectors:read, changing needs connectors:write; users see only their own", async () => {
    const { app, token, roots } = await setup();
    const reader = await token("alice", ["connectors:read"]);
    expect((await app.handle(add(reader, { id: "x", kind: "files", config: { path: roots } }))).status).toBe(403);
    const writerOnly = await token("alice", ["connectors:write"]);
    expect((await app.handle(req("/v1/connectors", { headers: bearer(writerOnly) }))).status).toBe(403);
    expect((await app.handle(req("/v1/connectors"))).status).toBe(401);
    const alice = await token("alice");
    await app.handle(add(alice, { id: "mine", kind: "files", config: { path: roots } }));
    expect(await list(app, await token("bob"))).toEqual([]);
    expect((await app.handle(req("/v1/connectors/mine", { method: "DELETE", headers: bearer(await token("bob")) }))).status).toBe(404);
  });

  test("operator connectors (CORPUS_CONNECTORS_FILE) are visible to every user and cannot be removed by them", async () => {
    const file = join(tempDir(), "connectors.json");
    writeFileSync(file, JSON.stringify([{ id: "shop", kind: "sql", label: "Chinook shop", config: { url: join(SHARED_DATA, "chinook", "Chinook_Sqlite.sqlite"), tables: [{ name: "Invoice", id: "InvoiceId", title: "BillingCity", text: ["BillingCountry"] }] } }]));
    const { app, token } = await setup({ CORPUS_CONNECTORS_FILE: file });
    for (const user of ["alice", "bob"]) {
      expect(await list(app, await token(user))).toEqual([
        expect.objectContaining({ id: "shop", label: "Chinook shop", owner: "operator", status: "ok", records: 412 }),
      ]);
    }
    const r = await app.handle(req("/v1/connectors/shop", { method: "DELETE", headers: bearer(await token()) }));
    expect(r.status).toBe(403);
    const clash = await app.handle(add(await token(), { id: "shop", kind: "files", config: { path: "/tmp" } }));
    expect(clash.status).toBe(409);
    expect((await app.handle(req("/api/connectors/health"))).status).toBe(200);
  });

  test("an operator connector in error makes /api/connectors/health 503; a bad file stops start-up", async () => {
    const file = join(tempDir(), "connectors.json");
    writeFileSync(file, JSON.stringify([{ id: "gone", kind: "sql", config: { url: "postgres://u:p@127.0.0.1:1/x", tables: [{ name: "t", id: "a", title: "b", text: ["c"] }] } }]));
    const { app } = await setup({ CORPUS_CONNECTORS_FILE: file });
    const r = await app.handle(req("/api/connectors/health"));
    expect(r.status).toBe(503);
    expect(((await r.json()) as { reason: string }).reason).toContain("gone: database postgres://u:***@127.0.0.1:1/x refused the connection");
    writeFileSync(file, JSON.stringify([{ id: "x", kind: "imap", config: { host: "h" } }]));
    await expect(setup({ CORPUS_CONNECTORS_FILE: file })).rejects.toThrow(/CORPUS_CONNECTORS_FILE=.* connector 1: config/);
  });
});
