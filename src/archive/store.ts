// The archive (D3, D12): every answer's query and chunks, per user, sealed with the user's
// data key and bound to their rows; chunk vectors rotated by the user's secret rotation (D25)
// in a sqlite-vec table partitioned by user, so one user's search never scans another's
// vectors. Written before the response is sent; a chunk whose vector is not ready yet is marked
// pending and gets it from the background embedder moments later, or after a restart (D29).
import type { Database } from "bun:sqlite";
import { setImmediate as nextTurn } from "node:timers/promises";
import { DecryptError } from "../crypto/aead";
import type { KeyedVector } from "../crypto/rotation";
import { NoUserKey, type UserKeys } from "../crypto/user-keys";
import { CITATION_KEY_PURPOSE } from "../documents/ids";
import { EMBEDDING_DIM } from "../embedding/embedder";
import { EmbeddingCancelled, type EmbeddingService } from "../embedding/service";
import { embeddingText } from "../retrieval/chunk";
import type { Migration } from "../store/migrations";
import { SqliteVectorStore, type Vec0Table } from "../vectors/sqlite";
import type { EmbeddedVectorStore, StoredVector } from "../vectors/store";

/** An archived chunk whose vector is still to be stored: its row, its query, the text to embed. */
interface Pending {
  id: number;
  queryId: string;
  text: string;
}

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
  {
    // The first archive kept its vectors as the model made them: dropped (freed pages are
    // overwritten) and every chunk embedded again, rotated, from its sealed text.
    id: "archive-002-rotated-vectors",
    up(db) {
      db.exec("DROP TABLE archive_vec");
      db.exec(
        `CREATE VIRTUAL TABLE archive_vec USING vec0(id integer primary key, user_id text partition key, queried_at integer, embedding float[${EMBEDDING_DIM}] distance_metric=cosine)`,
      );
      db.exec("ALTER TABLE archive_chunks ADD COLUMN embedded INTEGER NOT NULL DEFAULT 0");
      db.exec("CREATE INDEX archive_chunks_pending ON archive_chunks (embedded, user_id)");
    },
  },
  {
    // D36: the documents answers cited, each version once per user (its id is keyed by its
    // content: documents/ids.ts), and chunks found again by their stable ids.
    id: "archive-003-documents",
    up(db) {
      // A rowid table: its bodies are whole records, too large for WITHOUT ROWID (they would live in the key's b-tree).
      db.exec(`CREATE TABLE archive_documents (
        id INTEGER PRIMARY KEY,
        user_id TEXT NOT NULL,
        doc_id TEXT NOT NULL,
        stored_at INTEGER NOT NULL,
        body BLOB NOT NULL,
        UNIQUE (user_id, doc_id)
      )`);
      db.exec("CREATE INDEX archive_chunks_cited ON archive_chunks (user_id, chunk_id)");
    },
  },
  {
    // D36: a record's versions are told apart from other records' (a keyed id of the record, no
    // path), so that only its newest few are kept: one changing often would grow the archive by
    // its whole text at each answer citing it.
    id: "archive-004-document-versions",
    up(db) {
      db.exec("ALTER TABLE archive_documents ADD COLUMN record_key TEXT");
      db.exec("CREATE INDEX archive_documents_record ON archive_documents (user_id, record_key, id)");
    },
  },
];

/**
 * Versions of one record the archive keeps whole (D36), the newest: an older version's quotes
 * stay in archive_chunks (their text and sha256), its whole document no longer opens.
 */
export const KEPT_DOCUMENT_VERSIONS = 8;

/**
 * Forgets every archived chunk's vector (another embedding model made them: src/embedding/
 * service.ts adoptModel); each chunk is pending again and resumePending embeds it from its text.
 */
export function forgetArchiveVectors(db: Database): number {
  archiveVectors(db).dropAll();
  return db.query("UPDATE archive_chunks SET embedded = 0 WHERE embedded = 1").run().changes;
}

