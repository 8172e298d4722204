// The embedded vector store: a sqlite-vec vec0 table in the data folder's database, searched by
// brute force within the partitions asked (cosine distance). Two tables are kept so, each by the
// room that owns it: the local index's connector_vec (one partition per connector of an owner,
// keyed `owner/connector`: connector ids have no `/`, src/ids.ts; its migrations in
// src/connectors/local-index/migrations.ts) and the archive's archive_vec (one partition per user,
// with the time of each chunk's question: src/archive/store.ts).
import type { Database } from "bun:sqlite";
import { checkK, type EmbeddedVectorStore, type KeyedVector, type KnnFilter, type Neighbour, type StoredVector } from "./store";

/** A vec0 table of keyed vectors: (id integer primary key, partition text partition key, [at integer,] embedding float[n] distance_metric=cosine). */
export interface Vec0Table {
  table: string;
  /** Its integer primary key. */
  id: string;
  /** Its partition key. */
  partition: string;
  /** Its metadata column of times (seconds since the epoch), if it keeps them: its first metadata column (timesOf reads it there). */
  at?: string;
  /** The one connector of a table partitioned by owner alone (the archive's); absent: a partition per owner's connector. */
  connector?: string;
  /** Its big partitions' HNSW indexes (partition-index.ts): the prefix of their tables, and their folder in the data folder. */
  hnsw: { tables: string; dir: string };
}

/** The local index's vectors, as they have always been written (partition `owner/connector`). */
export const CONNECTOR_VECTORS: Vec0Table = {
  table: "connector_vec",
  id: "chunk_id",
  partition: "owner",
  hnsw: { tables: "vector_hnsw", dir: "vector-index" },
};

/** The partition of `owner`'s `connector`: what the local index calls its owner ("alice/mail"). */
export const partitionOf = (owner: string, connector: string) => `${owner}/${connector}`;

/** The owner and connector of a partition: split at its last `/`, as a connector id has none. */
export function splitPartition(partition: string): { owner: string; connector: string } {
  const at = partition.lastIndexOf("/");
  return { owner: partition.slice(0, at), connector: partition.slice(at + 1) };
}

export class SqliteVectorStore implements EmbeddedVectorStore {
  constructor(
    private readonly db: Database,
    readonly t: Vec0Table = CONNECTOR_VECTORS,
  ) {}

  /** The partition `owner`'s `connector` is kept in; a connector other than a one-connector table's is refused. */
  partition(owner: string, connector: string): string {
    if (this.t.connector === undefined) return partitionOf(owner, connector);
    if (connector !== this.t.connector)
      throw new RangeError(`${this.t.table} keeps the ${this.t.connector} connector's vectors only, not ${connector}'s`);
    return owner;
  }

  connectorOf(partition: string): string {
    return this.t.connector ?? splitPartition(partition).connector;
  }

  put(owner: string, connector: string, vectors: readonly StoredVector[]): void {
    const { table, id, partition: key, at } = this.t;
    // vec0 holds an integer in a metadata column, never NULL: a table of times has one for each vector.
    if (vectors.some((v) => (v.at === undefined) !== !at))
      throw new RangeError(at ? `${table} keeps a time for each vector` : `${table} keeps no times`);
    // Replaced within the partition only: an id of another partition stays, and the insert fails on it.
    const del = this.db.query(`DELETE FROM ${table} WHERE ${id} = ? AND ${key} = ?`);
    const insert = this.db.query(
      at
        ? `INSERT INTO ${table} (${id}, ${key}, ${at}, embedding) VALUES (?, ?, ?, ?)`
        : `INSERT INTO ${table} (${id}, ${key}, embedding) VALUES (?, ?, ?)`,
    );
    const partition = this.partition(owner, connector);
    this.db.transaction(() => {
      for (const v of vectors) {
        del.run(BigInt(v.id), partition);
        if (at) insert.run(BigInt(v.id), partition, v.at!, v.vector);
        else insert.run(BigInt(v.id), partition, v.vector);
      }
    })();
  }

  remove(owner: string, connector: string, ids: readonly number[]): void {
    // By id and partition: an id is removed from this connector only.
    const del = this.db.query(`DELETE FROM ${this.t.table} WHERE ${this.t.id} = ? AND ${this.t.partition} = ?`);
    const partition = this.partition(owner, connector);
    this.db.transaction(() => {
      for (const id of ids) del.run(BigInt(id), partition);
    })();
  }

