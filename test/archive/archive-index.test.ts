// A heavy user's archive (deep_search's vectors, one partition per user) past the threshold
// (small here, as CORPUS_VECTOR_INDEX_THRESHOLD sets it) gets the embedded HNSW index the
// connectors' big partitions get (vectors/partition-index.ts), in archive-index/: a search reads
// the index and the few vectors put since, not every vector (recall@10 against exact search);
// within times it keeps the index's neighbours in range, or searches a narrow range exactly; no
// user's search gives another's chunk; forgetting the user, or every vector, leaves no file.
import { afterAll, expect, spyOn, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ARCHIVE_VECTORS, forgetArchiveVectors, SqliteArchiveRows } from "../../src/archive/rows";
import { type KeyedVector, VectorRotation } from "../../src/crypto/rotation";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { MIGRATIONS } from "../../src/migrations";
import { openDatabase } from "../../src/store/database";
import { EmbeddedHnsw } from "../../src/vectors/hnsw";
import { SqliteVectorStore } from "../../src/vectors/sqlite";
import { MAX_KNN } from "../../src/vectors/store";
import { tempDir } from "../helpers";
import { unitVectors } from "../support/unit-vectors";

// Past MAX_KNN (4,096), so that a range can be too narrow to be found among the index's nearest.
const THRESHOLD = 4000;
const N = 5000;
/** Chunks per archived answer; answer q was asked at T0 + q minutes. */
const PER_ANSWER = 10;
const T0 = 1_700_000_000;
/** The time of the answer of data[place]: answer q was asked at T0 + q minutes. */
const atOf = (place: number) => T0 + Math.floor(place / PER_ANSWER) * 60;

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const questions = unitVectors(30, 4);
/** Archived nearest questions[0] first: its nearest are the oldest (a search of the newest for it must look further). */
const data = unitVectors(N, 3)
  .map((v) => ({ v, s: dot(v, questions[0]!) }))
  .sort((a, b) => b.s - a.s)
  .map((x) => x.v);
/** The exact k nearest places in data among those `keep` keeps. */
const exactTop = (q: Float32Array, keep: (place: number) => boolean = () => true, k = 10) =>
  data
    .map((v, i) => ({ place: i, s: dot(v, q) }))
    .filter((x) => keep(x.place))
    .sort((a, b) => b.s - a.s)
    .slice(0, k)
    .map((x) => x.place);

const dir = tempDir();
const db = openDatabase(dir, MIGRATIONS);
const rows = new SqliteArchiveRows(db, { threshold: THRESHOLD, onBuildFailed: (e) => console.error(e) });
afterAll(() => {
  rows.close();
  db.close();
});
const indexDir = join(dir, ARCHIVE_VECTORS.hnsw.dir);
const indexFiles = () => (existsSync(indexDir) ? readdirSync(indexDir) : []);
const rotation = VectorRotation.fromKey(randomBytes(32), EMBEDDING_DIM);

/** The heavy user's chunks' places in data, by id. */
const placeOf = new Map<number, number>();

/** Archives `vectors` from..to as answers of PER_ANSWER chunks for `user`, asked at atOf(place). */
function archive(user: string, from: number, to: number, vectors = data, keyed = rotation, into = rows): void {
  for (let first = from; first < to; first += PER_ANSWER) {
    const ids = into.write({
      user,
      queryId: `${user}-q${first}-${placeOf.size}`,
      at: atOf(first),
      question: new Uint8Array([1]),
      documents: [],
      chunks: vectors.slice(first, first + PER_ANSWER).map((v, i) => ({
        chunkId: `c${first + i}`,
        body: new Uint8Array([2]),
        vector: keyed.apply(v),
      })),
    });
    if (user === "heavy" && vectors === data) ids.forEach((id, i) => placeOf.set(id, first + i));
  }
}

function recall(range: { from?: number; to?: number } = {}, from = rows): number {
  const keep = (place: number) =>
    (range.from === undefined || atOf(place) >= range.from) && (range.to === undefined || atOf(place) < range.to);
  let hits = 0;
  for (const q of questions) {
    // Chunks archived besides the data (none in range of a test's question) count as misses.
    const found = from.nearest("heavy", rotation.apply(q), 10, range).map((n) => placeOf.get(n.id) ?? -1);
    expect(found.filter((place) => place >= 0).every(keep)).toBe(true);
    const exact = exactTop(q, keep);
    hits += found.filter((id) => exact.includes(id)).length;
  }
  return hits / (10 * questions.length);
}

