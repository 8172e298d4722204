// KNN over one user's keyed 384-d vectors, each store as the product keeps and searches it, in the
// same run: sqlite-vec's brute force (the embedded store's table, exact: the baseline and the ground
// truth), pgvector's HNSW (the shared store: the product's schema, index and query, PostgresVectorStore
// over the shared database's connections, filtered by owner and connector with pgvector 0.8's
// iterative scans) and the embedded HNSW of a big partition (partition-index.ts: the snapshot built
// by its worker from the partition's rows, searched through the store). p50/p99 of one search
// (k = 10), recall@10 against the exact answer, and each store's build time. Quick by default (20k
// vectors); CORPUS_BENCH_KNN_VECTORS=400000 for the size (never in CI). The set and each
// store are built once and reused: /tmp/corpus-knn-<n>/ holds the keyed vectors (keyed.f32), a data
// folder (corpus.db, vector-index/) and the build times (built.json); the database corpus_knn_<n> of
// the PostgreSQL at CORPUS_BENCH_PG_ADMIN_URL (a superuser's URL; default: the test servers' of
// CORPUS_TEST_STATE, started if they are not running: start them first, to keep the database from
// one run to the next and away from other test runs), e.g.
//   CORPUS_TEST_STATE=/tmp/corpus-knn-servers bash scripts/test-servers.sh start
//   CORPUS_TEST_STATE=/tmp/corpus-knn-servers CORPUS_BENCH_KNN_VECTORS=400000 bun scripts/bench/knn.ts
// The vectors: synthetic but shaped like sentence embeddings, whose neighbourhoods are of low
// dimension: 2,000 topics (random unit centres), each vector its topic's centre plus a point of a
// random 32-dimensional subspace of its own topic (cosine to the centre ~0.75) plus small
// isotropic noise, normalised; then rotated by a user's rotation (D25) as the product stores them.
// Queries are drawn the same way and rotated by the same rotation, as a question's vector is.
// CORPUS_BENCH_KNN_PG_EF and CORPUS_BENCH_KNN_USEARCH_EF (lists, e.g. "40,100,200") measure each
// HNSW at several search widths in the same run (defaults: the stores' own, 100 and 64; the embedded
// one at its default through the store's own search, at others on the same snapshot; an empty list
// measures that one not at all, and builds none).
import type { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { type KeyedVector, VectorRotation } from "../../src/crypto/rotation";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { MIGRATIONS } from "../../src/migrations";
import { openDatabase } from "../../src/store/database";
import { openSharedDatabase } from "../../src/store/shared";
import { configureConnectorVectors } from "../../src/vectors/embedded";
import { EmbeddedHnsw, HNSW_DEFAULTS } from "../../src/vectors/hnsw";
import { BIG_PARTITION_VECTORS, indexFile, PartitionIndexedStore, VECTOR_INDEX_DIR } from "../../src/vectors/partition-index";
import { DEFAULT_EF_SEARCH, PostgresVectorStore, VECTORS_TABLE, vectorMigrations, vectorsHnswIndex } from "../../src/vectors/postgres";
import { CONNECTOR_VECTORS, partitionOf, SqliteVectorStore } from "../../src/vectors/sqlite";
import type { VectorStore } from "../../src/vectors/store";
import { testServers } from "../../test/support/servers";

const N = Number(process.env.CORPUS_BENCH_KNN_VECTORS ?? 20_000);
const QUERIES = Number(process.env.CORPUS_BENCH_KNN_QUERIES ?? 200);
const K = 10;
const DIM = EMBEDDING_DIM;
const TOPICS = 2000;
const SUBSPACE = 32;
const OWNER = "bench";
const CONNECTOR = "mail";
const dir = `/tmp/corpus-knn-${N}`;
/** The user's rotation (D25): every vector stored and every query is rotated by it. */
const rotation = VectorRotation.fromKey(Buffer.alloc(32, 7), DIM);
/** The candidates each HNSW keeps while searching, each measured (pgvector's hnsw.ef_search, usearch's expansion): more, better recall, slower. */
const efList = (name: string, fallback: number) =>
  (process.env[name] ?? String(fallback))
    .split(",")
    .filter((x) => x.trim() !== "")
    .map(Number);
const PG_EF = efList("CORPUS_BENCH_KNN_PG_EF", DEFAULT_EF_SEARCH);
const USEARCH_EF = efList("CORPUS_BENCH_KNN_USEARCH_EF", HNSW_DEFAULTS.expansionSearch);

/** A seeded generator (mulberry32) and standard normals from it. */
function random(seed: number) {
  let s = seed >>> 0;
  const uniform = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normal = () => Math.sqrt(-2 * Math.log(uniform() + 1e-12)) * Math.cos(2 * Math.PI * uniform());
  return { uniform, normal };
}

const normalise = (v: Float32Array) => {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  for (let i = 0; i < v.length; i++) v[i]! /= n;
  return v;
};

/** The topics: a centre and a basis of its subspace each (seeded, so the queries share them). */
function topics() {
  const r = random(7);
  return Array.from({ length: TOPICS }, () => ({
    centre: normalise(Float32Array.from({ length: DIM }, r.normal)),
    basis: Array.from({ length: SUBSPACE }, () => normalise(Float32Array.from({ length: DIM }, r.normal))),
  }));
}

function draw(count: number, seed: number): Float32Array {
  const t = topics();
  const r = random(seed);
  const out = new Float32Array(count * DIM);
  for (let i = 0; i < count; i++) {
    const topic = t[Math.floor(r.uniform() * TOPICS)]!;
    const v = out.subarray(i * DIM, (i + 1) * DIM);
    v.set(topic.centre);
    for (const b of topic.basis) {
      const z = (r.normal() * 0.9) / Math.sqrt(SUBSPACE);
      for (let j = 0; j < DIM; j++) v[j]! += z * b[j]!;
    }
    for (let j = 0; j < DIM; j++) v[j]! += (r.normal() * 0.15) / Math.sqrt(DIM);
    normalise(v);
  }
  return out;
}

/** The build times of the stores, kept with them (a run that reuses a store prints its build's). */
const builtFile = join(dir, "built.json");
const built: Record<string, number> = existsSync(builtFile) ? JSON.parse(readFileSync(builtFile, "utf8")) : {};
async function timedBuild(name: string, work: () => Promise<unknown> | unknown): Promise<void> {
  const t = performance.now();
  await work();
  built[name] = (performance.now() - t) / 1000;
  writeFileSync(builtFile, JSON.stringify(built, null, 1));
  console.error(`${name}: ${built[name]!.toFixed(1)} s`);
}

/** Drawn, then rotated by the user's rotation (row i is the chunk of id i + 1). */
async function keyedVectors(): Promise<Float32Array> {
  const file = join(dir, "keyed.f32");
  if (!existsSync(file))
    await timedBuild(`${N} vectors drawn and rotated`, () => {
      const v = draw(N, 1);
      for (let i = 0; i < N; i++) v.set(rotation.apply(v.subarray(i * DIM, (i + 1) * DIM)), i * DIM);
      writeFileSync(`${file}.part`, v);
      renameSync(`${file}.part`, file);
    });
  const bytes = readFileSync(file);
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
}

const row = (all: Float32Array, i: number) => all.subarray(i * DIM, (i + 1) * DIM) as KeyedVector;
const ids = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);
/** Ids from 1: row i is id i + 1. */
const BATCH = 5000;
const SNAPSHOT_BUILD = "embedded HNSW: snapshot built by its worker";

