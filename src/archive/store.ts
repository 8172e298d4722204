// The archive (D3, D12): every answer's query and chunks, per user, sealed with the user's
// data key and bound to their rows; chunk vectors rotated by the user's secret rotation (D25),
// searched within the user's own alone. Written before the response is sent; a chunk whose
// vector is not ready yet is marked pending and gets it from the background embedder moments
// later, or after a restart (D29). Its rows are kept by one of two stores (rows.ts: the
// embedded SQLite, answering at once; rows-postgres.ts: the shared PostgreSQL, D33), so each
// method answers an Awaitable.
import { setImmediate as nextTurn } from "node:timers/promises";
import type postgres from "postgres";
import { Turns } from "../connectors/turns";
import { DecryptError } from "../crypto/aead";
import type { VectorRotation } from "../crypto/rotation";
import { NoUserKey, type UserKeys } from "../crypto/user-keys";
import { CITATION_KEY_PURPOSE } from "../documents/ids";
import { EMBEDDING_DIM } from "../embedding/embedder";
import { EmbeddingCancelled, type EmbeddingService } from "../embedding/service";
import { embeddingText } from "../retrieval/chunk";
import type { Migration } from "../store/migrations";
import { type Awaitable, andThen, inTransaction } from "../store/shared";
import { createIndexTables } from "../vectors/partition-index";
import type { KeyedVector } from "../vectors/store";
import { ARCHIVE_SCOPE, ARCHIVE_VECTORS, type ArchivedRow, type ArchiveRows, type OwedVector } from "./rows";

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
  {
    // A heavy user's archive gets an HNSW index past the threshold (vectors/partition-index.ts): its tables.
    id: "archive-005-vector-index",
    up: (db) => createIndexTables(db, ARCHIVE_VECTORS),
  },
];

export { forgetArchiveVectors, KEPT_DOCUMENT_VERSIONS } from "./rows";

/**
 * The owed rows' vectors rotated by the user's archive rotation, the event loop turning whenever
 * `turns`' budget is spent (D31): a batch of pending chunks (RESUME_BATCH, or an answer's) rotated
 * at once held the serving thread 24-43 ms while hostile sources were indexed (~1 ms a vector).
 */
export async function owedInTurns(
  rotation: VectorRotation,
  pending: ReadonlyArray<Pick<Pending, "id" | "queryId">>,
  vectors: readonly Float32Array[],
  turns = new Turns(),
): Promise<OwedVector[]> {
  const owed: OwedVector[] = [];
  for (const [i, p] of pending.entries()) {
    owed.push({ id: p.id, queryId: p.queryId, vector: rotation.apply(vectors[i]!) });
    await turns.maybe();
  }
  return owed;
}

/** Archived chunks' rotated vectors kept in memory (Archive.keyedVector), all users together: ~3 MB of floats and their texts. */
const KEYED_VECTORS_KEPT = 2048;

/** Chunks embedded per background step when pending vectors are resumed. */
const RESUME_BATCH = 16;

// Each sealed value is bound to its owner (sealFor adds the user), table and row.
export const questionAad = (queryId: string) => `archive/${queryId}/question`;
export const chunkAad = (queryId: string, chunkId: string) => `archive/${queryId}/chunk/${chunkId}`;
export const documentAad = (docId: string) => `archive/document/${docId}`;

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

/**
 * A write inside a transaction of the shared database (AuthService.whileStanding): the vectors
 * left to compute are embedded only once it committed (`afterCommit` holds that work; the caller
 * starts it), since before then their rows are seen by no other connection.
 */
export interface ArchiveTransaction {
  tx: postgres.TransactionSql;
  afterCommit: Array<() => void>;
}

export class Archive {
  constructor(
    readonly rows: ArchiveRows,
    private readonly keys: UserKeys,
    private readonly embeddings: EmbeddingService,
    private readonly now: () => number = Date.now,
  ) {}

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
   * known; the others computed in the background. Done when the answer may be sent.
   */
  record(user: string, queryId: string, question: string, chunks: ArchiveInput[], into?: ArchiveTransaction): Awaitable<void> {
    const rotation = this.keys.rotation(user, ARCHIVE_SCOPE, EMBEDDING_DIM);
    return this.storeKeyed(
      user,
      queryId,
      question,
      chunks,
      chunks.map((c) => this.keyedVector(user, rotation, c)),
      into,
    );
  }