/** The archive's own vector rotation (D25), apart from every connector's. */
const ARCHIVE_SCOPE = "archive";

/** The archive's vectors: a partition per user, with the second of each chunk's question (a search within times). */
export const ARCHIVE_VECTORS: Vec0Table = {
  table: "archive_vec",
  id: "id",
  partition: "user_id",
  at: "queried_at",
  connector: ARCHIVE_SCOPE,
};

/** The archive's vector store in `db` (sqlite-vec's table; the only way to its vectors). */
const archiveVectors = (db: Database): EmbeddedVectorStore => new SqliteVectorStore(db, ARCHIVE_VECTORS);

/** Chunks embedded per background step when pending vectors are resumed. */
const RESUME_BATCH = 16;

// Each sealed value is bound to its owner (sealFor adds the user), table and row.
const questionAad = (queryId: string) => `archive/${queryId}/question`;
const chunkAad = (queryId: string, chunkId: string) => `archive/${queryId}/chunk/${chunkId}`;
const documentAad = (docId: string) => `archive/document/${docId}`;

/** A chunk to archive: what is kept, the text its vector is made from, and whose cache may hold it. */
export interface ArchiveInput {
  chunk: ArchivedChunk;
  embedText: string;
  /** The owner of the connector it came from (the user, or the operator). */
  owner: string;
  /** The whole record the chunk was cited from, as it was ranked (kept once per version, D36). */
  document?: ArchivedDocument;
  /** The record's keyed id, the same for all its versions (documents/ids.ts): KEPT_DOCUMENT_VERSIONS are kept. */
  recordKey?: string;
}

/** A record an answer cited, as it was ranked: what fetch, GET /v1/documents/{id} and /d/<id> show (D36). */
export interface ArchivedDocument {
  doc_id: string;
  connector: string;
  connector_label: string;
  title: string;
  text: string;
  source_url: string;
  type: "email" | "file";
  /** documents/kinds.ts */
  kind: string;
  path: string;
  date: string | null;
  metadata: Record<string, string | number | boolean | null>;
}

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
  /** The document it was cited from (D36; none in chunks archived before). */
  doc_id?: string;
  /** The sha256 of `content` when it was returned (D36): a quote is checked against it. */
  sha256?: string;
}

/** A chunk found again by its id: the latest archived copy, and when it was returned. */
export interface CitedChunk {
  chunk: ArchivedChunk;
  queried_at: string;
}

export interface ArchiveMatch {
  chunk: ArchivedChunk;
  query_id: string;
  question: string;
  queried_at: string;
  similarity: number;
}

export class Archive {
  private readonly vectors: EmbeddedVectorStore;

  constructor(
    private readonly db: Database,
    private readonly keys: UserKeys,
    private readonly embeddings: EmbeddingService,
    private readonly now: () => number = Date.now,
  ) {
    this.vectors = archiveVectors(db);
  }

  /** The key the user's citation ids are made with (documents/ids.ts): it dies with their data key (D3). */
  citationKey(user: string): Buffer {
    return this.keys.derive(user, CITATION_KEY_PURPOSE);
  }

  /** Opens a value, also in the form the first version sealed (bound to the query only). */
  private openValue(user: string, sealed: Uint8Array, aad: string, queryId: string): string {
    try {
      return this.keys.openFor(user, sealed, aad).toString("utf8");
    } catch (error) {
      if (!(error instanceof DecryptError)) throw error;
      return this.keys.openFor(user, sealed, `archive/${queryId}`).toString("utf8");
    }
  }

  /**
   * Stores a query and its chunks (D12), on the request's path: vectors from the caches of the
   * chunks' owners, or the asker's (an operator's row a question of theirs embedded), where
   * known; the others computed in the background.
   */
  record(user: string, queryId: string, question: string, chunks: ArchiveInput[]): void {
    this.store(
      user,
      queryId,
      question,
      chunks,
      chunks.map((c) => this.embeddings.cachedFor(c.owner, user, [c.embedText])[0]),
    );
  }

