// What a copy of the data folder gives an attacker (D3, D25): tried as one would, byte by byte
// over every file of the folder (database, WAL, shared memory), while the user exists, after a
// connector is removed, and after the user is deleted.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { IndexedFolderConnector } from "../../src/connectors/indexed-source";
import { indexKeysFor } from "../../src/connectors/local-index";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { bearer, postJson, req, tempDir, testApp } from "../helpers";
import { needlesOf, spelledIn } from "../support/at-rest";

setDefaultTimeout(120_000);

const ALL = ["corpus:search", "corpus:read", "connectors:read", "connectors:write"];
/** Made-up words: none of them, nor the first six letters of any, can occur by chance. */
const WORDS = ["zorblaxian", "quixotrumph", "flumbergast", "vortiganzel", "snarkwhistle", "gribbleford"];

/** Every file of the data folder, as bytes. */
function dataFiles(dir: string): Array<{ name: string; bytes: Buffer }> {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => ({ name: e.name, bytes: readFileSync(join(dir, e.name)) }));
}

/** Files of the folder in which any needle occurs, case-insensitively. */
const spelled = (dir: string, needles: string[]) => spelledIn(dataFiles(dir), needles);

/**
 * The best cosine between any 384-float window of any file (at every byte offset) and any of
 * `targets` (unit vectors). Windows whose norm is not about 1 cannot be a stored embedding and are
 * passed over, which keeps the scan to a few candidates per stored vector.
 */
function nearestInFiles(dir: string, targets: Float32Array[]): number {
  let best = -1;
  for (const { bytes } of dataFiles(dir)) {
    for (let shift = 0; shift < 4; shift++) {
      const n = Math.floor((bytes.length - shift) / 4);
      if (n < EMBEDDING_DIM) continue;
      const floats = new Float32Array(n);
      const view = new DataView(bytes.buffer, bytes.byteOffset + shift, n * 4);
      for (let i = 0; i < n; i++) {
        const x = view.getFloat32(i * 4, true);
        // Out of range for a unit vector: 2 puts any window holding it over the norm (small
        // enough that the running sums below stay exact).
        floats[i] = Number.isFinite(x) && Math.abs(x) <= 1 ? x : 2;
      }
      const squares = new Float64Array(n + 1);
      for (let i = 0; i < n; i++) squares[i + 1] = squares[i]! + floats[i]! * floats[i]!;
      for (let start = 0; start + EMBEDDING_DIM <= n; start++) {
        const norm2 = squares[start + EMBEDDING_DIM]! - squares[start]!;
        if (norm2 < 0.9 || norm2 > 1.1) continue;
        for (const t of targets) {
          let dot = 0;
          for (let j = 0; j < EMBEDDING_DIM; j++) dot += floats[start + j]! * t[j]!;
          best = Math.max(best, dot / Math.sqrt(norm2));
        }
      }
    }
  }
  return best;
}

async function setUp() {
  const base = tempDir("corpus-at-rest-roots-");
  const docs = join(base, "alice", "docs");
  mkdirSync(docs, { recursive: true });
  writeFileSync(
    join(docs, `${WORDS[0]}-plan.txt`),
    `The ${WORDS[0]} plan: ${WORDS[1]} shipments go through ${WORDS[2]} harbour every Tuesday.\n`,
  );
  writeFileSync(
    join(docs, "minutes.md"),
    `# Board minutes\n\n${WORDS[3]} agreed to fund the ${WORDS[4]} pilot. AWS secret access key AKIAEXAMPLESECRET123.\n`,
  );
  writeFileSync(join(docs, "notes.txt"), `Call ${WORDS[5]} about the invoice of 4,904.94 EUR.\n`);
  const t = await testApp({ CORPUS_CONNECTOR_ROOTS: join(base, "{user}") });
  const alice = (await t.services.auth.issuer.issue("alice", ALL as never)).token;
  const added = await t.app.handle(postJson("/v1/connectors", { id: "docs", kind: "files", config: { path: docs } }, bearer(alice)));
  expect(added.status).toBe(200);
  // The folder indexed, then every chunk embedded: both are promises of the connector's.
  const docsConnector = (await t.services.connectors.active("alice", ["docs"]))[0]!.connector as IndexedFolderConnector;
  await docsConnector.sync();
  await docsConnector.embedPending();
  const list = (await (await t.app.handle(req("/v1/connectors", { headers: bearer(alice) }))).json()) as {
    connectors: Array<{ id: string; indexed?: { chunks: number; embedded: number } }>;
  };
  const indexed = list.connectors.find((c) => c.id === "docs")!.indexed!;
  expect(indexed.chunks).toBeGreaterThan(0);
  expect(indexed.embedded).toBe(indexed.chunks);
  return { t, alice, dir: t.config.CORPUS_DATA_DIR };
}