  /**
   * Chunks' vectors as the user's archive keeps them, by asker, owner and the text embedded, while
   * the user's rotation is the same: the chunks an answer cites were mostly cited before, and each
   * was a cache lookup (a keyed hash, a row, an AES open) and a 384x384 rotation on the serving
   * thread, ~3 ms an answer of ten (issue 36). Forgotten with the user (deleteUser).
   */
  private readonly keyedVectors = new Map<string, { text: string; rotation: WeakRef<VectorRotation>; vector: KeyedVector }>();

  /** The chunk's vector rotated for `user`'s archive, from what was kept or the caches; undefined while none holds it. */
  private keyedVector(user: string, rotation: VectorRotation, c: ArchiveInput): KeyedVector | undefined {
    const key = `${user}\u0000${c.owner}\u0000${c.chunk.chunk_id}`;
    const kept = this.keyedVectors.get(key);
    if (kept && kept.text === c.embedText && kept.rotation.deref() === rotation) return kept.vector;
    const v = this.embeddings.cachedFor(c.owner, user, [c.embedText])[0];
    if (!v) return undefined;
    const vector = rotation.apply(v);
    this.keyedVectors.delete(key);
    if (this.keyedVectors.size >= KEYED_VECTORS_KEPT) this.keyedVectors.delete(this.keyedVectors.keys().next().value!);
    this.keyedVectors.set(key, { text: c.embedText, rotation: new WeakRef(rotation), vector });
    return vector;
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
  ): Awaitable<void> {
    const rotation = this.keys.rotation(user, ARCHIVE_SCOPE, EMBEDDING_DIM);
    return this.storeKeyed(
      user,
      queryId,
      question,
      chunks,
      vectors.map((v) => (v ? rotation.apply(v) : undefined)),
    );
  }

  /** Stores a query and its chunks with their vectors rotated for the user (undefined: computed in the background). */
  private storeKeyed(
    user: string,
    queryId: string,
    question: string,
    chunks: Array<Omit<ArchiveInput, "owner">>,
    vectors: Array<KeyedVector | undefined>,
    into?: ArchiveTransaction,
  ): Awaitable<void> {
    // In `into`'s transaction when given: the shared store's write where the asker's token was checked (AuthService.whileStanding).
    const rows = into ? inTransaction(this.rows, into.tx, "the archive") : this.rows;
    const at = Math.floor(this.now() / 1000);
    const cited = chunks.flatMap((c) => (c.document ? [c.document.doc_id] : []));
    return andThen(rows.knownDocuments(user, cited), (known) => {
      // A version is sealed once: its id is keyed by its content, so a row under it holds the same.
      const documents = [];
      for (const c of chunks) {
        const d = c.document;
        if (!d || known.has(d.doc_id)) continue;
        known.add(d.doc_id);
        documents.push({
          docId: d.doc_id,
          body: this.keys.sealFor(user, JSON.stringify(d), documentAad(d.doc_id)),
          ...(c.recordKey ? { recordKey: c.recordKey } : {}),
        });
      }
      const entry = {
        user,
        queryId,
        at,
        question: this.keys.sealFor(user, question, questionAad(queryId)),
        documents,
        chunks: chunks.map((c, i) => {
          const v = vectors[i];
          return {
            chunkId: c.chunk.chunk_id,
            body: this.keys.sealFor(user, JSON.stringify(c.chunk), chunkAad(queryId, c.chunk.chunk_id)),
            ...(v ? { vector: v } : {}),
          };
        }),
      };
      return andThen(rows.write(entry), (ids) => {
        const pending: Pending[] = [];
        chunks.forEach((c, i) => {
          if (!vectors[i]) pending.push({ id: ids[i]!, queryId, text: c.embedText });
        });
        if (!pending.length) return;
        const start = () => {
          const work = this.embedPending(user, pending)
            .catch((error: unknown) => this.onPendingFailed?.(error))
            .finally(() => this.inFlight.delete(work));
          this.inFlight.add(work);
        };
        if (into) into.afterCommit.push(start);
        else start();
      });
    });
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
    // Background work never makes a key: a user deleted meanwhile (on any node: their key read
    // again, D33) ends here (NoUserKey), before anything is written under the key they had.
    const ready = this.keys.ready(user);
    if (ready) await ready;
    await this.keys.prepareRotation(user, ARCHIVE_SCOPE, EMBEDDING_DIM, nextTurn, false);
    const rotation = this.keys.rotation(user, ARCHIVE_SCOPE, EMBEDDING_DIM, false);
    await this.rows.storeOwed(user, await owedInTurns(rotation, pending, vs));
  }