  /**
   * Makes the user's archive rotation ready a few rows a turn (UserKeys.prepareRotation), so that
   * record and search after find it kept: made at once, it held the serving thread ~20-40 ms (D31).
   * Makes the user's key only when told to (`create`: a question's, checked still allowed just
   * before); without, a user without one (deleted meanwhile) is left to the call after.
   */
  async prepareRotation(user: string, create = false): Promise<void> {
    try {
      await this.keys.prepareRotation(user, ARCHIVE_SCOPE, EMBEDDING_DIM, nextTurn, create);
    } catch (error) {
      if (!(error instanceof NoUserKey)) throw error;
    }
  }

  /** Stores a query and its chunks with the vectors given (undefined: computed in the background). */
  store(
    user: string,
    queryId: string,
    question: string,
    chunks: Array<Omit<ArchiveInput, "owner">>,
    vectors: Array<Float32Array | undefined>,
  ): void {
    const at = Math.floor(this.now() / 1000);
    const rotation = this.keys.rotation(user, ARCHIVE_SCOPE, EMBEDDING_DIM);
    const pending: Pending[] = [];
    this.db.transaction(() => {
      const stored: StoredVector[] = [];
      this.db
        .query("INSERT INTO archive_queries (query_id, user_id, queried_at, question) VALUES (?, ?, ?, ?)")
        .run(queryId, user, at, this.keys.sealFor(user, question, questionAad(queryId)));
      const insert = this.db.query<{ id: number }, [string, string, string, Buffer, number]>(
        "INSERT INTO archive_chunks (query_id, user_id, chunk_id, body, embedded) VALUES (?, ?, ?, ?, ?) RETURNING id",
      );
      const insertDocument = this.db.query(
        "INSERT OR IGNORE INTO archive_documents (user_id, doc_id, stored_at, body, record_key) VALUES (?, ?, ?, ?, ?)",
      );
      const dropOldVersions = this.db.query(
        `DELETE FROM archive_documents WHERE user_id = ?1 AND record_key = ?2 AND id NOT IN
          (SELECT id FROM archive_documents WHERE user_id = ?1 AND record_key = ?2 ORDER BY id DESC LIMIT ${KEPT_DOCUMENT_VERSIONS})`,
      );
      const hasDocument = this.db.query<{ n: number }, [string, string]>(
        "SELECT 1 AS n FROM archive_documents WHERE user_id = ? AND doc_id = ?",
      );
      chunks.forEach((c, i) => {
        // A version is sealed once: its id is keyed by its content, so a row under it holds the same.
        const d = c.document;
        if (d && !hasDocument.get(user, d.doc_id)) {
          insertDocument.run(user, d.doc_id, at, this.keys.sealFor(user, JSON.stringify(d), documentAad(d.doc_id)), c.recordKey ?? null);
          if (c.recordKey) dropOldVersions.run(user, c.recordKey);
        }
        const v = vectors[i];
        const { id } = insert.get(
          queryId,
          user,
          c.chunk.chunk_id,
          this.keys.sealFor(user, JSON.stringify(c.chunk), chunkAad(queryId, c.chunk.chunk_id)),
          v ? 1 : 0,
        )!;
        if (v) stored.push({ id, vector: rotation.apply(v), at });
        else pending.push({ id, queryId, text: c.embedText });
      });
      this.vectors.put(user, ARCHIVE_SCOPE, stored);
    })();
    if (pending.length) {
      const work = this.embedPending(user, pending)
        .catch((error: unknown) => this.onPendingFailed?.(error))
        .finally(() => this.inFlight.delete(work));
      this.inFlight.add(work);
    }
  }

  private readonly inFlight = new Set<Promise<void>>();

