// Big partitions on one node: past BIG_PARTITION_VECTORS vectors, a partition of the embedded
// store (a user's connector, or a user's archive: each has its own rotation, D25, so its own
// space; each vec0 table its own tables and folder of indexes, Vec0Table.hnsw) gets an HNSW index
// (usearch, hnsw.ts) in a file beside the database, built from its keyed vectors in a worker, off
// the serving thread (D31): no plaintext vector is ever on disk. sqlite-vec keeps every vector and
// stays the truth; the index is a snapshot of one generation, and what changed since it was asked
// for is kept in two small tables until the next one is ready (vector_hnsw_… for the local index's):
//   <tables>_delta   the vectors put since (vec0, searched by brute force: a few thousand)
//   <tables>_masked  the ids put or removed since: the snapshot's copy of them is not given
// A search without ids asks the snapshot (read in place, mapped: the search worker and
// the serving thread share its pages) and the delta, and merges them; one within ids is the exact
// search of sqlite-vec; one within times (the archive's) asks the snapshot for ever more
// neighbours, keeping those in range, until k are (searchWithin), or searches exactly a range too
// narrow for that. Changes past REBUILD_SHARE of the snapshot (a key's rotation
// puts every vector again) ask for the next generation; dropping a partition, an owner or all
// removes its files.
import type { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { EMBEDDING_DIM } from "../embedding/embedder";
import type { Migration } from "../store/migrations";
import { EmbeddedHnsw } from "./hnsw";
import type { BuildAsked, BuildDone } from "./hnsw-build-protocol";
import { CONNECTOR_VECTORS, type SqliteVectorStore, type Vec0Table } from "./sqlite";
import { checkK, type EmbeddedVectorStore, type KeyedVector, type KnnFilter, MAX_KNN, type Neighbour, type StoredVector } from "./store";

/** Vectors of one partition past which it gets an HNSW index (sqlite-vec: 59 ms a search at 100k, 233 ms at 400k; issue figures). */
export const BIG_PARTITION_VECTORS = 50_000;

/** Changes since the snapshot (puts and removals), as a share of its vectors, that ask for the next one. */
export const REBUILD_SHARE = 0.1;

/** The most changes kept beside a snapshot before the next is asked for, however big: the delta is searched by brute force. */
export const MAX_DELTA = 4096;

/** A build that failed is not asked again for this long. */
const BUILD_RETRY_MS = 60_000;

/** The folder of the local index's index files, in the data folder. */
export const VECTOR_INDEX_DIR = CONNECTOR_VECTORS.hnsw.dir;

/**
 * Neighbours first asked of a snapshot in a search within times: this many times those that hold k
 * in range if the range's vectors were spread evenly among them; then four times as many, up to MAX_KNN.
 */
const WITHIN_TIMES_FIRST = 4;

/**
 * The tables of a vec0 table's indexes (named by its hnsw.tables). generation: the last snapshot
 * asked for; ready: the one whose file is there (NULL: none yet). The delta keeps each vector's
 * time too where the table does (a search within times filters it).
 */
export function createIndexTables(db: Database, t: Vec0Table): void {
  const name = t.hnsw.tables;
  db.exec(`CREATE TABLE ${name} (
    partition TEXT PRIMARY KEY,
    generation INTEGER NOT NULL,
    ready INTEGER,
    vectors INTEGER NOT NULL DEFAULT 0
  )`);
  db.exec(`CREATE TABLE ${name}_masked (
    partition TEXT NOT NULL,
    id INTEGER NOT NULL,
    generation INTEGER NOT NULL,
    PRIMARY KEY (partition, id)
  ) WITHOUT ROWID`);
  db.exec(
    `CREATE VIRTUAL TABLE ${name}_delta USING vec0(id integer primary key, partition text partition key, generation integer,${t.at ? " at integer," : ""} embedding float[${EMBEDDING_DIM}] distance_metric=cosine)`,
  );
}

export const partitionIndexMigrations: Migration[] = [
  { id: "vectors-001-partition-index", up: (db) => createIndexTables(db, CONNECTOR_VECTORS) },
];

/** The file of a partition's snapshot: named by a hash of the partition (no user name in a file name) and its generation. */
export function indexFile(dir: string, partition: string, generation: number): string {
  return join(dir, `${filePrefix(partition)}${generation}.usearch`);
}
const filePrefix = (partition: string) => `${createHash("sha256").update(partition).digest("hex").slice(0, 32)}-`;

export interface PartitionIndexOptions {
  /** Vectors of a partition past which it is indexed (BIG_PARTITION_VECTORS; CORPUS_VECTOR_INDEX_THRESHOLD). */
  threshold?: number;
  /** Told of a build that failed (it is asked again later). */
  onBuildFailed?: (error: string) => void;
}

interface IndexRow {
  generation: number;
  ready: number | null;
  vectors: number;
}

/**
 * The builder worker's entry inside the executable; scripts/build.ts sets it and compiles
 * hnsw-build-worker.ts as another entrypoint. Beside this file under `bun run`.
 */
declare const CORPUS_HNSW_BUILD_WORKER: string | undefined;
export const HNSW_BUILD_WORKER_DEFINE = "CORPUS_HNSW_BUILD_WORKER";
const workerEntry = () =>
  typeof CORPUS_HNSW_BUILD_WORKER === "string" ? CORPUS_HNSW_BUILD_WORKER : join(import.meta.dir, "hnsw-build-worker.ts");

export class PartitionIndexedStore implements EmbeddedVectorStore {
  private readonly threshold: number;
  private readonly dataDir: string | undefined;
  /** The folder of this table's index files (in the data folder), and the prefix of its tables. */
  private readonly dir: string | undefined;
  private readonly tables: string;
  private readonly t: Vec0Table;
  /** Snapshots read in place by this thread, by partition. */
  private readonly viewed = new Map<string, { generation: number; index: EmbeddedHnsw }>();
  /** Vectors of partitions not indexed, as last counted plus those put since (counted again once past the threshold). */
  private readonly estimate = new Map<string, number>();
  private readonly failedAt = new Map<string, number>();
  private building: Promise<void> | undefined;
  private readonly queue: string[] = [];
  /** The partition being built, and its worker. */
  private current: string | undefined;
  private worker: Worker | undefined;
  private closed = false;

  constructor(
    private readonly db: Database,
    private readonly inner: SqliteVectorStore,
    private readonly options: PartitionIndexOptions = {},
  ) {
    this.threshold = options.threshold ?? BIG_PARTITION_VECTORS;
    this.t = inner.t;
    this.tables = this.t.hnsw.tables;
    const file = db.filename;
    // A database without a file (tests' :memory:) keeps no index beside it.
    this.dataDir = file && file !== ":memory:" ? dirname(file) : undefined;
    this.dir = this.dataDir && join(this.dataDir, this.t.hnsw.dir);
  }

  private row(partition: string): IndexRow | undefined {
    return (
      this.db.query<IndexRow, [string]>(`SELECT generation, ready, vectors FROM ${this.tables} WHERE partition = ?`).get(partition) ??
      undefined
    );
  }

  put(owner: string, connector: string, vectors: readonly StoredVector[]): void {
    const partition = this.inner.partition(owner, connector);
    const { tables, t } = this;
    this.db.transaction(() => {
      this.inner.put(owner, connector, vectors);
      const row = this.row(partition);
      if (!row) return;
      const mask = this.db.query(`INSERT OR REPLACE INTO ${tables}_masked (partition, id, generation) VALUES (?, ?, ?)`);
      const unDelta = this.db.query(`DELETE FROM ${tables}_delta WHERE id = ?`);
      const delta = this.db.query(
        t.at
          ? `INSERT INTO ${tables}_delta (id, partition, generation, at, embedding) VALUES (?, ?, ?, ?, ?)`
          : `INSERT INTO ${tables}_delta (id, partition, generation, embedding) VALUES (?, ?, ?, ?)`,
      );
      for (const v of vectors) {
        mask.run(partition, v.id, row.generation);
        unDelta.run(BigInt(v.id));
        if (t.at) delta.run(BigInt(v.id), partition, row.generation, v.at!, v.vector);
        else delta.run(BigInt(v.id), partition, row.generation, v.vector);
      }
    })();
    this.changed(partition, vectors.length);
  }

  remove(owner: string, connector: string, ids: readonly number[]): void {
    const partition = this.inner.partition(owner, connector);
    const { tables } = this;
    this.db.transaction(() => {
      this.inner.remove(owner, connector, ids);
      const row = this.row(partition);
      if (!row) return;
      const mask = this.db.query(`INSERT OR REPLACE INTO ${tables}_masked (partition, id, generation) VALUES (?, ?, ?)`);
      const unDelta = this.db.query(`DELETE FROM ${tables}_delta WHERE id = ? AND partition = ?`);
      for (const id of ids) {
        mask.run(partition, id, row.generation);
        unDelta.run(BigInt(id), partition);
      }
    })();
    this.changed(partition, 0);
  }

  /** Whether a connector's vectors are searched through a built index (past the threshold). */
  indexed(owner: string, connector: string): boolean {
    return this.dataDir !== undefined && this.row(this.inner.partition(owner, connector))?.ready != null;
  }

  knn(owner: string, query: KeyedVector, k: number, filter: KnnFilter = {}): Neighbour[] {
    checkK(k);
    // Within ids: sqlite-vec's exact search (the snapshot holds none to narrow by).
    if (filter.ids) return this.inner.knn(owner, query, k, filter);
    const range = { from: filter.from, to: filter.to };
    const timed = range.from !== undefined || range.to !== undefined;
    const connectors = filter.connectors ?? this.inner.partitionsOf(owner).map((p) => this.inner.connectorOf(p));
    const found: Neighbour[] = [];
    for (const connector of connectors) {
      const partition = this.inner.partition(owner, connector);
      const row = this.dataDir ? this.row(partition) : undefined;
      const index = row?.ready != null ? this.view(partition, row.ready) : undefined;
      if (!row || row.ready == null || !index) found.push(...this.inner.knn(owner, query, k, { connectors: [connector], ...range }));
      else if (timed) found.push(...this.searchWithin(owner, partition, connector, row.ready, index, query, k, range));
      else found.push(...this.searchIndexed(partition, connector, row.ready, index, query, k));
    }
    found.sort((a, b) => b.similarity - a.similarity);
    return found.slice(0, k);
  }

  /** The snapshot's nearest not changed since, and the nearest of the delta, merged. */
  private searchIndexed(
    partition: string,
    connector: string,
    ready: number,
    index: EmbeddedHnsw,
    query: KeyedVector,
    k: number,
  ): Neighbour[] {
    const masked = this.maskedCount(partition, ready);
    // Enough more that those changed since, left out, leave k.
    const fromIndex = this.fromSnapshot(partition, ready, index, query, Math.min(MAX_KNN, k + masked), masked);
    return [
      ...fromIndex.map((f) => ({ id: f.id, connector, similarity: f.similarity })),
      ...this.fromDelta(partition, connector, ready, query, k),
    ];
  }

  /**
   * The nearest within times of an indexed partition: the snapshot asked for WITHIN_TIMES_FIRST
   * times the neighbours that hold k in range if the range's share were spread evenly, then four
   * times as many while fewer than k of them are in range, keeping those in range (the k best in
   * range are among the snapshot's n best once k of those are in range), and the delta's nearest
   * in range. A range holding too few of the partition's vectors to be found so within MAX_KNN
   * neighbours is searched exactly.
   */
  private searchWithin(
    owner: string,
    partition: string,
    connector: string,
    ready: number,
    index: EmbeddedHnsw,
    query: KeyedVector,
    k: number,
    range: { from?: number; to?: number },
  ): Neighbour[] {
    // The range's share of the partition (its vectors' times, not the vectors, read): one too narrow
    // to be found among the index's MAX_KNN nearest is searched exactly at once (sqlite-vec compares
    // those in range only), not after every widening failed (37 ms where exact took 2, at 10k).
    const { all, within } = this.inner.timeCounts(partition, range);
    let asked = Math.ceil((k * WITHIN_TIMES_FIRST * all) / Math.max(1, within));
    if (within === 0 || asked > MAX_KNN) return this.inner.knn(owner, query, k, { connectors: [connector], ...range });
    const masked = this.maskedCount(partition, ready);
    const inRange = (at: number | undefined) =>
      at !== undefined && (range.from === undefined || at >= range.from) && (range.to === undefined || at < range.to);
    for (; ; asked *= 4) {
      const wanted = Math.min(MAX_KNN, asked + masked);
      const fromIndex = this.fromSnapshot(partition, ready, index, query, wanted, masked);
      const times = this.inner.timesOf(
        partition,
        fromIndex.map((f) => f.id),
      );
      const kept = fromIndex.filter((f) => inRange(times.get(f.id)));
      // k in range, or the snapshot has no more to give: these are the range's nearest.
      if (kept.length >= k || wanted >= index.size)
        return [
          ...kept.slice(0, k).map((f) => ({ id: f.id, connector, similarity: f.similarity })),
          ...this.fromDelta(partition, connector, ready, query, k, range),
        ];
      if (wanted === MAX_KNN) return this.inner.knn(owner, query, k, { connectors: [connector], ...range });
    }
  }

  private maskedCount(partition: string, ready: number): number {
    return this.db
      .query<{ n: number }, [string, number]>(`SELECT count(*) AS n FROM ${this.tables}_masked WHERE partition = ? AND generation >= ?`)
      .get(partition, ready)!.n;
  }

  /** The snapshot's `wanted` nearest, those changed since it was asked for (`masked` of them in all) left out. */
  private fromSnapshot(
    partition: string,
    ready: number,
    index: EmbeddedHnsw,
    query: KeyedVector,
    wanted: number,
    masked: number,
  ): Array<{ id: number; similarity: number }> {
    const fromIndex = index.search(query, wanted);
    if (fromIndex.length === 0 || masked === 0) return fromIndex;
    const stale = new Set(
      this.db
        .query<{ id: number }, [string, number, string]>(
          `SELECT id FROM ${this.tables}_masked WHERE partition = ? AND generation >= ? AND id IN (SELECT value FROM json_each(?))`,
        )
        .all(partition, ready, JSON.stringify(fromIndex.map((f) => f.id)))
        .map((r) => r.id),
    );
    return fromIndex.filter((f) => !stale.has(f.id));
  }

  /** The delta's `k` nearest (put since the snapshot was asked for), within times if given. */
  private fromDelta(
    partition: string,
    connector: string,
    ready: number,
    query: KeyedVector,
    k: number,
    range: { from?: number; to?: number } = {},
  ): Neighbour[] {
    const conditions = [range.from === undefined ? "" : " AND at >= ?", range.to === undefined ? "" : " AND at < ?"].join("");
    const times = [range.from, range.to].filter((s) => s !== undefined);
    return this.db
      .query<{ id: number; distance: number }, Array<KeyedVector | number | string>>(
        `SELECT id, distance FROM ${this.tables}_delta WHERE embedding MATCH ? AND k = ? AND partition = ? AND generation >= ?${conditions}`,
      )
      .all(query, k, partition, ready, ...times)
      .map((r) => ({ id: r.id, connector, similarity: 1 - r.distance }));
  }

  /** The snapshot of `generation`, read in place (again once a newer one is ready); undefined if its file is gone. */
  private view(partition: string, generation: number): EmbeddedHnsw | undefined {
    const seen = this.viewed.get(partition);
    if (seen?.generation === generation) return seen.index;
    this.viewed.delete(partition);
    const file = indexFile(this.dir!, partition, generation);
    if (!existsSync(file)) return undefined;
    const index = EmbeddedHnsw.view(file);
    this.viewed.set(partition, { generation, index });
    return index;
  }

  dropConnector(owner: string, connector: string): number {
    this.forget(this.inner.partition(owner, connector));
    return this.inner.dropConnector(owner, connector);
  }

  dropOwner(owner: string): number {
    for (const p of this.inner.partitionsOf(owner)) this.forget(p);
    // Partitions emptied before (their vectors removed one by one) keep no index either (a table of
    // one partition per owner has named it above).
    if (this.t.connector === undefined)
      for (const { partition } of this.db
        .query<{ partition: string }, [string, string]>(`SELECT partition FROM ${this.tables} WHERE partition >= ? AND partition < ?`)
        .all(`${owner}/`, `${owner}0`))
        if (partition.slice(0, partition.lastIndexOf("/")) === owner) this.forget(partition);
    return this.inner.dropOwner(owner);
  }

  count(owner: string): number {
    return this.inner.count(owner);
  }

  dropAll(): number {
    this.db.transaction(() => {
      this.db.exec(`DELETE FROM ${this.tables}`);
      this.db.exec(`DELETE FROM ${this.tables}_masked`);
      this.db.exec(`DELETE FROM ${this.tables}_delta`);
    })();
    this.viewed.clear();
    this.estimate.clear();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    return this.inner.dropAll();
  }

  /** A partition's index forgotten: its rows and every file of it (a build under way finds its row gone and removes its own). */
  private forget(partition: string): void {
    this.db.transaction(() => {
      const { tables } = this;
      this.db.query(`DELETE FROM ${tables} WHERE partition = ?`).run(partition);
      this.db.query(`DELETE FROM ${tables}_masked WHERE partition = ?`).run(partition);
      for (const { id } of this.db
        .query<{ id: number }, [string]>(
          `SELECT rowid AS id FROM ${tables}_delta_rowids WHERE chunk_id IN (SELECT chunk_id FROM ${tables}_delta_chunks WHERE partition00 = ?)`,
        )
        .all(partition))
        this.db.query(`DELETE FROM ${tables}_delta WHERE id = ?`).run(BigInt(id));
    })();
    this.viewed.delete(partition);
    this.estimate.delete(partition);
    this.removeFiles(partition);
  }

  private removeFiles(partition: string, except?: number): void {
    const { dir } = this;
    if (!dir || !existsSync(dir)) return;
    const prefix = filePrefix(partition);
    for (const name of readdirSync(dir))
      if (name.startsWith(prefix) && name !== (except === undefined ? "" : `${prefix}${except}.usearch`))
        rmSync(join(dir, name), { force: true });
  }

  /** After a change of `partition` (`added` vectors put): its first index, or the next generation, asked for when due. */
  private changed(partition: string, added: number): void {
    if (!this.dataDir || this.closed) return;
    if (performance.now() - (this.failedAt.get(partition) ?? -Infinity) < BUILD_RETRY_MS) return;
    const row = this.row(partition);
    if (!row) {
      let n = (this.estimate.get(partition) ?? this.inner.countPartition(partition) - added) + added;
      if (n >= this.threshold) n = this.inner.countPartition(partition);
      this.estimate.set(partition, n);
      if (n >= this.threshold) this.ask(partition);
      return;
    }
    // One under way here; one asked for by a process that ended before it was ready is asked again.
    if (row.generation !== row.ready && (this.current === partition || this.queue.includes(partition))) return;
    if (row.generation !== row.ready) {
      this.ask(partition);
      return;
    }
    // A snapshot whose file is gone (a restored backup holds the database alone): built again.
    if (row.ready != null && !existsSync(indexFile(this.dir!, partition, row.ready))) {
      this.ask(partition);
      return;
    }
    const changes = this.db
      .query<{ n: number }, [string, number]>(`SELECT count(*) AS n FROM ${this.tables}_masked WHERE partition = ? AND generation >= ?`)
      .get(partition, row.generation)!.n;
    if (changes > Math.min(MAX_DELTA, row.vectors * REBUILD_SHARE)) this.ask(partition);
  }

  /** The next generation of `partition` asked for: changes from now on are kept beside the snapshot being built. */
  private ask(partition: string): void {
    this.db
      .query(
        `INSERT INTO ${this.tables} (partition, generation) VALUES (?, 1) ON CONFLICT (partition) DO UPDATE SET generation = generation + 1`,
      )
      .run(partition);
    this.estimate.delete(partition);
    if (!this.queue.includes(partition)) this.queue.push(partition);
    this.building ??= this.buildQueued().finally(() => {
      this.building = undefined;
    });
  }

  /** Ends the build under way (before the database closes): it is asked again after a restart, at the partition's next change. */
  close(): void {
    this.closed = true;
    this.queue.length = 0;
    void this.worker?.terminate();
  }

  /** Resolves once every build asked for so far is done (or failed): what a test awaits instead of a clock. */
  async settled(): Promise<void> {
    while (this.building) await this.building;
  }

  /** Builds the partitions asked for, one at a time, each in a worker of its own. */
  private async buildQueued(): Promise<void> {
    for (let partition = this.queue.shift(); partition !== undefined && !this.closed; partition = this.queue.shift()) {
      this.current = partition;
      const row = this.row(partition);
      if (!row) continue;
      const generation = row.generation;
      const file = indexFile(this.dir!, partition, generation);
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      const done = await buildInWorker({ file: this.db.filename, dataDir: this.dataDir!, table: this.t, partition, out: file }, (w) => {
        this.worker = w;
      });
      this.worker = undefined;
      if (this.closed) return;
      const now = this.row(partition);
      if ("error" in done) {
        this.failedAt.set(partition, performance.now());
        this.options.onBuildFailed?.(done.error);
        if (now?.generation === generation && now.ready == null)
          this.db.query(`DELETE FROM ${this.tables} WHERE partition = ?`).run(partition);
        rmSync(file, { force: true });
        continue;
      }
      // Dropped meanwhile, or a newer generation asked for since: this one is of no use.
      if (!now || now.generation !== generation) {
        if (!now) rmSync(file, { force: true });
        else this.queue.push(partition);
        continue;
      }
      chmodSync(file, 0o600);
      this.db.transaction(() => {
        const { tables } = this;
        this.db.query(`UPDATE ${tables} SET ready = ?, vectors = ? WHERE partition = ?`).run(generation, done.vectors, partition);
        // What the snapshot holds: the changes kept for the generations before it.
        this.db.query(`DELETE FROM ${tables}_masked WHERE partition = ? AND generation < ?`).run(partition, generation);
        for (const { id } of this.db
          .query<{ id: number }, [string, number]>(`SELECT id FROM ${tables}_delta WHERE partition = ? AND generation < ?`)
          .all(partition, generation))
          this.db.query(`DELETE FROM ${tables}_delta WHERE id = ?`).run(BigInt(id));
      })();
      this.removeFiles(partition, generation);
      // Changes while it was built may already be past the share (a rotation puts every vector again): the next one.
      this.current = undefined;
      this.changed(partition, 0);
    }
    this.current = undefined;
  }
}

/** Builds one snapshot in a worker (off this thread, D31); its answer, or why it failed. */
function buildInWorker(asked: BuildAsked, started: (worker: Worker) => void): Promise<BuildDone> {
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      worker = new Worker(workerEntry(), { smol: true });
      started(worker);
    } catch (error) {
      resolve({ error: error instanceof Error ? error.message : String(error) });
      return;
    }
    let answered = false;
    const answer = (done: BuildDone) => {
      if (answered) return;
      answered = true;
      resolve(done);
      void worker.terminate();
    };
    worker.onerror = (event) => answer({ error: `the index builder failed: ${event.message}` });
    worker.addEventListener("close", () => answer({ error: "the index builder exited" }));
    worker.onmessage = (event: MessageEvent<BuildDone>) => answer(event.data);
    worker.postMessage(asked);
  });
}
