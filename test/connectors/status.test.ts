// A connector's status a person can follow (issue 14): `indexing` while its files are read,
// `embedding` while its chunks wait for vectors, `ok` only once both are done, each with counts,
// rate and time left, in GET /v1/connectors and in the logs. The embedding is held at a gate put
// where the registry gets it (EmbeddingService.forOwner) and let through batch by batch; the
// vectors are the real model's; the clock is injected.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { EMBEDDING_PAUSED, type FolderSource, IndexedFolderConnector } from "../../src/connectors/indexed-source";
import { EmbeddedIndex, indexKeysFor, indexMigrations, scanEntry } from "../../src/connectors/local-index";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import type { OwnerEmbeddings } from "../../src/embedding/service";
import { createLogger, memorySink } from "../../src/log";
import { openDatabase } from "../../src/store/database";
import { bearer, postJson, req, tempDir, testApp } from "../helpers";
import { embeddingGate, writeDocs } from "../support/embedding-gate";

// The model loads on the first batch: seconds on a busy two-core machine.
setDefaultTimeout(120_000);

const T0 = Date.parse("2026-03-02T08:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

async function setup(env: Record<string, string> = {}) {
  const roots = tempDir("corpus-status-roots-");
  let clock = T0;
  const t = await testApp({ CORPUS_CONNECTOR_ROOTS: roots, CORPUS_LOG_LEVEL: "INFO", ...env }, () => clock);
  const gate = embeddingGate(t.services.embeddings);
  const tok = (await t.services.auth.issuer.issue("alice", ["connectors:read", "connectors:write"] as never)).token;
  const list = async () =>
    ((await (await t.app.handle(req("/v1/connectors", { headers: bearer(tok) }))).json()) as { connectors: Array<Record<string, any>> })
      .connectors;
  const connector = async (id: string) => (await t.services.connectors.active("alice", [id]))[0]!.connector as IndexedFolderConnector;
  return { ...t, roots, gate, tok, list, connector, advance: (ms: number) => (clock += ms), now: () => clock };
}

describe("a files connector's status, from added to ok", () => {
  test("indexing with files counted, then embedding with chunks, rate and time left, then ok; logged at the end", async () => {
    const t = await setup();
    const docs = join(t.roots, "docs");
    writeDocs(docs, 10);

    const added = (await (
      await t.app.handle(postJson("/v1/connectors", { id: "docs", kind: "files", config: { path: docs } }, bearer(t.tok)))
    ).json()) as Record<string, any>;
    expect(added).toMatchObject({
      id: "docs",
      status: "indexing",
      progress: { phase: "indexing", unit: "files", done: 0, total: 10, rate_per_second: null, eta_seconds: null, started_at: iso(T0) },
    });

    // Read in 2 s (the clock's), then the chunks wait at the gate.
    t.advance(2_000);
    await (await t.connector("docs")).sync();
    await t.gate.arrived();
    const [waiting] = await t.list();
    const chunks = waiting!.indexed.chunks as number;
    expect(chunks).toBeGreaterThan(32);
    expect(waiting).toMatchObject({
      id: "docs",
      status: "embedding",
      records: 10,
      indexed: { chunks, embedded: 0 },
      progress: {
        phase: "embedding",
        unit: "chunks",
        done: 0,
        total: chunks,
        rate_per_second: null,
        eta_seconds: null,
        started_at: iso(T0 + 2_000),
      },
    });
    expect(waiting).not.toHaveProperty("reason");

    // One batch in 4 s (16 chunks and the rest of the last one's record: 4 documents of 5 chunks):
    // 5 chunks/s, and the rest at that pace.
    t.advance(4_000);
    t.gate.one();
    await t.gate.arrived();
    const [halfway] = await t.list();
    expect(halfway).toMatchObject({
      status: "embedding",
      indexed: { chunks, embedded: 20 },
      progress: {
        phase: "embedding",
        done: 20,
        total: chunks,
        rate_per_second: 5,
        eta_seconds: Math.ceil((chunks - 20) / 5),
        started_at: iso(T0 + 2_000),
      },
    });

    // Every chunk has its vector: ok, and no progress left to show.
    t.advance(4_000);
    t.gate.open();
    await (await t.connector("docs")).embedPending();
    const [done] = await t.list();
    expect(done).toMatchObject({ status: "ok", records: 10, indexed: { chunks, embedded: chunks } });
    expect(done).not.toHaveProperty("progress");

    const lines = t.logs.records().filter((l) => l.logger === "connectors.docs");
    expect(lines.find((l) => l.message === "connector indexed")).toMatchObject({
      level: "INFO",
      read: 10,
      records: 10,
      seconds: 2,
      files_per_second: 5,
    });
    expect(lines.find((l) => l.message === "connector embedded")).toMatchObject({
      level: "INFO",
      chunks,
      seconds: 8,
      chunks_per_second: Math.round((chunks / 8) * 10) / 10,
      embedded: chunks,
      total: chunks,
    });
    // Nothing names the folder or the files.
    expect(JSON.stringify(lines)).not.toContain("report-");
    expect(JSON.stringify(lines)).not.toContain(docs);
  });

  test("progress lines come at most every 10 s of the clock while embedding runs", async () => {
    const t = await setup();
    const docs = join(t.roots, "docs");
    writeDocs(docs, 10);
    await t.app.handle(postJson("/v1/connectors", { id: "docs", kind: "files", config: { path: docs } }, bearer(t.tok)));
    await (await t.connector("docs")).sync();
    await t.gate.arrived();
    // Batch 1 after 11 s: a line; batch 2 at once: none.
    t.advance(11_000);
    t.gate.one();
    await t.gate.arrived();
    t.gate.one();
    await t.gate.arrived();
    const lines = t.logs.records().filter((l) => l.message === "connector embedding");
    expect(lines).toHaveLength(1);
    // The first batch: 16 chunks and the rest of the fourth document (of 5 chunks each).
    expect(lines[0]).toMatchObject({ logger: "connectors.docs", done: 20, chunks_per_second: 1.8 });
    t.gate.open();
    await (await t.connector("docs")).embedPending();
  });

  test("an operator's folder shows its progress to every user, in counts only", async () => {
    const shared = join(tempDir("corpus-status-op-"), "handbook");
    writeDocs(shared, 3);
    const file = join(tempDir(), "connectors.json");
    writeFileSync(file, JSON.stringify([{ id: "handbook", kind: "files", label: "Handbook", config: { path: shared } }]));
    const t = await setup({ CORPUS_CONNECTORS_FILE: file });
    await t.list();
    await (await t.services.connectors.active("alice", ["handbook"]))[0]!.connector.search({ terms: [], phrases: [], limit: 1 });
    await t.gate.arrived();
    const [op] = await t.list();
    expect(Object.keys(op!).sort()).toEqual(["id", "indexed", "kind", "label", "owner", "progress", "records", "status"]);
    expect(op).toMatchObject({
      id: "handbook",
      owner: "operator",
      status: "embedding",
      progress: { phase: "embedding", unit: "chunks", done: 0 },
    });
    expect(JSON.stringify(op)).not.toContain(shared);
    t.gate.open();
    await ((await t.services.connectors.active("alice", ["handbook"]))[0]!.connector as IndexedFolderConnector).embedPending();
    expect((await t.list())[0]).toMatchObject({ status: "ok" });
  });

  test("the OpenAPI document describes the statuses and the progress object", async () => {
    const t = await setup();
    const doc = (await (await t.app.handle(req("/openapi/json"))).json()) as any;
    const item = doc.paths["/v1/connectors"].get.responses["200"].content["application/json"].schema.properties.connectors.items;
    expect(item.properties.status.enum).toEqual(["ok", "indexing", "embedding", "error", "checking"]);
    const progress = item.properties.progress;
    expect(progress.required).toEqual(["phase", "unit", "done", "total", "rate_per_second", "eta_seconds", "started_at"]);
    expect(progress.properties.eta_seconds.nullable).toBe(true);
    expect(progress.properties.rate_per_second.nullable).toBe(true);
  });
});

describe("the connector itself (a source whose reads are held)", () => {
  const db = openDatabase(tempDir(), [...cryptoMigrations, ...indexMigrations]);
  const keys = new UserKeys(db, randomBytes(32));

  /** A folder of `n` one-record files whose reads wait until let through. */
  function heldSource(dir: string, n: number) {
    writeDocs(dir, n);
    const held: Array<() => void> = [];
    const source: FolderSource = {
      scan: () => Array.from({ length: n }, (_, i) => scanEntry(join(dir, `report-${i + 1}.txt`), `report-${i + 1}.txt`)),
      read: async (e) => {
        await new Promise<void>((r) => held.push(r));
        return [{ id: e.source, title: e.source, content: "x", source_url: "", date: null, type: "file", path: e.source, metadata: {} }];
      },
    };
    return { source, release: () => held.shift()!(), waiting: () => held.length };
  }

  test("indexing counts the files read; a later rescan with nothing to read does not say indexing", async () => {
    let clock = T0;
    const dir = join(tempDir(), "held");
    const { source, release } = heldSource(dir, 3);
    const c = new IndexedFolderConnector(
      "files",
      dir,
      new EmbeddedIndex(db, "t/held", indexKeysFor(keys, "alice", "t/held", true)),
      source,
      {
        now: () => clock,
      },
    );
    await Bun.sleep(0);
    expect(await c.health()).toEqual({
      status: "indexing",
      records: 0,
      progress: { phase: "indexing", unit: "files", done: 0, total: 3, rate_per_second: null, eta_seconds: null, started_at: iso(T0) },
    });
    clock += 1_000;
    release();
    await Bun.sleep(0);
    expect(await c.health()).toMatchObject({
      status: "indexing",
      records: 1,
      progress: { done: 1, total: 3, rate_per_second: 1, eta_seconds: 2 },
    });
    release();
    await Bun.sleep(0);
    release();
    await c.sync();
    // No embeddings given: indexed is done.
    expect(await c.health()).toEqual({ status: "ok", records: 3 });
    const rescan = c.sync();
    expect((await c.health()).status).toBe("ok");
    await rescan;
  });

  test("embedding that fails says so and stays `embedding` (its chunks still wait), never `ok`", async () => {
    const logs = memorySink();
    const dir = join(tempDir(), "failing");
    writeDocs(dir, 1);
    const failing: OwnerEmbeddings = { embed: async () => Promise.reject(new Error("model file missing")) };
    const c = new IndexedFolderConnector(
      "files",
      dir,
      new EmbeddedIndex(db, "t/failing", indexKeysFor(keys, "alice", "t/failing", true), (r) => [r.title, r.content]),
      {
        scan: () => [scanEntry(join(dir, "report-1.txt"), "report-1.txt")],
        read: async (e) => [
          { id: e.source, title: "Report", content: "text", source_url: "", date: null, type: "file", path: e.source, metadata: {} },
        ],
      },
      { embeddings: failing, log: createLogger("INFO", logs.sink), now: () => T0 },
    );
    await c.sync();
    await c.embedPending();
    expect(await c.health()).toMatchObject({
      status: "embedding",
      reason: EMBEDDING_PAUSED,
      records: 1,
      progress: { done: 0, total: 2, eta_seconds: null },
    });
    expect(logs.records().find((l) => l.message === "connector embedding paused")).toMatchObject({
      level: "WARNING",
      error: "model file missing",
    });
  });
});
