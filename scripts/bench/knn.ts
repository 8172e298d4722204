// KNN over one user's keyed 384-d vectors: sqlite-vec's brute force (today's embedded
// store, exact: the baseline and the ground truth), pgvector's HNSW (the shared store) and the
// embedded HNSW (usearch), in the same run: p50/p99 of one search (k = 10) and recall@10 against
// the exact answer. Quick by default (20k vectors); CORPUS_BENCH_KNN_VECTORS=400000 for the
// issue's size (never in CI). The set and each store are built once into /tmp and reused:
//   /tmp/corpus-knn-<n>.f32 (the vectors), .db (sqlite-vec), .usearch, and the database
//   corpus_knn_<n> of the PostgreSQL at CORPUS_BENCH_PG_ADMIN_URL (a superuser's URL; default:
//   the test servers', scripts/test-servers.sh, started if they are not running).
// The vectors: synthetic but shaped like sentence embeddings, whose neighbourhoods are of low
// dimension: 2,000 topics (random unit centres), each vector its topic's centre plus a point of a
// random 32-dimensional subspace of its own topic (cosine to the centre ~0.75) plus small
// isotropic noise, normalised. Queries are drawn the same way. They stand for keyed vectors: a
// rotation (D25) of this set is a set of the same law, and every cosine is kept.
// CORPUS_BENCH_KNN_PG_EF and CORPUS_BENCH_KNN_USEARCH_EF (lists, e.g. "40,100,200") measure each
// HNSW at several search widths in the same run (defaults: the stores' own, 100 and 64; an empty
// list measures that one not at all).
//   bun scripts/bench/knn.ts
import { Database } from "bun:sqlite";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import postgres from "postgres";
import type { KeyedVector } from "../../src/crypto/rotation";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { loadSqliteVec } from "../../src/store/database";
import { EmbeddedHnsw, HNSW_DEFAULTS } from "../../src/vectors/hnsw";
import { DEFAULT_EF_SEARCH, PostgresVectorStore, VECTORS_TABLE, vectorsHnswIndex } from "../../src/vectors/postgres";
import { SqliteVectorStore } from "../../src/vectors/sqlite";
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
const base = `/tmp/corpus-knn-${N}`;
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

function vectorsFile(): Float32Array {
  const file = `${base}.f32`;
  if (!existsSync(file)) {
    const t = performance.now();
    const v = draw(N, 1);
    writeFileSync(`${file}.part`, v);
    renameSync(`${file}.part`, file);
    console.error(`drew ${N} vectors in ${((performance.now() - t) / 1000).toFixed(1)} s -> ${file}`);
  }
  const bytes = readFileSync(file);
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
}

const row = (all: Float32Array, i: number) => all.subarray(i * DIM, (i + 1) * DIM) as KeyedVector;
const ids = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);
/** Ids from 1: row i is id i + 1. */
const BATCH = 5000;

