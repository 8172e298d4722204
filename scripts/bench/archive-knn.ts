// deep_search's archive search for a heavy user (CORPUS_BENCH_ARCHIVE_CHUNKS archived chunks,
// 100k by default, answers of 10 chunks a minute apart), as the route asks it (SqliteArchiveRows:
// the nearest 20, shape B's default, then their rows), the model and HTTP aside: before
// (sqlite-vec's brute force over every vector of the user, what the archive did) and after (the
// user's HNSW index, src/vectors/partition-index.ts), in the same run on the same database, over
// three ranges: all time, the newest third (kept from the index's neighbours) and one answer
// (searched exactly, too narrow for the index's 4,096 nearest). p50/p99 of one search, recall@10
// of the index against exact, the ratio of the p50s. The archive is built once into
// /tmp/corpus-archive-knn-<n>/ and reused (vectors: test/support/unit-vectors.ts, keyed by a
// rotation as the archive's are).
//   bun scripts/bench/archive-knn.ts
import { existsSync, mkdirSync } from "node:fs";
import { ARCHIVE_SCOPE, ARCHIVE_VECTORS, SqliteArchiveRows } from "../../src/archive/rows";
import { type KeyedVector, VectorRotation } from "../../src/crypto/rotation";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { MIGRATIONS } from "../../src/migrations";
import { openDatabase } from "../../src/store/database";
import { BIG_PARTITION_VECTORS } from "../../src/vectors/partition-index";
import { SqliteVectorStore } from "../../src/vectors/sqlite";
import type { Neighbour } from "../../src/vectors/store";
import { unitVectors } from "../../test/support/unit-vectors";

const N = Number(process.env.CORPUS_BENCH_ARCHIVE_CHUNKS ?? 100_000);
const QUERIES = Number(process.env.CORPUS_BENCH_ARCHIVE_QUERIES ?? 100);
const LIMIT = 20;
const PER_ANSWER = 10;
const T0 = 1_700_000_000;
const USER = "heavy";
const dir = `/tmp/corpus-archive-knn-${N}`;

const fresh = !existsSync(dir);
mkdirSync(dir, { recursive: true, mode: 0o700 });
const db = openDatabase(dir, MIGRATIONS);
const rotation = VectorRotation.fromKey(Buffer.alloc(32, 7), EMBEDDING_DIM);
// Built with no index (the threshold out of reach), then indexed by a store at the default one.
const unindexed = new SqliteArchiveRows(db, { threshold: Number.MAX_SAFE_INTEGER });
if (fresh || unindexed.count() < N) {
  const t = performance.now();
  const data = unitVectors(N, 11);
  for (let first = 0; first < N; first += 500 * PER_ANSWER)
    db.transaction(() => {
      for (let a = first; a < Math.min(N, first + 500 * PER_ANSWER); a += PER_ANSWER)
        unindexed.write({
          user: USER,
          queryId: `q${a}`,
          at: T0 + (a / PER_ANSWER) * 60,
          question: new Uint8Array(32),
          documents: [],
          chunks: data
            .slice(a, a + PER_ANSWER)
            .map((v, i) => ({ chunkId: `c${a + i}`, body: new Uint8Array(256), vector: rotation.apply(v) })),
        });
    })();
  console.error(`archived ${N} chunks in ${((performance.now() - t) / 1000).toFixed(1)} s -> ${dir}`);
}
// The default threshold (a quick run of fewer chunks is indexed too).
const rows = new SqliteArchiveRows(db, { threshold: Math.min(BIG_PARTITION_VECTORS, N), onBuildFailed: (e) => console.error(e) });
if (!rows.vectors.indexed(USER, ARCHIVE_SCOPE)) {
  const t = performance.now();
  // A change (none put) asks for the index, as the next answer archived would.
  rows.vectors.put(USER, ARCHIVE_SCOPE, []);
  await rows.vectors.settled();
  console.error(`index built in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}
if (!rows.vectors.indexed(USER, ARCHIVE_SCOPE)) throw new Error("the index was not built");

const exact = new SqliteVectorStore(db, ARCHIVE_VECTORS);
const questions = unitVectors(QUERIES, 12).map((q) => rotation.apply(q) as KeyedVector);
const answers = N / PER_ANSWER;
const ranges: Array<[string, { from?: number; to?: number }]> = [
  ["all time", {}],
  ["newest third", { from: T0 + Math.floor((answers * 2) / 3) * 60 }],
  ["one answer", { from: T0 + Math.floor(answers / 2) * 60, to: T0 + Math.floor(answers / 2) * 60 + 60 }],
];
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

/** One search as the route asks it: the nearest, then their rows; its time and its 10 nearest. */
function timed(search: () => Neighbour[]): { ms: number; top: number[] } {
  const t = performance.now();
  const near = search();
  rows.chunks(
    USER,
    near.map((n) => n.id),
  );
  return { ms: performance.now() - t, top: near.slice(0, 10).map((n) => n.id) };
}

console.log(`deep_search's archive search, ${N} chunks of one user, nearest ${LIMIT}, ${QUERIES} questions each`);
console.log("range          before p50/p99 ms   after p50/p99 ms   recall@10   x faster (p50)");
for (const [name, range] of ranges) {
  const before = { times: [] as number[] };
  const after = { times: [] as number[] };
  let hits = 0;
  // Alternated question by question, so that load on the shared machine falls on both alike.
  for (const q of questions) {
    const b = timed(() => exact.knn(USER, q, LIMIT, range));
    const a = timed(() => rows.nearest(USER, q, LIMIT, range));
    before.times.push(b.ms);
    after.times.push(a.ms);
    hits += a.top.filter((id) => b.top.includes(id)).length;
  }
  const p = (xs: number[]) => `${percentile(xs, 0.5).toFixed(1)}/${percentile(xs, 0.99).toFixed(1)}`;
  console.log(
    `${name.padEnd(14)} ${p(before.times).padStart(18)} ${p(after.times).padStart(18)} ${(hits / (10 * QUERIES)).toFixed(3).padStart(11)} ${(percentile(before.times, 0.5) / percentile(after.times, 0.5)).toFixed(1).padStart(16)}`,
  );
}
rows.close();
unindexed.close();
db.close();