/** The data folder's database with the user's rows in sqlite-vec's table, put through the embedded store (the index's threshold out of reach while loading). */
async function embeddedDatabase(all: Float32Array): Promise<Database> {
  const db = openDatabase(dir, MIGRATIONS);
  const exact = new SqliteVectorStore(db, CONNECTOR_VECTORS);
  if (exact.count(OWNER) !== N) {
    const loading = new PartitionIndexedStore(db, exact, { threshold: Number.MAX_SAFE_INTEGER });
    loading.dropOwner(OWNER);
    delete built[SNAPSHOT_BUILD];
    await timedBuild("sqlite-vec: rows", () => {
      for (let at = 0; at < N; at += BATCH)
        loading.put(
          OWNER,
          CONNECTOR,
          ids(at, Math.min(BATCH, N - at)).map((i) => ({ id: i + 1, vector: row(all, i) })),
        );
    });
  }
  return db;
}

/**
 * The store the local index searches through (the default threshold; a quick run's fewer vectors
 * are indexed too), its snapshot built as the product builds it: the partition's next change asks
 * for it, a worker builds it.
 */
async function embeddedHnsw(db: Database): Promise<PartitionIndexedStore> {
  const store = configureConnectorVectors(db, { threshold: Math.min(BIG_PARTITION_VECTORS, N), onBuildFailed: (e) => console.error(e) });
  if (!store.indexed(OWNER, CONNECTOR))
    await timedBuild(SNAPSHOT_BUILD, async () => {
      store.put(OWNER, CONNECTOR, []);
      await store.settled();
    });
  if (!store.indexed(OWNER, CONNECTOR)) throw new Error("the embedded HNSW was not built");
  return store;
}

