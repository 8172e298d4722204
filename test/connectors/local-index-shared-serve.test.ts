// The local index on CORPUS_DATABASE_URL end to end (D33): the app as services.ts builds it on a
// shared PostgreSQL, a files folder connected and indexed through node A, asked through /v1/query
// and MCP corpus_search with its answer cited; node B (another app, its own data folder, the same
// database and master key) answers the same question from the shared index without reading the
// folder again; a pg_dump of the database spells none of the indexed words, names or paths; the
// user's deletion through B leaves no index row of theirs in it.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { IndexedFolderConnector } from "../../src/connectors/indexed-source";
import { SharedIndexes } from "../../src/connectors/local-index/shared-index";
import { PostgresIndexRows } from "../../src/connectors/local-index/store-postgres";
import { beginRequest } from "../../src/http/request-context";
import { newMasterKey } from "../backup/support";
import { bearer, postJson, req, tempDir, testApp } from "../helpers";
import { needlesOf, spelledIn } from "../support/at-rest";
import { type SharedDatabase, sharedDatabase } from "../support/shared-database";

setDefaultTimeout(180_000);

const SCOPES = ["corpus:search", "corpus:read", "connectors:read", "connectors:write"];
/** Made-up words: none of them, nor the first six letters of any, can occur by chance. */
const WORDS = ["zorblaxian", "quixotrumph", "flumbergast", "vortiganzel"];
const FILE = `${WORDS[0]}-plan.txt`;

type App = Awaited<ReturnType<typeof testApp>>;
let db: SharedDatabase;
let folder: string;
let a: App;
let b: App;
const tokens = { a: "", b: "" };

/** A node: the app on the shared database, with the key every node holds (CORPUS_MASTER_KEY) and a data folder of its own. */
const node = (roots: string, key: string) =>
  testApp({
    CORPUS_DATABASE_URL: db.database.url,
    CORPUS_MASTER_KEY: key,
    CORPUS_DATA_DIR: join(tempDir(), "data"),
    CORPUS_CONNECTOR_ROOTS: join(roots, "{user}"),
    CORPUS_LOG_LEVEL: "INFO",
  });

const QUESTION = `what does the ${WORDS[0]} plan say about ${WORDS[1]} shipments?`;

async function ask(t: App, token: string) {
  const r = await t.app.handle(postJson("/v1/query", { query: QUESTION }, bearer(token)));
  expect(r.status).toBe(200);
  const body = (await r.json()) as {
    results: Array<{ connector: string; chunks: Array<{ content: string; metadata: Record<string, unknown> }> }>;
  };
  const top = body.results.find((g) => g.connector === "docs")!.chunks[0]!;
  return top;
}

async function mcpSearch(t: App, token: string) {
  const r = req("/mcp", {
    method: "POST",
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "corpus_search", arguments: { query: QUESTION } },
    }),
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...bearer(token) },
  });
  beginRequest(r, "192.0.2.1");
  const res = await t.app.handle(r);
  expect(res.status).toBe(200);
  const body = (await res.json()) as { result: { structuredContent: { results: Array<{ title: string; snippet: string; url: string }> } } };
  return body.result.structuredContent.results;
}

/** The shared index's rows as counted in PostgreSQL: records, and the highest record number given. */
async function indexRows() {
  const [row] = await db.sql<{ n: string; top: string | null }[]>`SELECT count(*) AS n, max(doc) AS top FROM corpus_index_docs`;
  return { records: Number(row!.n), top: row!.top };
}

beforeAll(async () => {
  db = await sharedDatabase();
  const roots = tempDir("corpus-shared-serve-roots-");
  folder = join(roots, "alice", "docs");
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, FILE), `The ${WORDS[0]} plan: ${WORDS[1]} shipments go through ${WORDS[2]} harbour every Tuesday.\n`);
  writeFileSync(join(folder, "minutes.md"), `# Board minutes\n\n${WORDS[3]} agreed to fund the pilot.\n`);
  const key = newMasterKey();
  a = await node(roots, key);
  b = await node(roots, key);
  tokens.a = (await a.services.auth.issuer.issue("alice", SCOPES as never)).token;
  tokens.b = (await b.services.auth.issuer.issue("alice", SCOPES as never)).token;
});

afterAll(async () => {
  await a?.services.close();
  await b?.services.close();
  await db.drop();
});

