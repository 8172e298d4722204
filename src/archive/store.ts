// The archive (D3, D12): every answer's query and chunks, per user, sealed with the user's
// data key; chunk vectors in a sqlite-vec table partitioned by user, so one user's search
// never scans another's vectors. Written before the response is sent; a chunk whose vector
// is not ready yet gets it from the background embedder moments later.
import type { Database } from "bun:sqlite";
import type { UserKeys } from "../crypto/user-keys";
import { EMBEDDING_DIM } from "../embedding/embedder";
import type { EmbeddingService } from "../embedding/service";
import type { Migration } from "../store/migrations";

export const archiveMigrations: Migration[] = [
  {
    id: "archive-001-entries",
    up(db) {
      db.exec(`CREATE TABLE archive_queries (
        query_id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        queried_at INTEGER NOT NULL,
        question BLOB NOT NULL
      )`);
      db.exec("CREATE INDEX archive_queries_user ON archive_queries (user_id, queried_at)");
      db.exec(`CREATE TABLE archive_chunks (
        id INTEGER PRIMARY KEY,
        query_id TEXT NOT NULL REFERENCES archive_queries (query_id) ON DELETE CASCADE,
        user_id TEXT NOT NULL,
        chunk_id TEXT NOT NULL,
        body BLOB NOT NULL
      )`);
      db.exec("CREATE INDEX archive_chunks_user ON archive_chunks (user_id)");
      db.exec("CREATE INDEX archive_chunks_query ON archive_chunks (query_id)");
      db.exec(
        `CREATE VIRTUAL TABLE archive_vec USING vec0(id integer primary key, user_id text partition key, queried_at integer, embedding float[${EMBEDDING_DIM}] distance_metric=cosine)`,
      );
    },
  },
];

/** What is kept of a returned chunk (sealed as one JSON document). */
export interface ArchivedChunk {
  chunk_id: string;
  connector: string;
  title: string;
  content: string;
  source_url: string;
  type: "email" | "file";
  path: string;
  message_id?: string;
  date: string | null;
}

export interface ArchiveMatch {
  chunk: ArchivedChunk;
  query_id: string;
  question: string;
  queried_at: string;
  similarity: number;
}

export class Archive {
  constructor(
    private readonly db: Database,
    private readonly keys: UserKeys,
    private readonly embeddings: EmbeddingService,
    private readonly now: () => number = Date.now,
  ) {}

  private aad(queryId: string) {
    return `archive/${queryId}`;
  }

  /** Stores a query and its chunks; vectors from the cache where known, else computed in the background. */
  record(user: string, queryId: string, question: string, chunks: Array<{ chunk: ArchivedChunk; embedText: string }>): void {
    this.store(user, queryId, question, chunks, this.embeddings.cached(chunks.map((c) => c.embedText)));
  }

  /** Stores a query and its chunks with the vectors given (undefined: computed in the background). */
  store(user: string, queryId: string, question: string, chunks: Array<{ chunk: ArchivedChunk; embedText: string }>, vectors: Array<Float32Array | undefined>): void {
    const at = Math.floor(this.now() / 1000);
    const insertVec = this.db.query("INSERT INTO archive_vec (id, user_id, queried_at, embedding) VALUES (?, ?, ?, ?)");
    const ids: number[] = [];
    this.db.transaction(() => {
      this.db.query("INSERT INTO archive_queries (query_id, user_id, queried_at, question) VALUES (?, ?, ?, ?)").run(queryId, user, at, this.keys.sealFor(user, question, this.aad(queryId)));
      const insert = this.db.query<{ id: number }, [string, string, string, Buffer]>("INSERT INTO archive_chunks (query_id, user_id, chunk_id, body) VALUES (?, ?, ?, ?) RETURNING id");
      chunks.forEach((c, i) => {
        const { id } = insert.get(queryId, user, c.chunk.chunk_id, this.keys.sealFor(user, JSON.stringify(c.chunk), this.aad(queryId)))!;
        ids.push(id);
        if (vectors[i]) insertVec.run(BigInt(id), user, at, vectors[i]!);
      });
    })();
    const missing = chunks.map((c, i) => (vectors[i] ? undefined : { id: ids[i]!, text: c.embedText })).filter((x) => x !== undefined);
    if (missing.length) {
      void this.embeddings
        .embed(missing.map((m) => m.text), "background")
        .then((vs) => {
          const alive = this.db.query<{ n: number }, [number]>("SELECT 1 AS n FROM archive_chunks WHERE id = ?");
          this.db.transaction(() => missing.forEach((m, i) => alive.get(m.id) && insertVec.run(BigInt(m.id), user, at, vs[i]!)))();
        })
        .catch(() => {});
    }
  }

  /** The user's archived chunks nearest to `vector`, within the query-time range. */
  search(user: string, vector: Float32Array, options: { from?: Date; to?: Date; limit: number }): ArchiveMatch[] {
    const params: Array<string | number | Float32Array> = [vector, options.limit, user];
    let range = "";
    if (options.from) {
      range += " AND queried_at >= ?";
      params.push(Math.floor(options.from.getTime() / 1000));
    }
    if (options.to) {
      range += " AND queried_at < ?";
      params.push(Math.floor(options.to.getTime() / 1000));
    }
    const rows = this.db
      .query<{ id: number; distance: number }, typeof params>(`SELECT id, distance FROM archive_vec WHERE embedding MATCH ? AND k = ? AND user_id = ?${range} ORDER BY distance`)
      .all(...params);
    const chunk = this.db.query<{ query_id: string; body: Uint8Array; question: Uint8Array; queried_at: number }, [number, string]>(
      `SELECT c.query_id, c.body, q.question, q.queried_at FROM archive_chunks c JOIN archive_queries q ON q.query_id = c.query_id WHERE c.id = ? AND c.user_id = ?`,
    );
    const out: ArchiveMatch[] = [];
    for (const r of rows) {
      const row = chunk.get(r.id, user);
      if (!row) continue;
      out.push({
        chunk: JSON.parse(this.keys.openFor(user, row.body, this.aad(row.query_id)).toString("utf8")) as ArchivedChunk,
        query_id: row.query_id,
        question: this.keys.openFor(user, row.question, this.aad(row.query_id)).toString("utf8"),
        queried_at: new Date(row.queried_at * 1000).toISOString(),
        similarity: Math.round((1 - r.distance) * 10_000) / 10_000,
      });
    }
    return out;
  }

  /** Archived chunks of all users (for reports and benchmarks). */
  count(): number {
    return this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM archive_chunks").get()!.n;
  }

  /** Everything of `user` (D13): returns how many chunks were removed. */
  deleteUser(user: string): { queries: number; chunks: number } {
    return this.db.transaction(() => {
      const ids = this.db.query<{ id: number }, [string]>("SELECT id FROM archive_chunks WHERE user_id = ?").all(user);
      const delVec = this.db.query("DELETE FROM archive_vec WHERE id = ?");
      for (const { id } of ids) delVec.run(BigInt(id));
      const chunks = this.db.query("DELETE FROM archive_chunks WHERE user_id = ?").run(user).changes;
      const queries = this.db.query("DELETE FROM archive_queries WHERE user_id = ?").run(user).changes;
      return { queries, chunks };
    })();
  }
}
