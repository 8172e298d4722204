// Every way work for a user begins makes their data key ready (D33): the node's keys here are the
// shared PostgreSQL's (the rooms around them embedded), where a synchronous use of a key that no
// `ready` brought to the node fails (UserKeyNotReady, a 500). Each path is taken by a user this
// node has not met, whose key another node made or none has: a question (and its archive, its
// vectors computed in the background), a conversation, deep_search, a cited document's page, an MCP tool, a connector
// added and indexed, webhooks, the archive's owed vectors resumed by a node that did not ask.
// (The deletion, which runs in the shared database's transaction, is users/deletion-shared.test.ts's.)
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Elysia } from "elysia";
import { createApp } from "../../src/app";
import { SqliteArchiveRows } from "../../src/archive/rows";
import { Archive } from "../../src/archive/store";
import { guard } from "../../src/auth/guard";
import { OPERATOR_OWNER } from "../../src/auth/subjects";
import { loadMasterKey } from "../../src/crypto/master-key";
import { UserKeyNotReady, UserKeys } from "../../src/crypto/user-keys";
import { PostgresUserKeyRecords } from "../../src/crypto/user-keys-postgres";
import { beginRequest } from "../../src/http/request-context";
import { createLogger, memorySink } from "../../src/log";
import { createServices, type Services } from "../../src/services";
import { bearer, connectorsSettled, postJson, req, tempDir, testConfig } from "../helpers";
import { archivedChunk } from "../support/archived-chunk";
import { askedToo, heldSource } from "../support/held-source";
import { type SharedDatabase, sharedDatabase } from "../support/shared-database";
import { vectorsWithoutModel } from "../support/vectors-without-model";

setDefaultTimeout(60_000);

const SCOPES = ["corpus:search", "corpus:read", "connectors:read", "connectors:write"];

let db: SharedDatabase;
let services: Services;
let app: ReturnType<typeof createApp>;
let roots: string;
let masterKey: Buffer;
/** Another node's keys on the same database. */
let other: UserKeys;
const model = { hold: Promise.resolve() };

let n = 0;
/** A user this node has not met. */
const fresh = () => `walker-${++n}-${randomBytes(3).toString("hex")}`;
const tokenOf = async (user: string) => (await services.auth.issuer.issue(user, SCOPES as never)).token;

beforeAll(async () => {
  db = await sharedDatabase();
  roots = tempDir("corpus-keys-roots-");
  const config = testConfig({ CORPUS_CONNECTOR_ROOTS: roots, CORPUS_WEBHOOK_ALLOW_PRIVATE: "true" });
  services = await createServices(config, createLogger("ERROR", memorySink().sink), Date.now, undefined, {
    userKeyRecords: new PostgresUserKeyRecords(db.sql),
  });
  app = createApp(services);
  masterKey = loadMasterKey({ dataDir: config.CORPUS_DATA_DIR }).key;
  other = new UserKeys(new PostgresUserKeyRecords(db.client()), masterKey);
  // No model: a constant vector, stored under its owner's key by the real embedding service (what is used when, not meaning).
  vectorsWithoutModel(services.embeddings, () => model.hold);
  const held = heldSource([
    {
      id: "r1",
      title: "Dabhol",
      content: "A record about the Dabhol plant and its power purchase agreement.",
      source_url: "https://x.example/r1",
      date: null,
      type: "file",
      path: "r1",
      metadata: {},
    },
  ]);
  held.release();
  askedToo({ services } as never, "held", "Held", "user", held.connector);
});

afterAll(async () => {
  await services?.close();
  await db?.drop();
});

const ask = async (user: string, body: Record<string, unknown>) =>
  app.handle(postJson("/v1/query", { query: "Dabhol plant", ...body }, bearer(await tokenOf(user))));