test("past the threshold a user's archive gets an index of its keyed vectors in archive-index/; a search reads it, not every vector, at recall@10 >= 0.95", async () => {
  archive("heavy", 0, 3900);
  await rows.vectors.settled();
  expect(indexFiles()).toEqual([]);
  archive("heavy", 3900, N);
  await rows.vectors.settled();
  const files = indexFiles();
  expect(files.length).toBe(1);
  // No user name in the file's name; its bytes hold the keyed vectors, never one as the model made it.
  expect(files[0]).not.toContain("heavy");
  const bytes = readFileSync(join(indexDir, files[0]!));
  expect(bytes.indexOf(Buffer.from(data[0]!.buffer, data[0]!.byteOffset, EMBEDDING_DIM * 4))).toBe(-1);
  expect(bytes.indexOf(Buffer.from(rotation.apply(data[0]!).buffer))).toBeGreaterThanOrEqual(0);

  // Counted: sqlite-vec's brute force (which compares every one of the N vectors) is never run;
  // the index is asked for k neighbours once a search; the delta holds nothing yet.
  const exact = spyOn(SqliteVectorStore.prototype, "knn");
  const asked = spyOn(EmbeddedHnsw.prototype, "search");
  expect(recall()).toBeGreaterThanOrEqual(0.95);
  expect(exact).not.toHaveBeenCalled();
  expect(asked.mock.calls.map((c) => c[1])).toEqual(questions.map(() => 10));
  expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM archive_hnsw_delta_rowids").get()!.n).toBe(0);
  exact.mockRestore();
  asked.mockRestore();
}, 120_000);

test("a user's search never gives another's chunk: a light user's exact search, the heavy one's indexed search", () => {
  const other = VectorRotation.fromKey(randomBytes(32), EMBEDDING_DIM);
  // The light user's chunks are the heavy user's nearest vectors, under their own key and under the heavy one's.
  const lightIds = new Set<number>();
  for (const copy of [0, 1]) {
    const ids = rows.write({
      user: "light",
      queryId: `light-${copy}`,
      at: T0,
      question: new Uint8Array([1]),
      documents: [],
      chunks: questions.slice(0, 10).map((q, i) => ({ chunkId: `l${i}`, body: new Uint8Array([2]), vector: other.apply(q) })),
    });
    for (const id of ids) lightIds.add(id);
  }
  for (const q of questions.slice(0, 10)) {
    expect(rows.nearest("heavy", rotation.apply(q), 50, {}).some((n) => lightIds.has(n.id))).toBe(false);
    expect(rows.nearest("heavy", other.apply(q), 50, {}).some((n) => lightIds.has(n.id))).toBe(false);
    const light = rows.nearest("light", other.apply(q), 50, {});
    expect(light.length).toBe(20);
    expect(light.every((n) => lightIds.has(n.id))).toBe(true);
  }
  expect(rows.vectors.indexed("light", "archive")).toBe(false);
  expect(rows.vectors.indexed("heavy", "archive")).toBe(true);
});

