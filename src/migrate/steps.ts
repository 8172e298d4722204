// What `corpus migrate` copies (D33): each shared room's rows, table by table, as the bytes the
// embedded store holds at rest (sealed rows stay sealed, keyed hashes, blinded terms, keyed
// vectors): nothing is opened to copy it. A step copies one table in batches after a mark (the
// last row copied), each batch and its mark committed together (run.ts), so a copy killed
// midway is finished by the next run with nothing doubled. Ids are kept (sealed rows are bound
// to them: a record to `doc/<doc>`, a chunk to its record and place, vectors to their chunks);
// the sequences are moved past them at the end (finishSequences).
// Not copied: what expires within minutes or belongs to one node (rate-limit windows, /mcp
// buckets, idempotency records, leases, MCP sessions: in memory, the embedding cache, the console's
// sessions, deletion steps owed to the embedded word index, the big partitions' HNSW files).
import type { Database } from "bun:sqlite";
import type postgres from "postgres";
import { ACCOUNTS_TABLE, EXTERNAL_ACCOUNTS_TABLE } from "../accounts/store-postgres";
import { ARCHIVE_SCOPE } from "../archive/rows";
import { ARCHIVE_TABLES } from "../archive/rows-postgres";
import { NOT_BEFORE_TABLE, REVOKED_TABLE, TOKENS_TABLE } from "../auth/store-postgres";
import { indexKeysFor } from "../connectors/local-index/context";
import { chunkRow } from "../connectors/local-index/documents";
import { CONTENT_PLACE, INDEX_TABLES } from "../connectors/local-index/store-postgres";
import { CONNECTOR_TABLES } from "../connectors/rows-postgres";
import type { SourceRecord } from "../connectors/types";
import { CONVERSATION_TABLES } from "../conversations/store-postgres";
import type { UserKeys } from "../crypto/user-keys";
import { USER_KEYS_TABLE } from "../crypto/user-keys-postgres";
import { EMBEDDING_DIM } from "../embedding/embedder";
import { shippedTokenizer, type WordPieceTokenizer } from "../embedding/tokenizer";
import { OAUTH_TABLES } from "../oauth/store-postgres";
import { embeddedChunks } from "../retrieval/chunk";
import { ARCHIVE_VECTORS_TABLE, PostgresVectorStore, VECTORS_TABLE } from "../vectors/postgres";
import { splitPartition } from "../vectors/sqlite";
import type { KeyedVector, StoredVector } from "../vectors/store";
import { OUTBOX_TABLE, WEBHOOKS_TABLE } from "../webhooks/store-postgres";
import { MIGRATE_MESSAGES, MigrateError } from "./errors";

/** One table's copy: the next batch after `mark` written in `tx`; undefined once there is none. */
export interface Step {
  /** Its name in the progress table and the report. */
  name: string;
  /** The room it belongs to (SHARED_ROOMS' name). */
  room: string;
  batch(tx: postgres.TransactionSql, mark: string | null, limit: number): Promise<{ mark: string; rows: number } | undefined>;
  /** Its rows on each side, as verify compares them. */
  count(source: Database, target: postgres.Sql): Promise<{ embedded: number; postgres: number }>;
}

/** A column of a PostgreSQL table: its name and type (udt_name, for a cast). */
interface Column {
  name: string;
  type: string;
}