describe("each entry path makes the user's key ready on this node", () => {
  test("the node's keys are the shared store's: a use that no ready made is refused", () => {
    expect(() => services.archive.citationKey(fresh())).toThrow(UserKeyNotReady);
  });

  test("the guard makes a first key on every route but the deletion's, which needs none", async () => {
    const routes = new Elysia()
      .use(guard(services))
      .get("/v1/connectors", ({ principal }) => ({ user: principal.user }), { guard: { route: "GET /v1/connectors" } })
      .delete("/v1/delete_my_data", ({ principal }) => ({ user: principal.user }), { guard: { route: "DELETE /v1/delete_my_data" } });
    const guarded = createApp(services).use(routes);
    const [lister, leaver] = [fresh(), fresh()];
    expect((await guarded.handle(req("/v1/connectors", { headers: bearer(await tokenOf(lister)) }))).status).toBe(200);
    expect(await other.rowsOf(lister)).toBe(1);
    const left = await guarded.handle(req("/v1/delete_my_data", { method: "DELETE", headers: bearer(await tokenOf(leaver)) }));
    expect(left.status).toBe(200);
    expect(await other.rowsOf(leaver)).toBe(0);
  });

  test("the operator's key (their connectors' indexes, searched by every user's question) is made ready at start and held", () => {
    expect(services.userKeys.keyFor(OPERATOR_OWNER, false).length).toBe(32);
  });

  test("a question: answered, archived with its vectors, the key made once in PostgreSQL", async () => {
    const user = fresh();
    const r = await ask(user, {});
    expect(r.status).toBe(200);
    await services.archive.settled();
    expect(await services.archive.pending()).toBe(0);
    expect(await services.archive.rowsOf(user)).toBeGreaterThan(0);
    expect(await services.userKeys.rowsOf(user)).toBe(1);
    // Another node opens what this one sealed.
    await other.ready(user);
    expect(other.keyFor(user).equals(services.userKeys.keyFor(user))).toBe(true);
  });

  test("a conversation and its follow-up", async () => {
    const user = fresh();
    const first = await ask(user, { conversation_id: null });
    expect(first.status).toBe(200);
    const { conversation_id } = (await first.json()) as { conversation_id: string };
    const next = await ask(user, { conversation_id, query: "and its agreement?" });
    expect(next.status).toBe(200);
    expect(await services.conversations.rowsOf(user)).toBe(3);
  });

  test("deep_search, for a user whose key another node made, and one who has none", async () => {
    for (const user of [fresh(), fresh()]) {
      if (n % 2) await other.ready(user, { create: true });
      const r = await app.handle(postJson("/v1/deep_search", { query: "Dabhol plant" }, bearer(await tokenOf(user))));
      expect(r.status).toBe(200);
    }
  });

  test("a cited document's page (/d/<id>), opened through a node that never met its reader", async () => {
    const user = fresh();
    const token = await tokenOf(user);
    const cited = (await (await ask(user, {})).json()) as { results: Array<{ chunks: Array<{ metadata: { document_id: string } }> }> };
    const documentId = cited.results[0]!.chunks[0]!.metadata.document_id;
    // Node C: the same rooms, keys of its own over the same PostgreSQL (nothing in their memory).
    const keysOfC = new UserKeys(new PostgresUserKeyRecords(db.client()), masterKey);
    const onC = createApp({ ...services, userKeys: keysOfC, archive: new Archive(services.archive.rows, keysOfC, services.embeddings) });
    const page = await onC.handle(req(`/d/${documentId}`, { headers: bearer(token) }));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Dabhol");
  });

  test("an MCP tool", async () => {
    const user = fresh();
    const r = req("/mcp", {
      method: "POST",
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "corpus_search", arguments: { query: "Dabhol" } },
      }),
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...bearer(await tokenOf(user)) },
    });
    beginRequest(r, "192.0.2.1");
    const answer = (await (await app.handle(r)).json()) as { result?: { isError?: boolean } };
    expect(answer.result?.isError).not.toBe(true);
    expect(await services.archive.rowsOf(user)).toBeGreaterThan(0);
  });

  test("a connector added, indexed and embedded in the background", async () => {
    const user = fresh();
    const folder = join(roots, user);
    mkdirSync(folder);
    writeFileSync(join(folder, "lease.txt"), "The lease of the flat ends in May; the deposit is two months of rent.");
    const token = await tokenOf(user);
    const added = await app.handle(
      postJson("/v1/connectors", { id: "docs", kind: "files", label: "Docs", config: { path: folder } }, bearer(token)),
    );
    expect(added.status).toBe(200);
    await connectorsSettled(services, user);
    const list = (await (await app.handle(req("/v1/connectors", { headers: bearer(token) }))).json()) as {
      connectors: Array<{ id: string; indexed: { chunks: number; embedded: number } }>;
    };
    const docs = list.connectors.find((c) => c.id === "docs")!;
    expect(docs.indexed.chunks).toBeGreaterThan(0);
    expect(docs.indexed.embedded).toBe(docs.indexed.chunks);
  });

  test("webhooks registered and listed", async () => {
    const user = fresh();
    const token = await tokenOf(user);
    const added = await app.handle(postJson("/v1/webhooks", { url: "http://127.0.0.1:9/hook" }, bearer(token)));
    expect(added.status).toBe(200);
    const listed = (await (await app.handle(req("/v1/webhooks", { headers: bearer(token) }))).json()) as { webhooks: unknown[] };
    expect(listed.webhooks.length).toBe(1);
  });

  test("the archive's owed vectors, resumed by a node that never met the user", async () => {
    const user = fresh();
    // Node A archives an answer while the model is held: its vectors are owed when node C, which never met the user, resumes them.
    const { promise, resolve } = Promise.withResolvers<void>();
    model.hold = promise;
    try {
      await services.userKeys.ready(user, { create: true });
      await services.archive.store(user, "qry_owed", "the lease", [archivedChunk("c1", "Lease", "ends in May")], [undefined]);
      expect(await services.archive.pending()).toBe(1);
      const keysOfC = new UserKeys(new PostgresUserKeyRecords(db.client()), masterKey);
      const c = new Archive(new SqliteArchiveRows(services.db), keysOfC, services.embeddings);
      const resumed = c.resumePending();
      resolve();
      expect(await resumed).toBe(1);
    } finally {
      resolve();
      model.hold = Promise.resolve();
    }
    await services.archive.settled();
    expect(await services.archive.pending()).toBe(0);
  });
});