  knn(owner: string, query: KeyedVector, k: number, filter: KnnFilter = {}): Neighbour[] {
    checkK(k);
    const { table, id, partition: key, at } = this.t;
    const timed = filter.from !== undefined || filter.to !== undefined;
    if (timed && !at) throw new RangeError(`${table} keeps no times: a search within times is not possible`);
    const partitions = filter.connectors ? filter.connectors.map((c) => this.partition(owner, c)) : this.partitionsOf(owner);
    if (partitions.length === 0 || filter.ids?.length === 0) return [];
    // One search per partition, merged: each is exact, so their best k are.
    const conditions: string[] = [];
    const params: Array<number | string> = [];
    if (filter.ids) {
      conditions.push(` AND ${id} IN (SELECT value FROM json_each(?))`);
      params.push(JSON.stringify(filter.ids));
    }
    if (filter.from !== undefined) {
      conditions.push(` AND ${at} >= ?`);
      params.push(filter.from);
    }
    if (filter.to !== undefined) {
      conditions.push(` AND ${at} < ?`);
      params.push(filter.to);
    }
    const search = this.db.query<{ id: number; distance: number }, Array<Float32Array | number | string>>(
      `SELECT ${id} AS id, distance FROM ${table} WHERE embedding MATCH ? AND k = ? AND ${key} = ?${conditions.join("")} ORDER BY distance`,
    );
    const found: Array<{ id: number; connector: string; distance: number }> = [];
    for (const p of partitions)
      for (const r of search.all(query, k, p, ...params)) found.push({ id: r.id, connector: this.connectorOf(p), distance: r.distance });
    found.sort((a, b) => a.distance - b.distance);
    return found.slice(0, k).map((r) => ({ id: r.id, connector: r.connector, similarity: 1 - r.distance }));
  }

  dropConnector(owner: string, connector: string): number {
    return this.dropPartition(this.partition(owner, connector));
  }

  dropOwner(owner: string): number {
    return this.db.transaction(() => {
      let dropped = 0;
      for (const p of this.partitionsOf(owner)) dropped += this.dropPartition(p);
      return dropped;
    })();
  }

  count(owner: string): number {
    let n = 0;
    for (const p of this.partitionsOf(owner)) n += this.countPartition(p);
    return n;
  }

  /**
   * The vectors of a partition, counted in vec0's own tables (its rows, each in a chunk of one
   * partition; sqlite-vec 0.1.9, pinned): counting or deleting by the partition key through the
   * table reads every vector of every partition (658 and 432 ms at 20k, loaded machine).
   */
  countPartition(partition: string): number {
    return this.db
      .query<{ n: number }, [string]>(
        `SELECT count(*) AS n FROM ${this.t.table}_rowids WHERE chunk_id IN (SELECT chunk_id FROM ${this.t.table}_chunks WHERE partition00 = ?)`,
      )
      .get(partition)!.n;
  }

  /** Every id of a partition (read as countPartition counts them). */
  idsOf(partition: string): number[] {
    return this.db
      .query<{ id: number }, [string]>(
        `SELECT rowid AS id FROM ${this.t.table}_rowids WHERE chunk_id IN (SELECT chunk_id FROM ${this.t.table}_chunks WHERE partition00 = ?)`,
      )
      .all(partition)
      .map((r) => r.id);
  }