test("within times: a wide range keeps the index's neighbours in range (widening while too few are); a narrow one is searched exactly; vectors put since are filtered by time too", () => {
  const exact = spyOn(SqliteVectorStore.prototype, "knn");
  const asked = spyOn(EmbeddedHnsw.prototype, "search");
  // The newest third of the answers: asked through the index, for 4 x k x 3 neighbours at first
  // (k in range, were they spread evenly).
  const wide = { from: atOf(3330) };
  expect(recall(wide)).toBeGreaterThanOrEqual(0.95);
  expect(exact).not.toHaveBeenCalled();
  expect(asked.mock.calls[0]![1]).toBe(Math.ceil((4 * 10 * N) / (N - 3330)));
  // questions[0]'s nearest are the oldest: the index asked for four times as many, and again, until 10 of the newest are among them.
  asked.mockClear();
  const forFirst = rows.nearest("heavy", rotation.apply(questions[0]!), 10, wide).map((n) => placeOf.get(n.id)!);
  const widened = asked.mock.calls.map((c) => c[1]);
  expect(widened.length).toBeGreaterThan(1);
  expect(widened.slice(1)).toEqual(widened.slice(0, -1).map((n) => Math.min(MAX_KNN, n * 4)));
  expect(forFirst).toEqual(exactTop(questions[0]!, (place) => place >= 3330));
  expect(exact).not.toHaveBeenCalled();
  // One answer (10 chunks of 5,000): too few to be found among the index's MAX_KNN nearest, searched exactly at once.
  asked.mockClear();
  const narrow = { from: atOf(2000), to: atOf(2010) };
  expect(recall(narrow)).toBe(1);
  expect(asked).not.toHaveBeenCalled();
  expect(exact).toHaveBeenCalledTimes(questions.length);
  exact.mockRestore();
  asked.mockRestore();
  // The times counted without reading a vector, as they were archived.
  expect(new SqliteVectorStore(db, ARCHIVE_VECTORS).timeCounts("heavy", narrow)).toEqual({ all: N, within: 10 });
  expect(new SqliteVectorStore(db, ARCHIVE_VECTORS).timeCounts("heavy", wide)).toEqual({ all: N, within: N - 3330 });

  // Put since the snapshot (the delta): found within its time, not outside it.
  const q = questions[5]!;
  const late = { user: "heavy", queryId: "heavy-late", at: T0 + 10_000_000, question: new Uint8Array([1]), documents: [] };
  const [added] = rows.write({ ...late, chunks: [{ chunkId: "late", body: new Uint8Array([2]), vector: rotation.apply(q) }] });
  expect(rows.nearest("heavy", rotation.apply(q), 10, { from: T0 + 9_000_000 }).map((n) => n.id)).toEqual([added!]);
  expect(rows.nearest("heavy", rotation.apply(q), 10, { to: T0 + 9_000_000 }).some((n) => n.id === added)).toBe(false);
  expect(rows.nearest("heavy", rotation.apply(q), 10, wide)[0]).toMatchObject({ id: added, similarity: expect.closeTo(1, 4) });
});

test("an index whose file is gone (a restored backup holds the database alone) is searched exactly, and built again at the next change", async () => {
  const [file] = indexFiles();
  rmSync(join(indexDir, file!));
  // A process started on the restored folder.
  const restarted = new SqliteArchiveRows(db, { threshold: THRESHOLD });
  const exact = spyOn(SqliteVectorStore.prototype, "knn");
  expect(recall({}, restarted)).toBeGreaterThanOrEqual(0.95);
  expect(exact).toHaveBeenCalled();
  exact.mockRestore();
  archive("heavy", 0, PER_ANSWER, questions, rotation, restarted);
  await restarted.vectors.settled();
  expect(indexFiles().length).toBe(1);
  expect(indexFiles()).not.toEqual([file]);
  const asked = spyOn(EmbeddedHnsw.prototype, "search");
  expect(recall({}, restarted)).toBeGreaterThanOrEqual(0.95);
  expect(asked).toHaveBeenCalled();
  asked.mockRestore();
  restarted.close();
});

test("forgetting the user (D13) removes their index's rows and file; forgetting every vector (a model change) removes the folder", async () => {
  expect(indexFiles().length).toBe(1);
  expect(rows.forget("heavy").chunks).toBeGreaterThan(N);
  placeOf.clear();
  expect(indexFiles()).toEqual([]);
  expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM archive_hnsw").get()!.n).toBe(0);
  expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM archive_hnsw_masked").get()!.n).toBe(0);
  expect(rows.nearest("heavy", rotation.apply(questions[0]!), 10, {})).toEqual([]);
  // The light user is untouched.
  expect(rows.nearest("light", rotation.apply(questions[0]!), 50, {}).length).toBe(20);

  archive("heavy", 0, N);
  await rows.vectors.settled();
  expect(indexFiles().length).toBe(1);
  forgetArchiveVectors(db);
  expect(existsSync(indexDir)).toBe(false);
  expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM archive_hnsw").get()!.n).toBe(0);
  expect(rows.nearest("heavy", rotation.apply(questions[0]!) as KeyedVector, 10, {})).toEqual([]);
}, 120_000);