  /** Resolves once the vectors started in the background so far are stored (or failed): what a test awaits instead of a clock. */
  async settled(): Promise<void> {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  /** Told when vectors computed in the background could not be stored (they stay pending; D29 retries them). */
  onPendingFailed?: (error: unknown) => void;

  /** Computes and stores the vectors of pending chunks; those removed meanwhile are skipped. */
  private async embedPending(user: string, pending: Pending[]): Promise<void> {
    const vs = await this.embeddings.embed(
      user,
      pending.map((p) => p.text),
      "background",
    );
    // Background work never makes a key: a user deleted meanwhile ends here (NoUserKey).
    await this.keys.prepareRotation(user, ARCHIVE_SCOPE, EMBEDDING_DIM, nextTurn, false);
    const rotation = this.keys.rotation(user, ARCHIVE_SCOPE, EMBEDDING_DIM, false);
    // The row is still this query's, this user's, and waiting: a user deleted meanwhile has none
    // left, and an id the table gave again since (to anyone) belongs to another query.
    const row = this.db.query<{ queried_at: number }, [number, string, string]>(
      "SELECT q.queried_at FROM archive_chunks c JOIN archive_queries q ON q.query_id = c.query_id WHERE c.id = ? AND c.query_id = ? AND c.user_id = ? AND c.embedded = 0",
    );
    const mark = this.db.query("UPDATE archive_chunks SET embedded = 1 WHERE id = ?");
    this.db.transaction(() => {
      const stored: StoredVector[] = [];
      pending.forEach((p, i) => {
        const alive = row.get(p.id, p.queryId, user);
        if (!alive) return;
        stored.push({ id: p.id, vector: rotation.apply(vs[i]!), at: alive.queried_at });
        mark.run(p.id);
      });
      this.vectors.put(user, ARCHIVE_SCOPE, stored);
    })();
  }

  /**
   * Embeds every chunk still pending (answers given before a crash, or before the vectors were
   * rotated), a batch at a time in the background. Resolves when none is left.
   */
  async resumePending(): Promise<number> {
    let done = 0;
    const next = this.db.query<{ id: number; user_id: string; query_id: string; chunk_id: string; body: Uint8Array }, [number]>(
      "SELECT id, user_id, query_id, chunk_id, body FROM archive_chunks WHERE embedded = 0 ORDER BY id LIMIT ?",
    );
    const skip = new Set<number>();
    for (;;) {
      const rows = next.all(RESUME_BATCH + skip.size).filter((r) => !skip.has(r.id));
      if (rows.length === 0) return done;
      const byUser = new Map<string, Pending[]>();
      for (const r of rows.slice(0, RESUME_BATCH)) {
        try {
          const chunk = JSON.parse(this.openValue(r.user_id, r.body, chunkAad(r.query_id, r.chunk_id), r.query_id)) as ArchivedChunk;
          (byUser.get(r.user_id) ?? byUser.set(r.user_id, []).get(r.user_id)!).push({
            id: r.id,
            queryId: r.query_id,
            text: embeddingText(chunk.title, chunk.content),
          });
        } catch {
          skip.add(r.id);
        }
      }
      for (const [user, pending] of byUser) {
        try {
          await this.embedPending(user, pending);
          done += pending.length;
        } catch (error) {
          // The user deleted meanwhile (no key, or their job cancelled): their rows are gone or going.
          if (!(error instanceof NoUserKey || error instanceof EmbeddingCancelled)) throw error;
          for (const p of pending) skip.add(p.id);
        }
      }
    }
  }

  /** The user's archived chunks nearest to `vector`, within the query-time range. */
  search(user: string, vector: Float32Array, options: { from?: Date; to?: Date; limit: number }): ArchiveMatch[] {
    let rotated: KeyedVector;
    try {
      rotated = this.keys.rotation(user, ARCHIVE_SCOPE, EMBEDDING_DIM, false).apply(vector);
    } catch (error) {
      if (error instanceof NoUserKey) return [];
      throw error;
    }
    const seconds = (d: Date | undefined) => (d ? Math.floor(d.getTime() / 1000) : undefined);
    const rows = this.vectors.knn(user, rotated, options.limit, { from: seconds(options.from), to: seconds(options.to) });
    const chunk = this.db.query<
      { query_id: string; chunk_id: string; body: Uint8Array; question: Uint8Array; queried_at: number },
      [number, string]
    >(
      `SELECT c.query_id, c.chunk_id, c.body, q.question, q.queried_at FROM archive_chunks c JOIN archive_queries q ON q.query_id = c.query_id WHERE c.id = ? AND c.user_id = ?`,
    );
    const out: ArchiveMatch[] = [];
    for (const r of rows) {
      const row = chunk.get(r.id, user);
      if (!row) continue;
      out.push({
        chunk: JSON.parse(this.openValue(user, row.body, chunkAad(row.query_id, row.chunk_id), row.query_id)) as ArchivedChunk,
        query_id: row.query_id,
        question: this.openValue(user, row.question, questionAad(row.query_id), row.query_id),
        queried_at: new Date(row.queried_at * 1000).toISOString(),
        similarity: Math.round(r.similarity * 10_000) / 10_000,
      });
    }
    return out;
  }

  /** The latest archived copy of the user's chunk `chunkId` (D36); undefined for an id they were never given. */
  citedChunk(user: string, chunkId: string): CitedChunk | undefined {
    const row = this.db
      .query<{ query_id: string; chunk_id: string; body: Uint8Array; queried_at: number }, [string, string]>(
        "SELECT c.query_id, c.chunk_id, c.body, q.queried_at FROM archive_chunks c JOIN archive_queries q ON q.query_id = c.query_id WHERE c.user_id = ? AND c.chunk_id = ? ORDER BY c.id DESC LIMIT 1",
      )
      .get(user, chunkId);
    if (!row) return undefined;
    return {
      chunk: JSON.parse(this.openValue(user, row.body, chunkAad(row.query_id, row.chunk_id), row.query_id)) as ArchivedChunk,
      queried_at: new Date(row.queried_at * 1000).toISOString(),
    };
  }

  /** The user's archived document `docId` (D36), as it was ranked; undefined for an id they were never given. */
  document(user: string, docId: string): ArchivedDocument | undefined {
    const row = this.db
      .query<{ body: Uint8Array }, [string, string]>("SELECT body FROM archive_documents WHERE user_id = ? AND doc_id = ?")
      .get(user, docId);
    return row ? (JSON.parse(this.keys.openFor(user, row.body, documentAad(docId)).toString("utf8")) as ArchivedDocument) : undefined;
  }

  /** Archived chunks of all users still waiting for their vector (D29). */
  pending(): number {
    return this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM archive_chunks WHERE embedded = 0").get()!.n;
  }

  /** Archived chunks of all users (for reports and benchmarks). */
  count(): number {
    return this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM archive_chunks").get()!.n;
  }

  /** The rows this room keeps of `user` (a deletion asks every room, after it erased, that nothing is left: users/deletion.ts). */
  rowsOf(user: string): number {
    return this.db
      .query<{ n: number }, [string]>(
        "SELECT (SELECT count(*) FROM archive_queries WHERE user_id = ?1) + (SELECT count(*) FROM archive_chunks WHERE user_id = ?1) + (SELECT count(*) FROM archive_documents WHERE user_id = ?1) AS n",
      )
      .get(user)!.n;
  }

  /** Everything of `user` (D13): returns how many chunks were removed. */
  deleteUser(user: string): { queries: number; chunks: number } {
    return this.db.transaction(() => {
      this.vectors.dropOwner(user);
      const chunks = this.db.query("DELETE FROM archive_chunks WHERE user_id = ?").run(user).changes;
      const queries = this.db.query("DELETE FROM archive_queries WHERE user_id = ?").run(user).changes;
      this.db.query("DELETE FROM archive_documents WHERE user_id = ?").run(user);
      return { queries, chunks };
    })();
  }
}