/** A setUp of its own for the tests of the describe block this is called in, closed after them: the getter of it. */
function setUpForBlock(): () => Awaited<ReturnType<typeof setUp>> {
  let s: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    s = await setUp();
  });
  afterAll(() => s.t.services.close());
  return () => s;
}

describe("a copy of the data folder spells no word of a user's data (D25)", () => {
  const world = setUpForBlock();

  test("while the user exists: the words are found by questions, and by nobody reading the files", async () => {
    const s = world();
    const r = await s.t.app.handle(
      postJson("/v1/query", { query: `what does the "${WORDS[0]} plan" say about ${WORDS[1]}?` }, bearer(s.alice)),
    );
    expect(r.status).toBe(200);
    const body = (await r.json()) as { results: Array<{ chunks: Array<{ content: string }> }> };
    expect(body.results[0]!.chunks[0]!.content).toContain(WORDS[1]!);
    // Stems work as before: "shipment" finds "shipments".
    const stem = (await (
      await s.t.app.handle(postJson("/v1/query", { query: `${WORDS[4]} pilot`, max_results: 1 }, bearer(s.alice)))
    ).json()) as typeof body;
    expect(stem.results[0]!.chunks[0]!.content).toContain(WORDS[4]!);
    expect(spelled(s.dir, [...needlesOf(WORDS), "akiaexamplesecret123", "minutes.md"])).toEqual([]);
  });

  test("after the connector is removed: not even the blinded terms remain in any file", async () => {
    const s = world();
    const keys = indexKeysFor(s.t.services.userKeys, "alice", "docs", false);
    const blinded = WORDS.map((w) => keys.blinder.term(w));
    expect(spelled(s.dir, blinded).length).toBeGreaterThan(0);
    const r = await s.t.app.handle(req("/v1/connectors/docs", { method: "DELETE", headers: bearer(s.alice) }));
    expect(r.status).toBe(200);
    expect(spelled(s.dir, [...needlesOf(WORDS), ...blinded])).toEqual([]);
  });
});

describe("after a deletion no vector of the user is left (D25)", () => {
  const world = setUpForBlock();

  test("no 384-float window of any file is within cosine 0.95 of her chunks or questions", async () => {
    const s = world();
    const questions = [`${WORDS[0]} plan shipments`, `who funds the ${WORDS[4]} pilot?`];
    for (const q of questions) expect((await s.t.app.handle(postJson("/v1/query", { query: q }, bearer(s.alice)))).status).toBe(200);
    const { db, userKeys, embeddings } = s.t.services;
    await embeddings.idle();
    expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM archive_chunks WHERE embedded = 0").get()!.n).toBe(0);

    // Her vectors as the model made them: the stored ones turned back with her key, and the questions'.
    const vectors = (rows: Array<{ embedding: Uint8Array }>) =>
      rows.map((r) => new Float32Array(r.embedding.buffer.slice(r.embedding.byteOffset, r.embedding.byteOffset + r.embedding.byteLength)));
    const inIndex = vectors(
      db.query<{ embedding: Uint8Array }, []>("SELECT embedding FROM connector_vec WHERE owner = 'alice/docs'").all(),
    );
    const inArchive = vectors(db.query<{ embedding: Uint8Array }, []>("SELECT embedding FROM archive_vec WHERE user_id = 'alice'").all());
    const stored = [...inIndex, ...inArchive];
    expect(inIndex.length).toBeGreaterThan(2);
    expect(inArchive.length).toBeGreaterThan(2);
    const targets = [
      ...inIndex.map((v) => userKeys.rotation("alice", "connector/docs", EMBEDDING_DIM, false).invert(v)),
      ...inArchive.map((v) => userKeys.rotation("alice", "archive", EMBEDDING_DIM, false).invert(v)),
      ...(await embeddings.embed("vector-scanner", questions)),
    ];
    // Each store has its own rotation: an archived chunk and its indexed twin are stored apart.
    expect(Math.max(...inArchive.map((a) => Math.max(...inIndex.map((b) => a.reduce((s, x, i) => s + x * b[i]!, 0)))))).toBeLessThan(0.95);
    // While she exists the files hold her vectors only rotated: the scan finds those, not hers.
    expect(nearestInFiles(s.dir, stored.slice(0, 2))).toBeGreaterThan(0.99);
    expect(nearestInFiles(s.dir, targets)).toBeLessThan(0.95);

    const deleted = await s.t.app.handle(req("/v1/delete_my_data", { method: "DELETE", headers: bearer(s.alice) }));
    expect(deleted.status).toBe(200);
    expect(nearestInFiles(s.dir, targets)).toBeLessThan(0.95);
    expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM embedding_cache WHERE owner = 'alice'").get()!.n).toBe(0);
  });
});