/** The columns of `table` in the target, in order. */
async function columnsOf(sql: postgres.Sql, table: string): Promise<Column[]> {
  const rows = await sql<{ name: string; type: string }[]>`SELECT column_name AS name, udt_name AS type
    FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ${table} ORDER BY ordinal_position`;
  if (rows.length === 0) throw new Error(`the target has no table ${table}: its schema is not this corpus's`);
  return rows;
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** A value of the embedded database as the target column takes it (SQLite keeps booleans as 0 and 1). */
function toColumn(value: unknown, type: string): unknown {
  if (value === null || value === undefined) return null;
  if (type === "bool") return value !== 0 && value !== false;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return value;
}

/** `rows` (values in `columns`' order) inserted in one statement; `overriding`: ids kept where the table makes its own. */
export async function insertRows(
  tx: postgres.TransactionSql,
  table: string,
  columns: readonly Column[],
  rows: readonly unknown[][],
  overriding = false,
): Promise<void> {
  if (rows.length === 0) return;
  const params: unknown[] = [];
  const values = rows.map(
    (row) =>
      `(${row
        .map((v, i) => {
          params.push(toColumn(v, columns[i]!.type));
          return `$${params.length}::${columns[i]!.type}`;
        })
        .join(", ")})`,
  );
  await tx.unsafe(
    `INSERT INTO ${quoted(table)} (${columns.map((c) => quoted(c.name)).join(", ")}) ${overriding ? "OVERRIDING SYSTEM VALUE " : ""}VALUES ${values.join(", ")}`,
    params as postgres.ParameterOrJSON<never>[],
  );
}

const countOf = (db: Database, sql: string, ...params: Array<string | number>) =>
  db.query<{ n: number }, typeof params>(sql).get(...params)!.n;
const pgCount = async (sql: postgres.Sql, table: string) =>
  Number((await sql<{ n: string }[]>`SELECT count(*) AS n FROM ${sql(table)}`)[0]!.n);

/**
 * A table copied as it is, by rowid, into the target table of the same columns (SQLite's are
 * the target's, or some of them: the others have defaults, as the outbox's claims). `overriding`:
 * the target numbers its rows itself, and the embedded ids are kept.
 */
function tableStep(room: string, from: string, to: string, overriding = false): (source: Database, target: postgres.Sql) => Promise<Step> {
  return async (source, target) => {
    const pg = await columnsOf(target, to);
    const own = source.query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${from}')`).all();
    const missing = own.filter((c) => !pg.some((p) => p.name === c.name));
    if (missing.length) throw new Error(`${to} has no column for ${from}.${missing.map((c) => c.name).join(", ")}: nothing would hold it`);
    const columns = pg.filter((p) => own.some((c) => c.name === p.name));
    const read = source.query<Record<string, unknown>, [number, number]>(
      `SELECT rowid AS "rowid:mark", ${columns.map((c) => quoted(c.name)).join(", ")} FROM ${quoted(from)} WHERE rowid > ? ORDER BY rowid LIMIT ?`,
    );
    return {
      name: from,
      room,
      async batch(tx, mark, limit) {
        const rows = read.all(Number(mark ?? Number.MIN_SAFE_INTEGER), limit);
        if (rows.length === 0) return undefined;
        await insertRows(
          tx,
          to,
          columns,
          rows.map((r) => columns.map((c) => r[c.name])),
          overriding,
        );
        return { mark: String(rows.at(-1)!["rowid:mark"]), rows: rows.length };
      },
      count: async (db, sql) => ({ embedded: countOf(db, `SELECT count(*) AS n FROM ${quoted(from)}`), postgres: await pgCount(sql, to) }),
    };
  };
}

/** Past any row: no record is hidden from there on (documents.ts NO_ROW). */
const NO_ROW = Number.MAX_SAFE_INTEGER;

/**
 * The records of the local index its readers see (documents.ts visible): `d` joined with its
 * index's hidden rows `h`. Records a put was staging, or had set aside, when the service stopped
 * are not copied: the index is copied as a question would have found it.
 */
export const VISIBLE = `d.doc < coalesce(h.from_doc, ${NO_ROW}) AND NOT (d.source = coalesce(h.source, '') AND d.doc < coalesce(h.below_doc, 0))`;
export const VISIBLE_DOCS = `connector_docs d LEFT JOIN connector_hidden h ON h.owner = d.owner`;
/** The records of chunks `c` (joined after them), with their indexes' hidden rows, for VISIBLE. */
export const DOCS_OF_CHUNKS = `connector_docs d ON d.doc = c.doc LEFT JOIN connector_hidden h ON h.owner = d.owner`;

const I = INDEX_TABLES;

/** The local index's room (SHARED_ROOMS names it once it is shared). */
export const INDEX_ROOM = "the local index and its vectors";

/** The local index's records, by number: the partition ("alice/mail") split into owner and connector. */
async function indexDocs(_source: Database, target: postgres.Sql): Promise<Step> {
  const columns = (await columnsOf(target, I.docs)).filter((c) =>
    ["doc", "owner", "connector", "source", "size", "mtime", "record_date", "terms_format", "terms_length", "record"].includes(c.name),
  );
  return {
    name: "connector_docs",
    room: INDEX_ROOM,
    async batch(tx, mark, limit) {
      const rows = _source
        .query<Record<string, unknown> & { doc: number; owner: string }, [number, number]>(
          `SELECT d.doc, d.owner, d.source, d.size, d.mtime, d.record_date, d.terms_format, d.terms_length, d.record
           FROM ${VISIBLE_DOCS} WHERE d.doc > ? AND ${VISIBLE} ORDER BY d.doc LIMIT ?`,
        )
        .all(Number(mark ?? 0), limit);
      if (rows.length === 0) return undefined;
      const values = rows.map((r) => {
        const { owner, connector } = splitPartition(r.owner);
        const row: Record<string, unknown> = { ...r, owner, connector };
        return columns.map((c) => row[c.name]);
      });
      await insertRows(tx, I.docs, columns, values);
      return { mark: String(rows.at(-1)!.doc), rows: rows.length };
    },
    count: async (db, sql) => ({
      embedded: countOf(db, `SELECT count(*) AS n FROM ${VISIBLE_DOCS} WHERE ${VISIBLE}`),
      postgres: await pgCount(sql, I.docs),
    }),
  };
}

/** The word index's instances (fts5vocab): one row per term, record, column and place. */
const VOCABULARY = "temp.corpus_migrate_terms";

/** Makes the word index's vocabulary readable (a virtual table of the connection's own, nothing written to the database). */
export function readVocabulary(db: Database): void {
  db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${VOCABULARY} USING fts5vocab(main, connector_terms, instance)`);
}

/** The vocabulary's instances with their records (the vocabulary read first, in its order; each record by its number). */
const VOCABULARY_OF_VISIBLE = `FROM ${VOCABULARY} v CROSS JOIN connector_docs d ON d.doc = v.doc LEFT JOIN connector_hidden h ON h.owner = d.owner`;

interface Instance {
  term: string;
  doc: number;
  col: string;
  offset: number;
  owner: string;
}

/**
 * The blinded terms of the visible records with their places, as PostgresIndexRows keeps them
 * (a title's from 0, the content's from CONTENT_PLACE): read from FTS5's own index, in its order
 * (term, then record, then column and place), since a contentless table keeps no text. The mark
 * is the last (term, record) copied whole.
 */
function indexTerms(source: Database): Step {
  readVocabulary(source);
  const select = `SELECT v.term, v.doc, v.col, v.offset, d.owner ${VOCABULARY_OF_VISIBLE}`;
  const sameTerm = source.query<Instance, [string, number]>(`${select} WHERE v.term = ? AND v.doc > ? AND ${VISIBLE}`);
  const laterTerms = source.query<Instance, [string]>(`${select} WHERE v.term > ? AND ${VISIBLE}`);
  return {
    name: "connector_terms",
    room: INDEX_ROOM,
    async batch(tx, mark, limit) {
      const [term, doc] = mark ? [mark.slice(0, mark.lastIndexOf("\t")), Number(mark.slice(mark.lastIndexOf("\t") + 1))] : ["", 0];
      const groups: Array<{ term: string; doc: number; owner: string; places: number[] }> = [];
      // Instances of (term, record) come together; a group is taken once the next one begins (or the index ends).
      const take = (rows: Iterable<Instance>): boolean => {
        for (const r of rows) {
          const last = groups.at(-1);
          if (last && last.term === r.term && last.doc === r.doc) {
            last.places.push(r.col === "title" ? r.offset : CONTENT_PLACE + r.offset);
            continue;
          }
          if (last && (r.term < last.term || (r.term === last.term && r.doc < last.doc)))
            throw new Error("the word index's vocabulary is not in order of term and record");
          if (groups.length === limit) return true;
          groups.push({ term: r.term, doc: r.doc, owner: r.owner, places: [r.col === "title" ? r.offset : CONTENT_PLACE + r.offset] });
        }
        return false;
      };
      // Stopped where the group after the last began (the last is whole), or at the index's end.
      if (!(mark && take(sameTerm.iterate(term, doc)))) take(laterTerms.iterate(term));
      if (groups.length === 0) return undefined;
      const rows = groups.map((g) => {
        const { owner, connector } = splitPartition(g.owner);
        return [owner, connector, g.term, g.doc, `{${g.places.sort((a, b) => a - b).join(",")}}`];
      });
      await insertRows(
        tx,
        I.terms,
        [
          { name: "owner", type: "text" },
          { name: "connector", type: "text" },
          { name: "term", type: "text" },
          { name: "doc", type: "int8" },
          { name: "places", type: "_int4" },
        ],
        rows,
      );
      const last = groups.at(-1)!;
      return { mark: `${last.term}\t${last.doc}`, rows: groups.length };
    },
    async count(db, sql) {
      // Places, every term's in every record: what FTS5 holds of the visible records, and what the terms' places hold.
      readVocabulary(db);
      const embedded = countOf(db, `SELECT count(*) AS n ${VOCABULARY_OF_VISIBLE} WHERE ${VISIBLE}`);
      const [row] = await sql<{ n: string | null }[]>`SELECT sum(cardinality(places)) AS n FROM ${sql(I.terms)}`;
      return { embedded, postgres: Number(row!.n ?? 0) };
    },
  };
}

/**
 * The chunks of the visible records, by number (their vectors are stored under it), each text
 * sealed to its record and place. A chunk stored before its text was kept (connectors-011) has
 * none, and PostgreSQL's rows need one: its record is opened and cut again as the embedded index
 * does when it embeds one (vectors.ts: the same chunker), and the text sealed with the owner's
 * key in memory; nothing is written in plaintext.
 */
function indexChunks(cut: ChunkTexts): (source: Database, target: postgres.Sql) => Promise<Step> {
  return async (source, target) => {
    const columns = (await columnsOf(target, I.chunks)).filter((c) =>
      ["chunk", "doc", "owner", "connector", "ord", "embedded", "text"].includes(c.name),
    );
    const read = source.query<
      { chunk: number; doc: number; owner: string; ord: number; embedded: number; text: Uint8Array | null; record: Uint8Array },
      [number, number]
    >(
      `SELECT c.chunk, c.doc, c.owner, c.ord, c.embedded, c.text, d.record FROM connector_chunks c
       JOIN ${DOCS_OF_CHUNKS} WHERE c.chunk > ? AND ${VISIBLE} ORDER BY c.chunk LIMIT ?`,
    );
    return {
      name: "connector_chunks",
      room: INDEX_ROOM,
      async batch(tx, mark, limit) {
        const rows = read.all(Number(mark ?? 0), limit);
        if (rows.length === 0) return undefined;
        const values = rows.map((r) => {
          const { owner, connector } = splitPartition(r.owner);
          const text = r.text ?? cut.sealedText(owner, connector, r.doc, r.ord, r.record);
          const row: Record<string, unknown> = { ...r, owner, connector, text };
          return columns.map((c) => row[c.name]);
        });
        await insertRows(tx, I.chunks, columns, values, true);
        return { mark: String(rows.at(-1)!.chunk), rows: rows.length };
      },
      count: async (db, sql) => ({
        embedded: countOf(db, `SELECT count(*) AS n FROM connector_chunks c JOIN ${DOCS_OF_CHUNKS} WHERE ${VISIBLE}`),
        postgres: await pgCount(sql, I.chunks),
      }),
    };
  };
}

/** Texts of chunks stored without one, cut again from their records (indexChunks). */
export class ChunkTexts {
  private tokenizer?: WordPieceTokenizer;
  /** The last record cut: its chunks come one after another. */
  private last?: { doc: number; texts: string[] };
  /** How many texts were cut again. */
  cut = 0;

  constructor(private readonly keys: UserKeys) {}

  sealedText(owner: string, connector: string, doc: number, ord: number, record: Uint8Array): Buffer {
    const index = indexKeysFor(this.keys, owner, connector, false);
    if (this.last?.doc !== doc) {
      this.tokenizer ??= shippedTokenizer();
      const opened = JSON.parse(index.open(record, `doc/${doc}`)) as SourceRecord;
      this.last = { doc, texts: embeddedChunks(opened, this.tokenizer) };
    }
    const text = this.last.texts[ord];
    if (text === undefined) throw new MigrateError(MIGRATE_MESSAGES.chunkWithoutText(doc, ord));
    this.cut++;
    return index.seal(text, chunkRow(doc, ord));
  }
}

/** Sources skipped (D31), in the order skipped: keyed like the records, their names and reasons sealed. */
async function indexSkipped(source: Database, target: postgres.Sql): Promise<Step> {
  const columns = (await columnsOf(target, I.skipped)).filter((c) =>
    ["skip", "owner", "connector", "source", "size", "mtime", "note"].includes(c.name),
  );
  const read = source.query<Record<string, unknown> & { skip: number; owner: string }, [number, number]>(
    "SELECT skip, owner, source, size, mtime, note FROM connector_skipped WHERE skip > ? ORDER BY skip LIMIT ?",
  );
  return {
    name: "connector_skipped",
    room: INDEX_ROOM,
    async batch(tx, mark, limit) {
      const rows = read.all(Number(mark ?? 0), limit);
      if (rows.length === 0) return undefined;
      await insertRows(
        tx,
        I.skipped,
        columns,
        rows.map((r) => {
          const row: Record<string, unknown> = { ...r, ...splitPartition(r.owner) };
          return columns.map((c) => row[c.name]);
        }),
        true,
      );
      return { mark: String(rows.at(-1)!.skip), rows: rows.length };
    },
    count: async (db, sql) => ({
      embedded: countOf(db, "SELECT count(*) AS n FROM connector_skipped"),
      postgres: await pgCount(sql, I.skipped),
    }),
  };
}

/** A vec0 row's vector (float32 bytes): keyed already (D25, rotated before it was stored), copied as it is. */
function vectorOf(blob: Uint8Array): KeyedVector {
  if (blob.byteLength !== EMBEDDING_DIM * 4) throw new Error(`a stored vector of ${blob.byteLength} bytes, not ${EMBEDDING_DIM * 4}`);
  return new Float32Array(blob.slice().buffer) as KeyedVector;
}

/**
 * Keyed vectors by id, read by the ids of rows that have one (a lookup each: vec0 finds a row by
 * its id, never a range of them), and put through PostgresVectorStore (pgvector), grouped by
 * owner and connector. The mark is the last id.
 */
function vectorStep(options: {
  name: string;
  room: string;
  table: string;
  /** Ids after a mark, in order, with their owner and connector (and time). */
  ids: string;
  /** The vector of an id. */
  vector: string;
  /** The rows with a vector in the embedded store, as the target counts them. */
  count: string;
}): (source: Database) => Step {
  return (source) => {
    const ids = source.query<{ id: number; owner: string; connector: string | null; at: number | null }, [number, number]>(options.ids);
    const vector = source.query<{ embedding: Uint8Array }, [number]>(options.vector);
    return {
      name: options.name,
      room: options.room,
      async batch(tx, mark, limit) {
        const rows = ids.all(Number(mark ?? 0), limit);
        if (rows.length === 0) return undefined;
        const byOwner = new Map<string, { owner: string; connector: string; vectors: StoredVector[] }>();
        for (const r of rows) {
          const found = vector.get(r.id);
          if (!found) continue;
          // The local index's partition names both ("alice/mail"); the archive's the owner alone.
          const { owner, connector } = r.connector === null ? splitPartition(r.owner) : { owner: r.owner, connector: r.connector };
          const key = `${owner}\u0000${connector}`;
          const group = byOwner.get(key) ?? byOwner.set(key, { owner, connector, vectors: [] }).get(key)!;
          group.vectors.push({ id: r.id, vector: vectorOf(found.embedding), ...(r.at !== null ? { at: r.at } : {}) });
        }
        const store = PostgresVectorStore.over(tx, options.table);
        for (const g of byOwner.values()) await store.put(g.owner, g.connector, g.vectors);
        return { mark: String(rows.at(-1)!.id), rows: [...byOwner.values()].reduce((n, g) => n + g.vectors.length, 0) };
      },
      count: async (db, sql) => ({ embedded: countOf(db, options.count), postgres: await pgCount(sql, options.table) }),
    };
  };
}

/** The chunks' vectors (connector_vec, partition `owner/connector`), of the visible records' chunks. */
const indexVectors = vectorStep({
  name: "connector_vec",
  room: INDEX_ROOM,
  table: VECTORS_TABLE,
  ids: `SELECT c.chunk AS id, c.owner, NULL AS connector, NULL AS at FROM connector_chunks c JOIN ${DOCS_OF_CHUNKS}
      WHERE c.chunk > ? AND c.embedded = 1 AND ${VISIBLE} ORDER BY c.chunk LIMIT ?`,
  vector: "SELECT embedding FROM connector_vec WHERE chunk_id = ?",
  count: `SELECT count(*) AS n FROM connector_vec_rowids r JOIN connector_chunks c ON c.chunk = r.rowid
      JOIN ${DOCS_OF_CHUNKS} WHERE ${VISIBLE}`,
});

/** The archive's vectors (archive_vec, partition: the user; with each chunk's question's time). */
const archiveVectors = vectorStep({
  name: "archive_vec",
  room: "the archive",
  table: ARCHIVE_VECTORS_TABLE,
  ids: `SELECT c.id, c.user_id AS owner, '${ARCHIVE_SCOPE}' AS connector, q.queried_at AS at FROM archive_chunks c
    JOIN archive_queries q ON q.query_id = c.query_id WHERE c.id > ? AND c.embedded = 1 ORDER BY c.id LIMIT ?`,
  vector: "SELECT embedding FROM archive_vec WHERE id = ?",
  count: "SELECT count(*) AS n FROM archive_vec_rowids r JOIN archive_chunks c ON c.id = r.rowid",
});

const C = CONVERSATION_TABLES;
const O = OAUTH_TABLES;
const A = ARCHIVE_TABLES;

/** Every step, in an order the target's references allow (a record before its terms and chunks, a query before its chunks). */
export async function copySteps(source: Database, target: postgres.Sql, cut: ChunkTexts): Promise<Step[]> {
  const makers: Array<(source: Database, target: postgres.Sql) => Promise<Step> | Step> = [
    tableStep("users' data keys", "crypto_user_keys", USER_KEYS_TABLE),
    tableStep("users and accounts", "accounts", ACCOUNTS_TABLE),
    tableStep("users and accounts", "external_accounts", EXTERNAL_ACCOUNTS_TABLE),
    tableStep("tokens and revocations", "auth_tokens", TOKENS_TABLE),
    tableStep("tokens and revocations", "auth_revoked_tokens", REVOKED_TABLE),
    tableStep("tokens and revocations", "auth_user_not_before", NOT_BEFORE_TABLE),
    tableStep("OAuth clients, grants and sessions", "oauth_clients", O.clients),
    tableStep("OAuth clients, grants and sessions", "oauth_grants", O.grants),
    tableStep("OAuth clients, grants and sessions", "oauth_codes", O.codes),
    tableStep("OAuth clients, grants and sessions", "oauth_refresh_tokens", O.refresh),
    tableStep("OAuth clients, grants and sessions", "oauth_access_tokens", O.access),
    tableStep("OAuth clients, grants and sessions", "oauth_sessions", O.sessions),
    tableStep("conversations", "conversations", C.conversations),
    tableStep("conversations", "conversation_turns", C.turns),
    tableStep("the archive", "archive_queries", A.queries),
    tableStep("the archive", "archive_chunks", A.chunks, true),
    tableStep("the archive", "archive_documents", A.documents, true),
    archiveVectors,
    tableStep("webhooks and their deliveries", "webhooks", WEBHOOKS_TABLE),
    tableStep("webhooks and their deliveries", "webhook_outbox", OUTBOX_TABLE, true),
    tableStep("connectors", "connectors", CONNECTOR_TABLES.connectors),
    tableStep("connectors", "connector_grants", CONNECTOR_TABLES.grants),
    indexDocs,
    indexTerms,
    indexChunks(cut),
    indexSkipped,
    indexVectors,
  ];
  const steps: Step[] = [];
  for (const make of makers) steps.push(await make(source, target));
  return steps;
}

/**
 * Moves the target's own numbering past the ids copied, so that the rows the nodes add next never
 * take one (a record's number, a chunk's, an archived chunk's or document's, a delivery's). Run
 * at the end of each copy: once more changes nothing.
 */
export async function finishSequences(tx: postgres.TransactionSql): Promise<void> {
  await tx.unsafe(`SELECT setval('${I.docs}_numbers', m) FROM (SELECT max(doc) AS m FROM ${I.docs}) x WHERE m IS NOT NULL`);
  for (const [table, column] of [
    [I.chunks, "chunk"],
    [I.skipped, "skip"],
    [A.chunks, "id"],
    [A.documents, "id"],
    [OUTBOX_TABLE, "id"],
  ] as const)
    await tx.unsafe(
      `SELECT setval(pg_get_serial_sequence('${table}', '${column}'), m) FROM (SELECT max(${column}) AS m FROM ${table}) x WHERE m IS NOT NULL`,
    );
}
