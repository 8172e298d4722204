// The connector control plane (D18, D20, D5) through the real app, with real sources.

import { Database } from "bun:sqlite";
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { cpSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { IndexedFolderConnector } from "../../src/connectors/indexed-source";
import { DomainError } from "../../src/errors";
import { OPERATOR_UNAVAILABLE } from "../../src/retrieval/search";
import { bearer, patchJson, postJson, req, tempDir, testApp } from "../helpers";
import { CHINOOK_SQLITE, chinookSource } from "../support/chinook";
import { hostilePostgres } from "../support/hostile-postgres";
import { SHARED_DATA, type TestServers, testServers } from "../support/servers";
import { ANSWERING, imapConfig, imapSource, operatorFile, sqlSource } from "../support/sources";

setDefaultTimeout(60_000);

let servers: TestServers;
beforeAll(async () => {
  servers = await testServers();
});

async function setup(env: Record<string, string> = {}, now?: () => number) {
  const roots = tempDir("corpus-roots-");
  // The test servers listen on loopback, which users may reach only when listed (D26).
  const t = await testApp({ CORPUS_CONNECTOR_ROOTS: roots, CORPUS_CONNECTOR_ALLOW_HOSTS: "127.0.0.1", ...env }, now);
  const token = async (user = "alice", scopes = ["connectors:read", "connectors:write"]) =>
    (await t.services.auth.issuer.issue(user, scopes as never)).token;
  return { ...t, roots, token };
}

const add = (tok: string, body: unknown) => postJson("/v1/connectors", body, bearer(tok));
const list = async (app: { handle(r: Request): Promise<Response> | Response }, tok: string) =>
  ((await (await app.handle(req("/v1/connectors", { headers: bearer(tok) }))).json()) as { connectors: Array<Record<string, any>> })
    .connectors;

/** The shop's invoices, each titled by its city, with its country as text. */
const INVOICE_CITIES = [{ name: "Invoice", id: "InvoiceId", title: "BillingCity", text: ["BillingCountry"] }];
/** An operator's database where nothing answers; its URL names an account, a host and a database to be kept from users. */
const OPS_DB = sqlSource("ops-db", "postgres://opsuser:opspass@127.0.0.1:1/ledger", [{ name: "t", id: "a", title: "b", text: ["c"] }]);

describe("GET/POST/DELETE /v1/connectors", () => {
  test("add a files connector under the allowed roots; it is listed with status and record count; then removed", async () => {
    const { app, roots, token, services } = await setup();
    const docs = join(roots, "docs");
    mkdirSync(docs);
    cpSync(join(SHARED_DATA, "invoices", "Orlen.txt"), join(docs, "Orlen.txt"));
    const tok = await token();
    const r = await app.handle(add(tok, { id: "docs", kind: "files", label: "Invoices", config: { path: docs } }));
    expect(r.status).toBe(200);
    const created = (await r.json()) as Record<string, unknown>;
    expect(created).toMatchObject({ id: "docs", kind: "files", label: "Invoices", owner: "user", config: { path: docs } });
    expect(created.status).toBe("indexing");
    // Read, then embedded: only then ok (issue 14).
    const docsConnector = (await services.connectors.active("alice", ["docs"]))[0]!.connector as IndexedFolderConnector;
    await docsConnector.sync();
    await docsConnector.embedPending();
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
    const imap = imapConfig(servers.imap);
    const ok = (await (await app.handle(add(tok, { id: "mail", kind: "imap", config: imap }))).json()) as Record<string, any>;
    expect(ok).toMatchObject({ id: "mail", status: "ok", records: 1702 });
    expect(ok.config).not.toHaveProperty("password");
    expect(JSON.stringify(ok)).not.toContain(servers.imap.password);

    const bad = (await (
      await app.handle(add(tok, { id: "mail2", kind: "imap", config: { ...imap, password: "wrong-pass-123" } }))
    ).json()) as Record<string, any>;
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
    const body = {
      id: "shop",
      kind: "sql",
      config: {
        url: servers.pgUrl,
        tables: [{ name: "invoice", id: "invoice_id", title: "billing_city", text: ["billing_country"], date: "invoice_date" }],
      },
    };
    const created = (await (await app.handle(add(tok, body))).json()) as Record<string, any>;
    expect(created).toMatchObject({ status: expect.stringMatching(ANSWERING), records: 412 });
    expect(created.config.url).toBe(servers.pgUrl.replace("shop-pass", "***"));
  });

  test("bad input: 400 naming the field, 409 for a taken id, 403 for paths outside the roots or in the data dir", async () => {
    const { app, token, roots, config } = await setup();
    const tok = await token();
    const cases: Array<[unknown, number, RegExp]> = [
      [{ id: "Bad Id", kind: "files", config: { path: roots } }, 400, /^id: /],
      [{ id: "x", kind: "ftp", config: {} }, 400, /kind/],
      [{ id: "x", kind: "imap", config: { host: "h", user: "u", password: "p", port: 99999 } }, 400, /^config\.port: /],
      [
        {
          id: "x",
          kind: "sql",
          config: { url: servers.pgUrl, tables: [{ name: "invoice; DROP TABLE x", id: "a", title: "b", text: ["c"] }] },
        },
        400,
        /^config\.tables\.0\.name: /,
      ],
      [{ id: "x", kind: "files", config: { path: roots }, extra: 1 }, 400, /extra/],
      [{ id: "x", kind: "files", config: { path: "relative/docs" } }, 400, /absolute/],
      [{ id: "x", kind: "files", config: { path: "/etc" } }, 403, /outside the folders/],
      [
        { id: "x", kind: "sql", config: { url: "/etc/passwd", tables: [{ name: "t", id: "a", title: "b", text: ["c"] }] } },
        403,
        /outside the folders/,
      ],
      [{ id: "x", kind: "maildir", config: { path: config.CORPUS_DATA_DIR } }, 403, /data folder/],
    ];
    for (const [body, status, message] of cases) {
      const r = await app.handle(add(tok, body));
      const json = (await r.json()) as { type: string; message: string };
      expect([JSON.stringify(body), r.status]).toEqual([JSON.stringify(body), status]);
      expect(json.message).toMatch(message);
    }
    await app.handle(add(tok, { id: "dup", kind: "files", config: { path: roots } }));
    // The same connector again is a retry (issue 18 gap 8), answered; another under its id is 409.
    expect((await app.handle(add(tok, { id: "dup", kind: "files", config: { path: roots } }))).status).toBe(200);
    const dup = await app.handle(add(tok, { id: "dup", kind: "files", label: "Other", config: { path: roots } }));
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
    const file = operatorFile([chinookSource(INVOICE_CITIES)]);
    const { app, token } = await setup({ CORPUS_CONNECTORS_FILE: file });
    for (const user of ["alice", "bob"]) {
      expect(await list(app, await token(user))).toEqual([
        expect.objectContaining({
          id: "shop",
          label: "Chinook shop",
          owner: "operator",
          status: expect.stringMatching(ANSWERING),
          records: 412,
        }),
      ]);
    }
    const r = await app.handle(req("/v1/connectors/shop", { method: "DELETE", headers: bearer(await token()) }));
    expect(r.status).toBe(403);
    const clash = await app.handle(add(await token(), { id: "shop", kind: "files", config: { path: "/tmp" } }));
    expect(clash.status).toBe(409);
    expect((await app.handle(req("/api/connectors/health"))).status).toBe(200);
  });

  test("attack: an operator file that later takes a user's connector id leaves it theirs, to change and remove; then they see the operator's", async () => {
    const dataDir = tempDir("corpus-clash-data-");
    const first = await setup({ CORPUS_DATA_DIR: dataDir });
    const docs = join(first.roots, "docs");
    mkdirSync(docs);
    writeFileSync(join(docs, "notes.txt"), "call Bob about the loan");
    const alice = await first.token();
    expect((await first.app.handle(add(alice, { id: "shop", kind: "files", config: { path: docs } }))).status).toBe(200);
    await first.services.close();

    const file = operatorFile([chinookSource(INVOICE_CITIES)]);
    const { app, token, services } = await setup({
      CORPUS_DATA_DIR: dataDir,
      CORPUS_CONNECTORS_FILE: file,
      CORPUS_CONNECTOR_ROOTS: first.roots,
    });
    const tok = await token();
    // One connector under the id, hers; bob sees the operator's.
    expect((await list(app, tok)).map((c) => [c.id, c.owner])).toEqual([["shop", "user"]]);
    expect((await list(app, await token("bob"))).map((c) => [c.id, c.owner])).toEqual([["shop", "operator"]]);
    expect((await services.connectors.active("alice", ["shop"])).map((a) => a.owner)).toEqual(["user"]);
    const relabel = await app.handle(patchJson("/v1/connectors/shop", { label: "Mine" }, bearer(tok)));
    expect(relabel.status).toBe(200);
    const del = await app.handle(req("/v1/connectors/shop", { method: "DELETE", headers: bearer(tok) }));
    expect(await del.json()).toEqual({ id: "shop", deleted: true });
    expect((await list(app, tok)).map((c) => [c.id, c.owner])).toEqual([["shop", "operator"]]);
    await services.close();
  });

  test("users see the operator's connectors by id, kind, label and status: not their mail account, host, port or error", async () => {
    const { imap } = servers;
    const file = operatorFile([imapSource(imap, "ops-mail", "Support inbox"), OPS_DB]);
    const { app, token } = await setup({ CORPUS_CONNECTORS_FILE: file });
    const shown = await list(app, await token("mallory", ["connectors:read"]));
    expect(shown.map((c) => Object.keys(c).sort())).toEqual([
      ["id", "kind", "label", "owner", "records", "status"],
      ["id", "kind", "label", "owner", "status"],
    ]);
    expect(shown).toEqual([
      expect.objectContaining({ id: "ops-mail", kind: "imap", label: "Support inbox", owner: "operator", status: "ok" }),
      { id: "ops-db", kind: "sql", label: "ops-db", owner: "operator", status: "error" },
    ]);
    const text = JSON.stringify(shown);
    for (const secret of [imap.user, String(imap.port), "opsuser", "127.0.0.1", "ledger"]) expect(text).not.toContain(secret);
  });

  test("a search while an operator connector fails notes it as unavailable, not with its host, account or URL", async () => {
    const file = operatorFile([OPS_DB]);
    const { app, token } = await setup({ CORPUS_CONNECTORS_FILE: file });
    const r = await app.handle(postJson("/v1/query", { query: "invoices of March" }, bearer(await token("mallory", ["corpus:search"]))));
    expect(r.status).toBe(200);
    const body = (await r.json()) as { search_summary: { notes?: string[] } };
    expect(body.search_summary.notes).toEqual([`ops-db: ${OPERATOR_UNAVAILABLE}`]);
    for (const secret of ["opsuser", "127.0.0.1", "ledger", "postgres"]) expect(JSON.stringify(body)).not.toContain(secret);
  });

  test("an operator connector in error makes /api/connectors/health 503, naming no connector, host or URL (the log does); a bad file stops start-up", async () => {
    const file = operatorFile([
      sqlSource("gone", "postgres://u:p@127.0.0.1:1/x", [{ name: "t", id: "a", title: "b", text: ["c"] }]),
      sqlSource("shop", CHINOOK_SQLITE, INVOICE_CITIES),
    ]);
    const { app, logs } = await setup({ CORPUS_CONNECTORS_FILE: file });
    const r = await app.handle(req("/api/connectors/health"));
    expect(r.status).toBe(503);
    expect(await r.json()).toEqual({
      status: "unhealthy",
      service: "connectors",
      reason: "1 of 2 operator connectors in error; see the log",
      pending: { archive_vectors: 0, connector_chunks: 0, webhook_deliveries: 0, deletion_steps: 0 },
    });
    // Asked again (a monitor polls it): still one line in the log, which says which and why.
    await app.handle(req("/api/connectors/health"));
    const logged = logs.records().filter((l) => l.message === "operator connector in error");
    expect(logged).toEqual([
      expect.objectContaining({
        level: "WARNING",
        connector: "gone",
        reason: expect.stringContaining("database postgres://u:***@127.0.0.1:1/x"),
      }),
    ]);
    writeFileSync(file, JSON.stringify([{ id: "x", kind: "imap", config: { host: "h" } }]));
    await expect(setup({ CORPUS_CONNECTORS_FILE: file })).rejects.toThrow(/CORPUS_CONNECTORS_FILE=.* connector 1: config/);
  });
});

describe("connectors per user are capped (CORPUS_MAX_CONNECTORS_PER_USER; issue 13, item 11)", () => {
  test("one more than the cap is 409 conflict naming the limit, even sent all at once; the operator's do not count; removing one makes room", async () => {
    const file = operatorFile([sqlSource("shop", CHINOOK_SQLITE, INVOICE_CITIES)]);
    const { app, roots, token } = await setup({ CORPUS_MAX_CONNECTORS_PER_USER: "2", CORPUS_CONNECTORS_FILE: file });
    const alice = await token();
    const burst = await Promise.all(
      [0, 1, 2, 3, 4].map((i) => app.handle(add(alice, { id: `docs${i}`, kind: "files", config: { path: roots } }))),
    );
    expect(burst.map((r) => r.status).sort()).toEqual([200, 200, 409, 409, 409]);
    const refused = (await burst.find((r) => r.status === 409)!.json()) as { type: string; message: string };
    expect(refused).toEqual({ type: "conflict", message: expect.stringContaining("CORPUS_MAX_CONNECTORS_PER_USER=2") });
    expect((await list(app, alice)).filter((c) => c.owner === "user")).toHaveLength(2);
    expect((await app.handle(add(await token("bob"), { id: "bobs", kind: "files", config: { path: roots } }))).status).toBe(200);
    const kept = (await list(app, alice)).find((c) => c.owner === "user")!;
    expect((await app.handle(req(`/v1/connectors/${kept.id}`, { method: "DELETE", headers: bearer(alice) }))).status).toBe(200);
    expect((await app.handle(add(alice, { id: "again", kind: "files", config: { path: roots } }))).status).toBe(200);
  });
});

// D23, attacked through the API: CORPUS_CONNECTOR_ROOTS=BASE/{user}; bob's folder holds a
// document with BOB_WORD, a folder outside every root holds OUTSIDE_WORD, and the data folder
// holds the signing key. No query of anyone else may return them, whatever is linked where.
const BOB_WORD = "BOBPRIVATE7731";
const OUTSIDE_WORD = "OUTSIDESECRET4242";
const QUESTION = "Zanzibar quokka ledger";

/** `rootsOf` gives CORPUS_CONNECTOR_ROOTS for the base folder: per user by default. */
async function perUser(env: Record<string, string> = {}, rootsOf = (base: string) => join(base, "{user}")) {
  const base = realpathSync(tempDir("corpus-user-roots-"));
  const bobDocs = join(base, "bob", "docs");
  mkdirSync(join(bobDocs, "sub"), { recursive: true });
  mkdirSync(join(base, "alice", "docs"), { recursive: true });
  writeFileSync(join(bobDocs, "ledger.txt"), `Zanzibar quokka ledger of bob: ${BOB_WORD}\n`);
  writeFileSync(join(bobDocs, "sub", "inner.txt"), `Zanzibar quokka ledger, inner: ${BOB_WORD}\n`);
  writeFileSync(join(base, "alice", "docs", "notes.txt"), "Zanzibar quokka ledger of alice.\n");
  const outside = realpathSync(tempDir("corpus-outside-"));
  writeFileSync(join(outside, "ledger.txt"), `Zanzibar quokka ledger: ${OUTSIDE_WORD}\n`);
  writeFileSync(join(outside, "inner.txt"), `Zanzibar quokka ledger: ${OUTSIDE_WORD}\n`);
  const t = await testApp({ CORPUS_CONNECTOR_ROOTS: rootsOf(base), ...env });
  const token = async (user: string) =>
    (await t.services.auth.issuer.issue(user, ["connectors:read", "connectors:write", "corpus:search"])).token;
  // The answer as text: whatever a record carries (title, snippet, path, metadata) is in it.
  const ask = async (tok: string, question = QUESTION) => {
    const r = await t.app.handle(postJson("/v1/query", { q: question, top_k: 50 }, bearer(tok)));
    expect(r.status).toBe(200);
    return JSON.stringify(await r.json());
  };
  // Adds a connector as `tok`: the status of the answer.
  const added = async (tok: string, body: object) => (await t.app.handle(add(tok, body))).status;
  // The next scan, now rather than after RESCAN_MS: what a later search would do.
  const rescan = async (user: string, id: string) => {
    const [a] = await t.services.connectors.active(user, [id]);
    await (a!.connector as IndexedFolderConnector).sync();
    return a!.connector.health();
  };
  return { ...t, base, bobDocs, outside, token, ask, added, rescan, bob: await token("bob"), alice: await token("alice") };
}

/** Replaces `path` by a link to `target`, as its owner may do at any time after adding it. */
function swapForLink(path: string, target: string) {
  renameSync(path, `${path}.moved`);
  symlinkSync(target, path);
}

function sqliteShop(path: string, city: string) {
  const db = new Database(path);
  db.exec("CREATE TABLE invoice (id INTEGER PRIMARY KEY, city TEXT, note TEXT)");
  db.query("INSERT INTO invoice (city, note) VALUES (?, ?)").run("Zanzibar", city);
  db.close();
}
const shopTables = [{ name: "invoice", id: "id", title: "city", text: ["city", "note"] }];
// Links put in place after adding are refused whether the root is bob's own or shared.
const ROOT_STYLES: Array<[string, (base: string) => string]> = [
  ["BASE/{user}", (base) => join(base, "{user}")],
  ["shared BASE", (base) => base],
];

describe("local paths are per user and checked on every scan (D23)", () => {
  test("alice cannot add bob's folder (or the folder above it), and her queries never return bob's words", async () => {
    const t = await perUser();
    expect(await t.added(t.bob, { id: "docs", kind: "files", config: { path: t.bobDocs } })).toBe(200);
    expect(await t.ask(t.bob)).toContain(BOB_WORD);
    for (const path of [t.bobDocs, join(t.base, "bob"), t.base, join(t.base, "alice", "..", "bob", "docs")]) {
      const r = await t.app.handle(add(t.alice, { id: "theirs", kind: "files", config: { path } }));
      expect([path, r.status]).toEqual([path, 403]);
      expect(((await r.json()) as { message: string }).message).toMatch(/outside the folders/);
    }
    expect(await t.added(t.alice, { id: "mine", kind: "files", config: { path: join(t.base, "alice", "docs") } })).toBe(200);
    const answer = await t.ask(t.alice);
    expect(answer).toContain("ledger of alice");
    expect(answer).not.toContain(BOB_WORD);
    await t.services.close();
  });

  test("a link in alice's own folder to bob's is refused too", async () => {
    const t = await perUser();
    expect(await t.added(t.alice, { id: "mine", kind: "files", config: { path: join(t.base, "alice", "docs") } })).toBe(200);
    symlinkSync(t.bobDocs, join(t.base, "alice", "bobs"));
    expect(await t.added(t.alice, { id: "theirs", kind: "maildir", config: { path: join(t.base, "alice", "bobs") } })).toBe(403);
    expect(await t.ask(t.alice)).not.toContain(BOB_WORD);
    await t.services.close();
  });

  test("a SQLite file: bob's is his; alice adding it gets 403 and never reads its rows", async () => {
    const t = await perUser();
    const file = join(t.base, "bob", "shop.sqlite");
    sqliteShop(file, `quokka ledger ${BOB_WORD}`);
    const body = (url: string) => ({ id: "shop", kind: "sql", config: { url, tables: shopTables } });
    const created = await t.app.handle(add(t.bob, body(file)));
    expect(created.status).toBe(200);
    expect(await created.json()).toMatchObject({ status: expect.stringMatching(ANSWERING), records: 1, config: { url: file } });
    expect(await t.ask(t.bob)).toContain(BOB_WORD);
    expect(await t.added(t.alice, body(file))).toBe(403);
    expect(await t.ask(t.alice)).not.toContain(BOB_WORD);
    await t.services.close();
  });

  test("a path that does not exist is refused (400 in one's own folder, 403 in another's), so no link can be put there later", async () => {
    const t = await perUser();
    const later = join(t.base, "bob", "later");
    const mine = await t.app.handle(add(t.bob, { id: "later", kind: "files", config: { path: later } }));
    expect(mine.status).toBe(400);
    expect(((await mine.json()) as { message: string }).message).toBe(`${later} does not exist`);
    expect(await t.added(t.bob, { id: "db", kind: "sql", config: { url: join(t.base, "bob", "later.sqlite"), tables: shopTables } })).toBe(
      400,
    );
    expect(await t.added(t.alice, { id: "later", kind: "files", config: { path: later } })).toBe(403);
    // What the attacker did next: put a link where the path was promised.
    symlinkSync(t.config.CORPUS_DATA_DIR, later);
    expect(await list(t.app, t.bob)).toEqual([]);
    await t.services.close();
  });

  test.each(ROOT_STYLES)(
    "roots %s: the folder swapped for a link to the data folder after adding: nothing of it comes back, status error",
    async (_style, rootsOf) => {
      const t = await perUser({}, rootsOf);
      const kid = (JSON.parse(readFileSync(join(t.config.CORPUS_DATA_DIR, "signing-key.json"), "utf8")) as { kid: string }).kid;
      expect(await t.added(t.bob, { id: "docs", kind: "files", config: { path: t.bobDocs } })).toBe(200);
      expect(await t.ask(t.bob)).toContain(BOB_WORD);
      swapForLink(t.bobDocs, t.config.CORPUS_DATA_DIR);
      const status = await t.rescan("bob", "docs");
      for (const question of ["EdDSA Ed25519 signing key kid", "public jwk OKP", QUESTION])
        expect(await t.ask(t.bob, question)).not.toContain(kid);
      expect(status).toMatchObject({ status: "error", reason: expect.stringMatching(/data folder|no longer leads/) });
      await t.services.close();
    },
  );

  test.each(ROOT_STYLES)(
    "roots %s: a file, a subfolder or the folder swapped for a link outside the roots after adding: nothing from outside comes back",
    async (_style, rootsOf) => {
      const t = await perUser({}, rootsOf);
      const links: Array<[string, string]> = [
        [join(t.bobDocs, "ledger.txt"), join(t.outside, "ledger.txt")],
        [join(t.bobDocs, "sub"), t.outside],
        [t.bobDocs, t.outside],
      ];
      expect(await t.added(t.bob, { id: "docs", kind: "files", config: { path: t.bobDocs } })).toBe(200);
      expect(await t.ask(t.bob)).toContain(BOB_WORD);
      for (const [path, target] of links) {
        swapForLink(path, target);
        await t.rescan("bob", "docs");
        expect(await t.ask(t.bob)).not.toContain(OUTSIDE_WORD);
      }
      expect(await t.rescan("bob", "docs")).toMatchObject({ status: "error" });
      await t.services.close();
    },
  );

  test.each(ROOT_STYLES)(
    "roots %s: a SQLite file swapped for a link after adding is refused when it is next opened (here: after a restart)",
    async (_style, rootsOf) => {
      const t = await perUser({}, rootsOf);
      const file = join(t.base, "bob", "shop.sqlite");
      sqliteShop(file, "quokka ledger, bob's own");
      sqliteShop(join(t.outside, "other.sqlite"), `quokka ledger ${OUTSIDE_WORD}`);
      expect(await t.added(t.bob, { id: "shop", kind: "sql", config: { url: file, tables: shopTables } })).toBe(200);
      await t.services.close();
      swapForLink(file, join(t.outside, "other.sqlite"));
      const again = await testApp({ CORPUS_DATA_DIR: t.config.CORPUS_DATA_DIR, CORPUS_CONNECTOR_ROOTS: t.config.CORPUS_CONNECTOR_ROOTS });
      const r = await again.app.handle(postJson("/v1/query", { q: QUESTION }, bearer(t.bob)));
      expect(JSON.stringify(await r.json())).not.toContain(OUTSIDE_WORD);
      expect(await list(again.app, t.bob)).toEqual([
        expect.objectContaining({ id: "shop", status: "error", reason: expect.stringMatching(/through a link|no longer leads/) }),
      ]);
      await again.services.close();
    },
  );

  test("a subject that cannot name a folder gets no {user} root: 403 with the reason", async () => {
    const t = await perUser();
    for (const user of ["..", "x/../bob", "../bob"]) {
      const tried = t.services.connectors.add(user, { id: "docs", kind: "files", config: { path: t.bobDocs } } as never);
      await expect(tried).rejects.toBeInstanceOf(DomainError);
      await expect(tried).rejects.toMatchObject({ kind: "forbidden", message: expect.stringContaining("cannot name a folder") });
      // Through the API such a subject is refused before that (D24) or with the same 403.
      const tok = (await t.services.auth.issuer.sign(user, ["connectors:write", "connectors:read"], 600)).token;
      expect([401, 403]).toContain(await t.added(tok, { id: "docs", kind: "files", config: { path: t.bobDocs } }));
    }
    await t.services.close();
  });

  test("a shared root (no {user}) still works for everyone, and start-up warns that it is shared", async () => {
    const shared = realpathSync(tempDir("corpus-shared-"));
    mkdirSync(join(shared, "team"));
    writeFileSync(join(shared, "team", "plan.txt"), "Zanzibar quokka ledger for the whole team.\n");
    const t = await perUser({ CORPUS_CONNECTOR_ROOTS: `${shared}, ${join(tempDir(), "{user}")}` });
    for (const tok of [t.alice, t.bob]) {
      expect(await t.added(tok, { id: "team", kind: "files", config: { path: join(shared, "team") } })).toBe(200);
      expect(await t.ask(tok)).toContain("for the whole team");
    }
    const warnings = t.logs.records().filter((l) => l.level === "WARNING" && String(l.message).includes("shared"));
    expect(warnings).toEqual([expect.objectContaining({ root: shared })]);
    await t.services.close();
  });
});

describe("the control plane does not wait on slow sources (issue 18 gap 8; D18)", () => {
  const pg = (port: number) => ({
    url: `postgres://reader:pw-123@127.0.0.1:${port}/shop`,
    tables: [{ name: "t", id: "a", title: "b", text: ["c"] }],
  });
  /** The response, or "waited" if it takes longer than `ms` (the source's check takes 8 s). */
  const within = (p: Promise<Response> | Response, ms: number) =>
    Promise.race([Promise.resolve(p), Bun.sleep(ms).then(() => "waited" as const)]);

  test("D18 GET /v1/connectors: the last known status at once, the check repeated in the background, not awaited", async () => {
    let clock = Date.UTC(2026, 10, 23, 12, 0, 0);
    const refusing = await hostilePostgres("ask-password");
    const { app, token } = await setup({}, () => clock);
    const alice = await token();
    const added = await app.handle(add(alice, { id: "books", kind: "sql", config: pg(refusing.port) }));
    expect(((await added.json()) as any).status).toBe("error");
    // The source now accepts connections and never answers.
    const port = refusing.port;
    await refusing.close();
    const silent = await hostilePostgres("silent", "127.0.0.1", port);
    try {
      clock += 60_000; // the known status is old: it is checked again
      const first = await within(app.handle(req("/v1/connectors", { headers: bearer(alice) })), 1_500);
      expect(first).not.toBe("waited");
      const listed = ((await (first as Response).json()) as any).connectors;
      expect(listed).toEqual([expect.objectContaining({ id: "books", status: "error", reason: expect.stringContaining("login failed") })]);
      await Bun.sleep(50);
      expect(silent.connections).toBeGreaterThan(0);
      // While that check hangs, every list still answers at once.
      for (let i = 0; i < 3; i++)
        expect(await within(app.handle(req("/v1/connectors", { headers: bearer(alice) })), 1_500)).not.toBe("waited");
    } finally {
      await silent.close();
    }
  });

  test("D18 POST /v1/connectors with a source that does not answer: answered within the request timeout (status checking), and the same POST again is 200, not 409", async () => {
    const silent = await hostilePostgres("silent");
    const { app, token } = await setup({ CORPUS_REQUEST_TIMEOUT: "1" });
    const alice = await token();
    try {
      const body = { id: "slow", kind: "sql", config: pg(silent.port) };
      const first = await app.handle(add(alice, body));
      expect(first.status).toBe(200);
      expect(await first.json()).toMatchObject({ id: "slow", status: "checking" });
      const again = await app.handle(add(alice, body));
      expect(again.status).toBe(200);
      expect(await again.json()).toMatchObject({ id: "slow", status: "checking" });
      expect((await list(app, alice)).map((c) => c.id)).toEqual(["slow"]);
      // Another connector under the taken id is still refused.
      expect((await app.handle(add(alice, { ...body, label: "Other" }))).status).toBe(409);
    } finally {
      await silent.close();
    }
  });
});