async function sqliteStore(all: Float32Array): Promise<{ store: SqliteVectorStore; close(): void }> {
  const file = `${base}.db`;
  const fresh = !existsSync(file);
  const db = new Database(file, { create: true, strict: true });
  loadSqliteVec(db, "/tmp");
  if (fresh)
    db.exec(
      `CREATE VIRTUAL TABLE connector_vec USING vec0(chunk_id integer primary key, owner text partition key, embedding float[${DIM}] distance_metric=cosine)`,
    );
  const store = new SqliteVectorStore(db);
  if (store.count(OWNER) !== N) {
    const t = performance.now();
    store.dropOwner(OWNER);
    for (let at = 0; at < N; at += BATCH)
      store.put(
        OWNER,
        CONNECTOR,
        ids(at, Math.min(BATCH, N - at)).map((i) => ({ id: i + 1, vector: row(all, i) })),
      );
    console.error(`sqlite-vec: ${N} stored in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  return { store, close: () => db.close() };
}

async function postgresStore(all: Float32Array): Promise<{ store: PostgresVectorStore; url: string; close(): Promise<void> }> {
  const adminUrl = process.env.CORPUS_BENCH_PG_ADMIN_URL ?? (await testServers()).pgAdminUrl;
  const name = `corpus_knn_${N}`;
  const server = postgres(adminUrl, { max: 1, onnotice: () => {} });
  if ((await server`SELECT 1 FROM pg_database WHERE datname = ${name}`).length === 0) await server.unsafe(`CREATE DATABASE ${name}`);
  await server.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const admin = postgres(url.href, { max: 1, onnotice: () => {} });
  await admin`CREATE EXTENSION IF NOT EXISTS vector`;
  const store = await PostgresVectorStore.open(url.href, { efSearch: PG_EF[0] });
  if ((await store.count(OWNER)) !== N) {
    // Rows first, the index after (pgvector builds it in memory: far faster than row by row).
    let t = performance.now();
    await admin.unsafe(`DROP INDEX IF EXISTS ${VECTORS_TABLE}_hnsw`);
    await admin.unsafe(`TRUNCATE ${VECTORS_TABLE}`);
    for (let at = 0; at < N; at += BATCH)
      await store.put(
        OWNER,
        CONNECTOR,
        ids(at, Math.min(BATCH, N - at)).map((i) => ({ id: i + 1, vector: row(all, i) })),
      );
    console.error(`pgvector: ${N} rows in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    t = performance.now();
    await admin.unsafe("SET maintenance_work_mem = '2GB'");
    await admin.unsafe(vectorsHnswIndex(VECTORS_TABLE));
    await admin.unsafe(`VACUUM ANALYZE ${VECTORS_TABLE}`);
    console.error(`pgvector: HNSW index built in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  await admin.end();
  return { store, url: url.href, close: () => store.close() };
}

function usearchIndex(all: Float32Array): EmbeddedHnsw {
  const file = `${base}.usearch`;
  if (existsSync(file)) return EmbeddedHnsw.load(file);
  const t = performance.now();
  const index = EmbeddedHnsw.create();
  for (let at = 0; at < N; at += BATCH) {
    const count = Math.min(BATCH, N - at);
    // Two threads: the build is background work, off the serving thread (D31).
    index.add(ids(at + 1, count), all.subarray(at * DIM, (at + count) * DIM), 2);
  }
  index.save(`${file}.part`);
  renameSync(`${file}.part`, file);
  console.error(`usearch: HNSW of ${N} built in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  return index;
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

const all = vectorsFile();
const queries = draw(QUERIES, 2);
const sqlite = await sqliteStore(all);
// An empty list measures none, and builds none (at 400k each build is long on a loaded machine).
const pg = PG_EF.length ? await postgresStore(all) : undefined;
const hnsw = USEARCH_EF.length ? usearchIndex(all) : undefined;

const exact = await measure("sqlite-vec brute force (exact)", queries, knnIds(sqlite.store));
const results = [exact];
for (const ef of PG_EF) {
  const store = await PostgresVectorStore.open(pg!.url, { efSearch: ef });
  results.push(await measure(`pgvector HNSW (ef_search ${ef})`, queries, knnIds(store)));
  await store.close();
}
for (const ef of USEARCH_EF) {
  const index = ef === HNSW_DEFAULTS.expansionSearch ? hnsw! : EmbeddedHnsw.view(`${base}.usearch`, { expansionSearch: ef });
  results.push(await measure(`usearch HNSW (embedded, ef ${ef})`, queries, (q) => index.search(q, K).map((n) => n.id)));
}
const recall = (r: Result) => r.found.reduce((sum, f, i) => sum + f.filter((id) => exact.found[i]!.includes(id)).length, 0) / (K * QUERIES);

console.log(`KNN, k=${K}, ${N} vectors of one user (384-d), ${QUERIES} queries; ratio: sqlite-vec's p50 over the store's`);
console.log("store                              p50 ms   p99 ms   recall@10   x faster (p50)");
for (const r of results)
  console.log(
    `${r.name.padEnd(34)} ${percentile(r.times, 0.5).toFixed(2).padStart(6)} ${percentile(r.times, 0.99).toFixed(2).padStart(8)} ${recall(r).toFixed(3).padStart(11)} ${(percentile(exact.times, 0.5) / percentile(r.times, 0.5)).toFixed(1).padStart(16)}`,
  );
sqlite.close();
await pg?.close();
process.exit(0);