  /**
   * Embeds every chunk still pending (answers given before a crash, or before the vectors were
   * rotated), a batch at a time in the background. Resolves when none is left.
   */
  async resumePending(): Promise<number> {
    let done = 0;
    const skip = new Set<number>();
    for (;;) {
      // The embedded store's rows taken at once: its first batch queued in the caller's turn, as before.
      const owed = this.rows.owed(RESUME_BATCH + skip.size);
      const rows = (owed instanceof Promise ? await owed : owed).filter((r) => !skip.has(r.id));
      if (rows.length === 0) return done;
      const byUser = new Map<string, Pending[]>();
      const batch = rows.slice(0, RESUME_BATCH);
      // The owners' keys made present on this node first (a shared store's; the embedded one has none to wait for).
      for (const user of new Set(batch.map((r) => r.user_id))) {
        const ready = this.keys.ready(user);
        if (ready) await ready;
      }
      for (const r of batch) {
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

  /** The user's archived chunks nearest to `vector`, within the query-time range (D12). */
  search(user: string, vector: Float32Array, options: { from?: Date; to?: Date; limit: number }): Awaitable<ArchiveMatch[]> {
    let rotated: KeyedVector;
    try {
      rotated = this.keys.rotation(user, ARCHIVE_SCOPE, EMBEDDING_DIM, false).apply(vector);
    } catch (error) {
      if (error instanceof NoUserKey) return [];
      throw error;
    }
    const seconds = (d: Date | undefined) => (d ? Math.floor(d.getTime() / 1000) : undefined);
    const range = { from: seconds(options.from), to: seconds(options.to) };
    return andThen(this.rows.nearest(user, rotated, options.limit, range), (neighbours) => {
      const similarity = new Map(neighbours.map((n) => [n.id, n.similarity]));
      return andThen(this.rows.chunks(user, [...similarity.keys()]), (rows) =>
        rows.map((row) => ({
          chunk: this.chunkOf(user, row),
          query_id: row.query_id,
          question: this.openValue(user, row.question, questionAad(row.query_id), row.query_id),
          queried_at: new Date(row.queried_at * 1000).toISOString(),
          similarity: Math.round(similarity.get(row.id)! * 10_000) / 10_000,
        })),
      );
    });
  }

  private chunkOf(user: string, row: ArchivedRow): ArchivedChunk {
    return JSON.parse(this.openValue(user, row.body, chunkAad(row.query_id, row.chunk_id), row.query_id)) as ArchivedChunk;
  }

  /** The latest archived copy of the user's chunk `chunkId` (D36); undefined for an id they were never given. */
  citedChunk(user: string, chunkId: string): Awaitable<CitedChunk | undefined> {
    return andThen(this.rows.latestChunk(user, chunkId), (row) =>
      row ? { chunk: this.chunkOf(user, row), queried_at: new Date(row.queried_at * 1000).toISOString() } : undefined,
    );
  }

  /** The user's archived document `docId` (D36), as it was ranked; undefined for an id they were never given. */
  document(user: string, docId: string): Awaitable<ArchivedDocument | undefined> {
    return andThen(this.rows.document(user, docId), (body) =>
      body ? (JSON.parse(this.keys.openFor(user, body, documentAad(docId)).toString("utf8")) as ArchivedDocument) : undefined,
    );
  }

  /** Archived chunks of all users still waiting for their vector (D29). */
  pending(): Awaitable<number> {
    return this.rows.pending();
  }

  /** Archived chunks of all users (for reports and benchmarks). */
  count(): Awaitable<number> {
    return this.rows.count();
  }

  /** The rows this room keeps of `user` (a deletion asks every room, after it erased, that nothing is left: users/deletion.ts). */
  rowsOf(user: string): Awaitable<number> {
    return this.rows.rowsOf(user);
  }

  /** Everything of `user` (D13): how many questions and chunks were removed. */
  deleteUser(user: string): Awaitable<{ queries: number; chunks: number }> {
    for (const key of this.keyedVectors.keys()) if (key.startsWith(`${user}\u0000`)) this.keyedVectors.delete(key);
    return this.rows.forget(user);
  }
}