describe("caches belong to their owner (D25)", () => {
  test("a text alice's index embedded is not in bob's cache; nobody learns that it was seen", async () => {
    const t = await testApp();
    // The cache never makes a key: before alice has one (her first answer makes it), it keeps nothing.
    await t.services.embeddings.embed("alice", ["quarterly numbers of the zorblaxian plan"]);
    expect(t.db.query<{ n: number }, []>("SELECT count(*) AS n FROM embedding_cache").get()!.n).toBe(0);
    t.services.userKeys.keyFor("alice");
    const [v] = await t.services.embeddings.embed("alice", ["quarterly numbers of the zorblaxian plan"]);
    expect(v).toBeDefined();
    expect(t.services.embeddings.cached("alice", ["quarterly numbers of the zorblaxian plan"])[0]).toEqual(v!);
    expect(t.services.embeddings.cached("bob", ["quarterly numbers of the zorblaxian plan"])[0]).toBeUndefined();
    // The cache's keys differ per owner for the same text, and its vectors are sealed.
    const rows = t.db
      .query<{ owner: string; key: Uint8Array; vector: Uint8Array }, []>("SELECT owner, key, vector FROM embedding_cache")
      .all();
    expect(rows.map((r) => r.owner)).toEqual(["alice"]);
    expect(Buffer.from(rows[0]!.vector).includes(Buffer.from(v!.buffer, v!.byteOffset, 64))).toBe(false);
    await t.services.close();
  });
});

describe("an answer archived before a crash is found after it (D29)", () => {
  test("chunks whose vectors were not stored yet are embedded on restart and found by deep search", async () => {
    const dir = tempDir("corpus-resume-");
    const first = await testApp({ CORPUS_DATA_DIR: dir });
    const token = (await first.services.auth.issuer.issue("resumer", ALL as never)).token;
    const chunk = {
      chunk_id: "c1",
      connector: "docs",
      title: "Dabhol",
      content: "The Dabhol power plant in India had problems with its gas supply.",
      source_url: "file:///x",
      type: "file" as const,
      path: "x",
      date: null,
    };
    first.services.userKeys.keyFor("resumer");
    first.services.archive.store(
      "resumer",
      "qry_resume1",
      "Dabhol plant problems",
      [{ chunk, embedText: `${chunk.title}\n${chunk.content}` }],
      [undefined],
    );
    // The crash: the process ends before the background embedder stored the vector.
    await first.services.close();
    const second = await testApp({ CORPUS_DATA_DIR: dir });
    expect(second.db.query<{ n: number }, []>("SELECT count(*) AS n FROM archive_chunks WHERE embedded = 0").get()!.n).toBe(1);
    expect(await second.services.archive.resumePending()).toBe(1);
    const r = await second.app.handle(
      postJson("/v1/deep_search", { query: "gas supply problems at an Indian power plant" }, bearer(token)),
    );
    const body = (await r.json()) as { archive_results: Array<{ original_query_id: string }> };
    expect(body.archive_results.map((m) => m.original_query_id)).toContain("qry_resume1");
    await second.services.close();
  });
});