  /**
   * The time (`at`) of each of `ids` kept in `partition`, read where vec0 keeps it (sqlite-vec
   * 0.1.9, pinned: each row's chunk and offset in _rowids, a chunk's integers as 8 bytes each in
   * _metadatachunks00): a lookup through the table costs ~0.1 ms an id (4,096: 170 ms, measured).
   * Ids of another partition, or absent, are not given.
   */
  timesOf(partition: string, ids: readonly number[]): Map<number, number> {
    const { table, at } = this.t;
    if (!at) throw new RangeError(`${table} keeps no times`);
    const times = new Map<number, number>();
    if (ids.length === 0) return times;
    const places = this.db
      .query<{ id: number; chunk: number; slot: number }, [string, string]>(
        `SELECT r.rowid AS id, r.chunk_id AS chunk, r.chunk_offset AS slot FROM ${table}_rowids r
         JOIN ${table}_chunks c ON c.chunk_id = r.chunk_id AND c.partition00 = ?
         WHERE r.rowid IN (SELECT value FROM json_each(?))`,
      )
      .all(partition, JSON.stringify(ids));
    // Each chunk's times read once (8 KB, read whole however little of it is wanted): 240 ids, 9.9 ms read one by one.
    const chunks = new Map(
      this.db
        .query<{ chunk: number; data: Uint8Array }, [string]>(
          `SELECT rowid AS chunk, data FROM ${table}_metadatachunks00 WHERE rowid IN (SELECT value FROM json_each(?))`,
        )
        .all(JSON.stringify([...new Set(places.map((p) => p.chunk))]))
        .map((r) => [r.chunk, r.data]),
    );
    for (const p of places) {
      const data = chunks.get(p.chunk);
      if (data) times.set(p.id, Number(new DataView(data.buffer, data.byteOffset, data.byteLength).getBigInt64(p.slot * 8, true)));
    }
    return times;
  }

  /**
   * How many vectors `partition` holds, and how many of them have an `at` in [from, to): read from
   * vec0's chunks (sqlite-vec 0.1.9, pinned: a bit per slot in `validity`, least significant
   * first; the times as 8 bytes a slot in _metadatachunks00), ~8 KB a 1,024 vectors, no vector read.
   */
  timeCounts(partition: string, range: { from?: number; to?: number }): { all: number; within: number } {
    const { table, at } = this.t;
    if (!at) throw new RangeError(`${table} keeps no times`);
    const from = range.from ?? -Infinity;
    const to = range.to ?? Infinity;
    let all = 0;
    let within = 0;
    for (const c of this.db
      .query<{ validity: Uint8Array; data: Uint8Array }, [string]>(
        `SELECT c.validity, m.data FROM ${table}_chunks c JOIN ${table}_metadatachunks00 m ON m.rowid = c.chunk_id WHERE c.partition00 = ?`,
      )
      .iterate(partition)) {
      // Each time as two 32-bit halves (little-endian): BigInt's comparisons took ~10x longer.
      const halves = new Int32Array(c.data.buffer.slice(c.data.byteOffset, c.data.byteOffset + c.data.byteLength));
      for (let slot = 0; slot < halves.length / 2; slot++) {
        if (((c.validity[slot >> 3] ?? 0) & (1 << (slot & 7))) === 0) continue;
        all++;
        const t = halves[2 * slot + 1]! * 2 ** 32 + (halves[2 * slot]! >>> 0);
        if (t >= from && t < to) within++;
      }
    }
    return { all, within };
  }

  private dropPartition(partition: string): number {
    const del = this.db.query(`DELETE FROM ${this.t.table} WHERE ${this.t.id} = ?`);
    return this.db.transaction(() => {
      let dropped = 0;
      for (const id of this.idsOf(partition)) dropped += del.run(BigInt(id)).changes;
      return dropped;
    })();
  }

  dropAll(): number {
    // Counted in vec0's table of its rows (one a vector): counting the table itself reads every vector.
    const n = this.db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${this.t.table}_rowids`).get()!.n;
    this.db.exec(`DELETE FROM ${this.t.table}`);
    return n;
  }

  /**
   * `owner`'s partitions. A one-connector table's: the owner's own. Otherwise those from `owner/`
   * up to `owner0` (`0` follows `/`), of exactly this owner (split at the last `/`): those of an
   * owner named `owner/x` are not theirs. Read from vec0's own table of its chunks (a row per
   * 1,024 vectors, partition00 its one partition key; sqlite-vec 0.1.9, pinned): the table itself
   * reads every vector (832 ms at 20k, 0.1 ms so). A chunk emptied by deletions may name a
   * partition with no vector left: it finds nothing.
   */
  partitionsOf(owner: string): string[] {
    if (this.t.connector !== undefined) return [owner];
    return this.db
      .query<{ p: string }, [string, string]>(`SELECT DISTINCT partition00 AS p FROM ${this.t.table}_chunks WHERE p >= ? AND p < ?`)
      .all(`${owner}/`, `${owner}0`)
      .map((r) => r.p)
      .filter((p) => splitPartition(p).owner === owner);
  }
}