describe("corpus on CORPUS_DATABASE_URL: the local index in the shared PostgreSQL (D33)", () => {
  test("node A indexes a files folder into PostgreSQL (nothing into its SQLite) and answers /v1/query and MCP corpus_search, cited", async () => {
    expect(a.services.connectors.indexes).toBeInstanceOf(SharedIndexes);
    const added = await a.app.handle(postJson("/v1/connectors", { id: "docs", kind: "files", config: { path: folder } }, bearer(tokens.a)));
    expect(added.status).toBe(200);
    const docs = (await a.services.connectors.active("alice", ["docs"]))[0]!.connector as IndexedFolderConnector;
    await docs.sync();
    await docs.embedPending();
    expect(await docs.health()).toMatchObject({ status: "ok", records: 2 });
    expect((await indexRows()).records).toBe(2);
    // The node's own SQLite holds no record of it.
    expect(a.db.query<{ n: number }, []>("SELECT count(*) AS n FROM connector_docs").get()!.n).toBe(0);
    const progress = await db.sql<{ total: string; embedded: string }[]>`SELECT total, embedded FROM corpus_index_chunk_counts`;
    expect(Number(progress[0]!.embedded)).toBe(Number(progress[0]!.total));

    const top = await ask(a, tokens.a);
    expect(top.content).toContain(WORDS[1]!);
    // Cited (D36): the quote's hash, its page and its document.
    expect(top.metadata.sha256).toBe(createHash("sha256").update(top.content, "utf8").digest("hex"));
    expect(String(top.metadata.citation_url)).toContain("/d/chnk_");
    const found = await mcpSearch(a, tokens.a);
    expect(found[0]!.title).toContain(FILE);
    expect(found[0]!.snippet).toContain(WORDS[1]!);
    expect(found[0]!.url).toContain("/d/chnk_");
  });

  test("node B answers the same question from the shared index, reading and indexing nothing again", async () => {
    const before = await indexRows();
    const top = await ask(b, tokens.b);
    expect(top.content).toContain(WORDS[1]!);
    const found = await mcpSearch(b, tokens.b);
    expect(found[0]!.title).toContain(FILE);
    // B's connector synced (under the lease, or found it held): the index was current, nothing read or written.
    const docs = (await b.services.connectors.active("alice", ["docs"]))[0]!.connector as IndexedFolderConnector;
    await docs.sync();
    expect(await docs.health()).toMatchObject({ status: "ok", records: 2 });
    expect(await indexRows()).toEqual(before);
    expect(b.logs.records().filter((r) => r.message === "connector indexed")).toEqual([]);
    expect(b.db.query<{ n: number }, []>("SELECT count(*) AS n FROM connector_docs").get()!.n).toBe(0);
  });

  test("a question reads the shared index's progress once at most, whatever reads it while ranking and scoring (D33)", async () => {
    const docs = (await b.services.connectors.active("alice", ["docs"]))[0]!.connector as IndexedFolderConnector;
    // Many looks at the progress in one moment (a status page, scoring): one read between them.
    const options = b.services.shared!.options as { debug?: unknown };
    let reads = 0;
    options.debug = (_connection: number, statement: string) => {
      if (statement.includes("corpus_index_chunk_counts") && statement.includes("total, embedded")) reads++;
    };
    try {
      await ask(b, tokens.b);
      expect(reads).toBeLessThanOrEqual(1);
      reads = 0;
      for (let i = 0; i < 10; i++) expect(docs.progress().total).toBe(docs.progress().embedded);
      expect(reads).toBeLessThanOrEqual(1);
    } finally {
      options.debug = false;
    }
  });

  test("a pg_dump of the database spells no indexed word, file name or path; after the user's deletion on B, no index row of theirs", async () => {
    const dump = () => {
      const out = spawnSync("pg_dump", ["--data-only", "--no-owner", db.database.url], { maxBuffer: 256 << 20 });
      expect(out.status).toBe(0);
      return out.stdout;
    };
    const before = dump();
    expect(before.toString("latin1")).toContain("COPY public.corpus_index_docs ");
    const needles = [...needlesOf(WORDS), FILE, "minutes.md", folder];
    expect(spelledIn([{ name: "pg_dump", bytes: before }], needles)).toEqual([]);

    const r = await b.app.handle(req("/v1/delete_my_data", { method: "DELETE", headers: bearer(tokens.b) }));
    expect(r.status).toBe(200);
    expect(await new PostgresIndexRows(db.sql).rowsOf("alice")).toBe(0);
    expect((await indexRows()).records).toBe(0);
    expect(spelledIn([{ name: "pg_dump", bytes: dump() }], needles)).toEqual([]);
  });
});