/** The snapshot's file (to search it at other widths than the store's). */
function snapshotFile(db: Database): string {
  const partition = partitionOf(OWNER, CONNECTOR);
  const { ready } = db
    .query<{ ready: number }, [string]>(`SELECT ready FROM ${CONNECTOR_VECTORS.hnsw.tables} WHERE partition = ?`)
    .get(partition)!;
  return indexFile(join(dir, VECTOR_INDEX_DIR), partition, ready);
}

/** The shared database's URL (its table and index made by the product's migrations), the user's rows and the HNSW index in it. */
async function sharedDatabase(all: Float32Array): Promise<string> {
  const adminUrl = process.env.CORPUS_BENCH_PG_ADMIN_URL ?? (await testServers()).pgAdminUrl;
  const name = `corpus_knn_${N}`;
  const server = postgres(adminUrl, { max: 1, onnotice: () => {} });
  if ((await server`SELECT 1 FROM pg_database WHERE datname = ${name}`).length === 0) await server.unsafe(`CREATE DATABASE ${name}`);
  await server.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const admin = postgres(url.href, { max: 1, onnotice: () => {} });
  await admin`CREATE EXTENSION IF NOT EXISTS vector`;
  const sql = await openSharedDatabase(url.href, vectorMigrations(VECTORS_TABLE));
  const store = PostgresVectorStore.over(sql, VECTORS_TABLE);
  if ((await store.count(OWNER)) !== N) {
    // Rows first, the index after (pgvector builds it in memory: far faster than row by row).
    await admin.unsafe(`DROP INDEX IF EXISTS ${VECTORS_TABLE}_hnsw`);
    await admin.unsafe(`TRUNCATE ${VECTORS_TABLE}`);
    await timedBuild("pgvector: rows", async () => {
      for (let at = 0; at < N; at += BATCH)
        await store.put(
          OWNER,
          CONNECTOR,
          ids(at, Math.min(BATCH, N - at)).map((i) => ({ id: i + 1, vector: row(all, i) })),
        );
    });
    await timedBuild("pgvector: HNSW index", async () => {
      await admin.unsafe("SET maintenance_work_mem = '2GB'");
      await admin.unsafe(vectorsHnswIndex(VECTORS_TABLE));
      await admin.unsafe(`VACUUM ANALYZE ${VECTORS_TABLE}`);
    });
  }
  await admin.end();
  await sql.end();
  return url.href;
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

interface Result {
  name: string;
  times: number[];
  found: number[][];
}

async function measure(name: string, queries: Float32Array, search: (q: KeyedVector) => Promise<number[]> | number[]): Promise<Result> {
  for (let i = 0; i < Math.min(10, QUERIES); i++) await search(row(queries, i)); // warm
  const times: number[] = [];
  const found: number[][] = [];
  for (let i = 0; i < QUERIES; i++) {
    const t = performance.now();
    found.push(await search(row(queries, i)));
    times.push(performance.now() - t);
  }
  return { name, times, found };
}

/** Filtered by owner and connector, as the local index searches its chunks (store-postgres.ts nearestChunks, candidates.ts). */
const knnIds = (store: VectorStore) => async (q: KeyedVector) =>
  (await store.knn(OWNER, q, K, { connectors: [CONNECTOR] })).map((n) => n.id);

mkdirSync(dir, { recursive: true, mode: 0o700 });
const all = await keyedVectors();
const queries = draw(QUERIES, 2);
for (let i = 0; i < QUERIES; i++) queries.set(rotation.apply(row(queries, i)), i * DIM);
const db = await embeddedDatabase(all);
// An empty list measures none, and builds none (at 400k each build is long on a loaded machine).
// The two HNSW are built at once (the embedded one in its worker, pgvector's in PostgreSQL): each
// build's time is taken while the other may run.
const embeddedBuilt = USEARCH_EF.length ? embeddedHnsw(db) : undefined;
const pgUrl = PG_EF.length ? await sharedDatabase(all) : undefined;
const hnsw = await embeddedBuilt;

const exact = await measure("sqlite-vec brute force (exact)", queries, knnIds(new SqliteVectorStore(db, CONNECTOR_VECTORS)));
const results = [exact];
if (pgUrl) {
  // The shared database's connections as a node opens them; each search through the store the local index uses.
  const sql = await openSharedDatabase(pgUrl, vectorMigrations(VECTORS_TABLE));
  for (const ef of PG_EF)
    results.push(await measure(`pgvector HNSW (ef_search ${ef})`, queries, knnIds(PostgresVectorStore.over(sql, VECTORS_TABLE, ef))));
  await sql.end();
}
for (const ef of USEARCH_EF) {
  if (ef === HNSW_DEFAULTS.expansionSearch) results.push(await measure(`embedded HNSW (store, ef ${ef})`, queries, knnIds(hnsw!)));
  else {
    const index = EmbeddedHnsw.view(snapshotFile(db), { expansionSearch: ef });
    results.push(await measure(`embedded HNSW (snapshot, ef ${ef})`, queries, (q) => index.search(q, K).map((n) => n.id)));
  }
}
const recall = (r: Result) => r.found.reduce((sum, f, i) => sum + f.filter((id) => exact.found[i]!.includes(id)).length, 0) / (K * QUERIES);

const load = loadavg()
  .map((l) => l.toFixed(1))
  .join(" ");
console.log(
  `KNN, k=${K}, ${N} keyed vectors of one user (384-d), ${QUERIES} queries, load ${load}; ratio: sqlite-vec's p50 over the store's`,
);
console.log("store                              p50 ms   p99 ms   recall@10   x faster (p50)");
for (const r of results)
  console.log(
    `${r.name.padEnd(34)} ${percentile(r.times, 0.5).toFixed(2).padStart(6)} ${percentile(r.times, 0.99).toFixed(2).padStart(8)} ${recall(r).toFixed(3).padStart(11)} ${(percentile(exact.times, 0.5) / percentile(r.times, 0.5)).toFixed(1).padStart(16)}`,
  );
console.log("built (s; taken by the run that built each):");
for (const [name, seconds] of Object.entries(built)) console.log(`  ${name.padEnd(48)} ${seconds.toFixed(1).padStart(8)}`);
hnsw?.close();
db.close();
process.exit(0);
