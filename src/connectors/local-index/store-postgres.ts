// The local index in the shared PostgreSQL (D33), for several nodes on one database: a record
// indexed through one node is found, by its words and by meaning, through another. PostgreSQL
// holds what the embedded index holds at rest (D25), table by table:
//   corpus_index_docs    each record: its owner and connector, the keyed hash of its source, the
//                        source's size and mtime, the record's date, the record sealed with the
//                        owner's key and bound to its row (`doc/<doc>`), its words' format and length
//   corpus_index_terms   each record's blinded terms (keyed hashes, index-terms.ts) with their
//                        places in it: what FTS5 keeps in its segments, no word spelt
//   corpus_index_counts  each index's records and their words in all (BM25's statistics, kept by triggers)
//   corpus_index_chunks  each record's chunks: place, whether embedded, the text sealed (`chunk/<doc>/<ord>`)
//   corpus_index_chunk_counts  each index's chunks and those embedded (its progress, kept by triggers)
//   corpus_index_skipped each source left out (D31): its keyed hash, size and mtime, its name and reason sealed (`skipped/<source>`)
//   corpus_vectors       the chunks' vectors rotated by the owner's rotation (PostgresVectorStore, pgvector HNSW)
// No text, no path, no plaintext vector. Records are numbered by a sequence (every node takes
// its own numbers, each sealed record bound to its own) and a source's records are replaced in
// one transaction: other nodes see the old ones or the new, never half (what the embedded
// index's hidden rows do, documents.ts, PostgreSQL's snapshots do here).
// Words are ranked by BM25 in SQL from each index's own statistics: the same constants and the
// same formula as the embedded index's ownBm25 (candidates.ts), so both rank alike.
import type postgres from "postgres";
import type { KeyedVector } from "../../crypto/rotation";
import type { PgMigration } from "../../store/postgres-migrations";
import type { SharedQueries } from "../../store/shared";
import { PostgresVectorStore, VECTORS_TABLE, vectorMigrations } from "../../vectors/postgres";
import { MAX_KNN, type StoredVector } from "../../vectors/store";
import { TERMS_FORMAT } from "../index-terms";
import { Turns } from "../turns";
import type { IndexProgress } from "../types";
import { BM25_B, BM25_K1, type Candidates, type CandidatesAsked, FTS5_LEAST_IDF, keepNearest, type Scores } from "./candidates";

const DOCS = "corpus_index_docs";
const TERMS = "corpus_index_terms";
const COUNTS = "corpus_index_counts";
const CHUNKS = "corpus_index_chunks";
const CHUNK_COUNTS = "corpus_index_chunk_counts";
const SKIPPED = "corpus_index_skipped";

/**
 * Where a record's content begins among its words' places: past any title (a record takes at most
 * MAX_RECORD_WORDS words in all), so that a phrase never runs from the title into the content, as
 * FTS5's columns keep them apart.
 */
export const CONTENT_PLACE = 1 << 24;

export const indexPgMigrations: PgMigration[] = [
  {
    id: "index-pg-001-records",
    up: async (tx) => {
      await tx.unsafe(`CREATE SEQUENCE ${DOCS}_numbers`);
      await tx.unsafe(`CREATE TABLE ${DOCS} (
        doc bigint PRIMARY KEY,
        owner text NOT NULL,
        connector text NOT NULL,
        source text NOT NULL,
        size bigint NOT NULL,
        mtime bigint NOT NULL,
        record_date text,
        terms_format integer NOT NULL,
        terms_length integer NOT NULL,
        record bytea NOT NULL
      )`);
      await tx.unsafe(`CREATE INDEX ${DOCS}_source ON ${DOCS} (owner, connector, source)`);
      await tx.unsafe(`CREATE TABLE ${TERMS} (
        owner text NOT NULL,
        connector text NOT NULL,
        term text NOT NULL,
        doc bigint NOT NULL REFERENCES ${DOCS} (doc) ON DELETE CASCADE,
        places integer[] NOT NULL,
        PRIMARY KEY (owner, connector, term, doc)
      )`);
      await tx.unsafe(`CREATE INDEX ${TERMS}_doc ON ${TERMS} (doc)`);
      await tx.unsafe(`CREATE TABLE ${CHUNKS} (
        chunk bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        doc bigint NOT NULL REFERENCES ${DOCS} (doc) ON DELETE CASCADE,
        owner text NOT NULL,
        connector text NOT NULL,
        ord integer NOT NULL,
        embedded boolean NOT NULL DEFAULT false,
        text bytea NOT NULL
      )`);
      await tx.unsafe(`CREATE INDEX ${CHUNKS}_doc ON ${CHUNKS} (doc)`);
      await tx.unsafe(`CREATE INDEX ${CHUNKS}_owed ON ${CHUNKS} (owner, connector, chunk) WHERE NOT embedded`);
      // Each index's records and words in all, kept by every writer of its records (as connectors-012's triggers).
      await tx.unsafe(`CREATE TABLE ${COUNTS} (
        owner text NOT NULL,
        connector text NOT NULL,
        rows bigint NOT NULL,
        length bigint NOT NULL,
        PRIMARY KEY (owner, connector)
      )`);
      await tx.unsafe(`CREATE FUNCTION ${COUNTS}_kept() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP IN ('DELETE', 'UPDATE') THEN
            UPDATE ${COUNTS} SET rows = rows - 1, length = length - OLD.terms_length
              WHERE owner = OLD.owner AND connector = OLD.connector;
            DELETE FROM ${COUNTS} WHERE owner = OLD.owner AND connector = OLD.connector AND rows = 0;
          END IF;
          IF TG_OP IN ('INSERT', 'UPDATE') THEN
            INSERT INTO ${COUNTS} (owner, connector, rows, length) VALUES (NEW.owner, NEW.connector, 1, NEW.terms_length)
              ON CONFLICT (owner, connector) DO UPDATE SET rows = ${COUNTS}.rows + 1, length = ${COUNTS}.length + EXCLUDED.length;
          END IF;
          RETURN NULL;
        END $$`);
      await tx.unsafe(`CREATE TRIGGER ${COUNTS}_kept AFTER INSERT OR DELETE OR UPDATE OF owner, connector, terms_length
        ON ${DOCS} FOR EACH ROW EXECUTE FUNCTION ${COUNTS}_kept()`);
      // Each index's chunks and those with their vector (connectors-010's counts: a question's note reads them, never counts).
      await tx.unsafe(`CREATE TABLE ${CHUNK_COUNTS} (
        owner text NOT NULL,
        connector text NOT NULL,
        total bigint NOT NULL,
        embedded bigint NOT NULL,
        PRIMARY KEY (owner, connector)
      )`);
      await tx.unsafe(`CREATE FUNCTION ${CHUNK_COUNTS}_kept() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP IN ('DELETE', 'UPDATE') THEN
            UPDATE ${CHUNK_COUNTS} SET total = total - 1, embedded = embedded - OLD.embedded::int
              WHERE owner = OLD.owner AND connector = OLD.connector;
            DELETE FROM ${CHUNK_COUNTS} WHERE owner = OLD.owner AND connector = OLD.connector AND total = 0;
          END IF;
          IF TG_OP IN ('INSERT', 'UPDATE') THEN
            INSERT INTO ${CHUNK_COUNTS} (owner, connector, total, embedded) VALUES (NEW.owner, NEW.connector, 1, NEW.embedded::int)
              ON CONFLICT (owner, connector) DO UPDATE
              SET total = ${CHUNK_COUNTS}.total + 1, embedded = ${CHUNK_COUNTS}.embedded + EXCLUDED.embedded;
          END IF;
          RETURN NULL;
        END $$`);
      await tx.unsafe(`CREATE TRIGGER ${CHUNK_COUNTS}_kept AFTER INSERT OR DELETE OR UPDATE OF owner, connector, embedded
        ON ${CHUNKS} FOR EACH ROW EXECUTE FUNCTION ${CHUNK_COUNTS}_kept()`);
      await tx.unsafe(`CREATE TABLE ${SKIPPED} (
        skip bigint GENERATED ALWAYS AS IDENTITY,
        owner text NOT NULL,
        connector text NOT NULL,
        source text NOT NULL,
        size bigint NOT NULL,
        mtime bigint NOT NULL,
        note bytea NOT NULL,
        PRIMARY KEY (owner, connector, source)
      )`);
    },
  },
  // The chunks' vectors, as PostgresVectorStore makes them (ids: the chunks' numbers).
  ...vectorMigrations(VECTORS_TABLE),
];

/** A record as a put stores it: made ready by the node that holds the owner's keys. */
export interface IndexedRecord {
  /** Its number (takeDocs), which its sealed bytes and its chunks' are bound to. */
  doc: number;
  /** Its date (ISO text), or none. */
  date: string | null;
  /** The blinded terms of its title and its content, in order (TermBlinder.text). */
  title: string;
  content: string;
  /** The record sealed to `doc/<doc>`. */
  sealed: Uint8Array;
  /** Its chunks' texts, each sealed to `chunk/<doc>/<ord>`. */
  sealedChunks: Uint8Array[];
}

/** The source whose records a put replaces: its keyed hash, size and mtime (ScanEntry's). */
export interface IndexedSource {
  source: string;
  size: number;
  mtime: number;
}

/** A chunk owed its vector, as the embedding needs it. */
export interface OwedIndexChunk {
  chunk: number;
  doc: number;
  ord: number;
  /** Its text, sealed to `chunk/<doc>/<ord>`. */
  sealed: Uint8Array;
}

/** The records a search may find: those of the date range asked (ISO text, `to` excluded). */
export interface RecordDates {
  dateFrom?: string;
  dateTo?: string;
}

/** A chunk found near a question's vector: its record and place, and its similarity. */
export interface NearChunk {
  chunk: number;
  doc: number;
  ord: number;
  similarity: number;
}

/** Rows a put sends in one statement (each record's terms are its distinct words: up to MAX_RECORD_TERMS). */
const PUT_BATCH = 500;

/**
 * A record's blinded words as rows of the terms table: each distinct term with its places (the
 * content's from CONTENT_PLACE on); and the record's length in words (FTS5's, title and content).
 */
export function termPlaces(title: string, content: string): { terms: Map<string, number[]>; length: number } {
  const terms = new Map<string, number[]>();
  let length = 0;
  for (const [text, first] of [
    [title, 0],
    [content, CONTENT_PLACE],
  ] as const) {
    if (!text) continue;
    const words = text.split(" ");
    words.forEach((term, i) => {
      const places = terms.get(term);
      if (places) places.push(first + i);
      else terms.set(term, [first + i]);
    });
    length += words.length;
  }
  return { terms, length };
}

/** The blinded terms of an FTS5 phrase as TermBlinder.matchParts writes it (`"h1 h2"`). */
const phraseTerms = (part: string) => part.replace(/^"|"$/g, "").split(" ").filter(Boolean);

export class PostgresIndexRows {
  constructor(private readonly sql: SharedQueries) {}

  /** The store bound to `tx` (a user's deletion, one transaction of every shared room, D33): what it erases and counts commits or rolls back with it. */
  within(tx: postgres.TransactionSql): PostgresIndexRows {
    return new PostgresIndexRows(tx);
  }

  /** The chunks' vectors (pgvector HNSW, searched by owner and connector with iterative scans). */
  vectors(sql: SharedQueries = this.sql): PostgresVectorStore {
    return PostgresVectorStore.over(sql, VECTORS_TABLE);
  }

  /** `work` in the transaction the store is bound to, or in one of its own. */
  private transaction<T>(work: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
    const sql = this.sql;
    return "savepoint" in sql ? work(sql) : (sql.begin(work) as Promise<T>);
  }

  /** `count` record numbers, never given again (a sequence: every node takes its own), for records sealed to them before their put. */
  async takeDocs(count: number): Promise<number[]> {
    if (count <= 0) return [];
    const rows = await this.sql<{ doc: string }[]>`SELECT nextval(${`${DOCS}_numbers`}) AS doc FROM generate_series(1, ${count})`;
    return rows.map((r) => Number(r.doc));
  }

  /** Known sources of `owner`'s `connector` by their keys, with the size and mtime last read. */
  async known(owner: string, connector: string): Promise<Map<string, { size: number; mtime: number }>> {
    const rows = await this.sql<{ source: string; size: string; mtime: string }[]>`
      SELECT DISTINCT source, size, mtime FROM ${this.sql(DOCS)} WHERE owner = ${owner} AND connector = ${connector}`;
    return new Map(rows.map((r) => [r.source, { size: Number(r.size), mtime: Number(r.mtime) }]));
  }

  /**
   * Replaces every record of `entry.source` with `records`, in one transaction: every other node
   * sees the old records or the new ones. The old ones' chunks leave with their vectors. The
   * records' terms are counted here, a record at a time, the event loop turning whenever `turns`' budget is spent (D31).
   */
  put(owner: string, connector: string, entry: IndexedSource, records: readonly IndexedRecord[], turns = new Turns()): Promise<void> {
    return this.transaction(async (tx) => {
      await this.removeIn(tx, owner, connector, entry.source);
      for (let at = 0; at < records.length; at += PUT_BATCH) {
        const batch = records.slice(at, at + PUT_BATCH);
        // Each record's places counted with turns of the event loop between, whenever its budget is spent (D31).
        const words: Array<ReturnType<typeof termPlaces>> = [];
        for (const r of batch) {
          words.push(termPlaces(r.title, r.content));
          await turns.maybe();
        }
        await tx`INSERT INTO ${tx(DOCS)} (doc, owner, connector, source, size, mtime, record_date, terms_format, terms_length, record)
          SELECT u.doc, ${owner}, ${connector}, ${entry.source}, ${entry.size}, ${entry.mtime}, u.date, ${TERMS_FORMAT}, u.length, decode(u.record, 'hex')
          FROM unnest(${batch.map((r) => r.doc)}::bigint[], ${batch.map((r) => r.date)}::text[], ${words.map((w) => w.length)}::int[],
            ${batch.map((r) => Buffer.from(r.sealed).toString("hex"))}::text[]) AS u(doc, date, length, record)`;
        await insertTerms(
          tx,
          owner,
          connector,
          batch.map((r, i) => ({ doc: r.doc, terms: words[i]!.terms })),
        );
        const chunks = batch.flatMap((r) => r.sealedChunks.map((text, ord) => ({ doc: r.doc, ord, text })));
        if (chunks.length)
          await tx`INSERT INTO ${tx(CHUNKS)} (doc, owner, connector, ord, text)
            SELECT u.doc, ${owner}, ${connector}, u.ord, decode(u.text, 'hex')
            FROM unnest(${chunks.map((c) => c.doc)}::bigint[], ${chunks.map((c) => c.ord)}::int[],
              ${chunks.map((c) => Buffer.from(c.text).toString("hex"))}::text[]) WITH ORDINALITY AS u(doc, ord, text, n) ORDER BY u.n`;
      }
    });
  }

  /** Up to `limit` records whose words are of an older format (TERMS_FORMAT), sealed, for their words to be written again (rewriteWords). */
  async staleRecords(owner: string, connector: string, limit: number): Promise<Array<{ doc: number; sealed: Uint8Array }>> {
    const rows = await this.sql<{ doc: string; record: Uint8Array }[]>`SELECT doc, record FROM ${this.sql(DOCS)}
      WHERE owner = ${owner} AND connector = ${connector} AND terms_format < ${TERMS_FORMAT} ORDER BY doc LIMIT ${limit}`;
    return rows.map((r) => ({ doc: Number(r.doc), sealed: r.record }));
  }

  /**
   * Records' words written again in today's format (documents.ts reblindStale): each record's
   * terms replaced by `title` and `content` (TermBlinder.text), its length measured again; one
   * without them (its words could not be cut) keeps its old ones. All marked of TERMS_FORMAT.
   */
  rewriteWords(
    owner: string,
    connector: string,
    records: ReadonlyArray<{ doc: number; words?: { title: string; content: string } }>,
  ): Promise<void> {
    if (records.length === 0) return Promise.resolve();
    return this.transaction(async (tx) => {
      const docs = records.map((r) => r.doc);
      const rewritten = records.flatMap((r) => (r.words ? [{ doc: r.doc, ...termPlaces(r.words.title, r.words.content) }] : []));
      if (rewritten.length) {
        const ids = rewritten.map((r) => r.doc);
        await tx`DELETE FROM ${tx(TERMS)} WHERE owner = ${owner} AND connector = ${connector} AND doc = ANY(${ids}::bigint[])`;
        // Only rows of this index: a number of another's is not written into.
        const own = await tx<{ doc: string }[]>`UPDATE ${tx(DOCS)} d SET terms_length = u.length
          FROM unnest(${ids}::bigint[], ${rewritten.map((r) => r.length)}::int[]) AS u(doc, length)
          WHERE d.doc = u.doc AND d.owner = ${owner} AND d.connector = ${connector} RETURNING d.doc`;
        const mine = new Set(own.map((r) => Number(r.doc)));
        await insertTerms(
          tx,
          owner,
          connector,
          rewritten.filter((r) => mine.has(r.doc)),
        );
      }
      await tx`UPDATE ${tx(DOCS)} SET terms_format = ${TERMS_FORMAT}
        WHERE owner = ${owner} AND connector = ${connector} AND doc = ANY(${docs}::bigint[])`;
    });
  }

  /** Removes every record of a source (by its key), its terms, chunks and their vectors. */
  removeSource(owner: string, connector: string, source: string): Promise<void> {
    return this.transaction((tx) => this.removeIn(tx, owner, connector, source));
  }

  private async removeIn(tx: postgres.TransactionSql, owner: string, connector: string, source: string): Promise<void> {
    // One writer of a source at a time, on every node (held to the transaction's end): two puts of one
    // source at once each removed the records before them, neither the other's uncommitted ones, and both sets stayed.
    await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`${owner}/${connector}/${source}`}, 0))`;
    // The chunks' vectors first (by their numbers); the chunks and terms go with their records (ON DELETE CASCADE).
    const chunks = await tx<{ chunk: string }[]>`SELECT c.chunk FROM ${tx(CHUNKS)} c JOIN ${tx(DOCS)} d ON d.doc = c.doc
      WHERE d.owner = ${owner} AND d.connector = ${connector} AND d.source = ${source}`;
    await this.vectors(tx).remove(
      owner,
      connector,
      chunks.map((c) => Number(c.chunk)),
    );
    await tx`DELETE FROM ${tx(DOCS)} WHERE owner = ${owner} AND connector = ${connector} AND source = ${source}`;
  }

  /** How many records `owner`'s `connector` has. */
  async count(owner: string, connector: string): Promise<number> {
    const [row] = await this.sql<
      { rows: string }[]
    >`SELECT rows FROM ${this.sql(COUNTS)} WHERE owner = ${owner} AND connector = ${connector}`;
    return Number(row?.rows ?? 0);
  }

  /** Chunks in all and those with their vector: as counted when written, one row read. */
  async progress(owner: string, connector: string): Promise<IndexProgress> {
    const [row] = await this.sql<{ total: string; embedded: string }[]>`SELECT total, embedded FROM ${this.sql(CHUNK_COUNTS)}
      WHERE owner = ${owner} AND connector = ${connector}`;
    return { total: Number(row?.total ?? 0), embedded: Number(row?.embedded ?? 0) };
  }

  /** Sources skipped (past a bound or their reading budget, D31) by their keys, with the size and mtime they were skipped at. */
  async skipped(owner: string, connector: string): Promise<Map<string, { size: number; mtime: number }>> {
    const rows = await this.sql<{ source: string; size: string; mtime: string }[]>`SELECT source, size, mtime FROM ${this.sql(SKIPPED)}
      WHERE owner = ${owner} AND connector = ${connector}`;
    return new Map(rows.map((r) => [r.source, { size: Number(r.size), mtime: Number(r.mtime) }]));
  }

  /** The source of key `source` is not read again until it changes; `note`, its name and reason sealed to `skipped/<source>`. */
  async skip(owner: string, connector: string, source: string, entry: { size: number; mtime: number }, note: Uint8Array): Promise<void> {
    await this.sql`INSERT INTO ${this.sql(SKIPPED)} (owner, connector, source, size, mtime, note)
      VALUES (${owner}, ${connector}, ${source}, ${entry.size}, ${entry.mtime}, ${note})
      ON CONFLICT (owner, connector, source) DO UPDATE SET size = EXCLUDED.size, mtime = EXCLUDED.mtime, note = EXCLUDED.note`;
  }

  /** A skipped source (by its key) is read again at the next scan. */
  async unskip(owner: string, connector: string, source: string): Promise<void> {
    await this.sql`DELETE FROM ${this.sql(SKIPPED)} WHERE owner = ${owner} AND connector = ${connector} AND source = ${source}`;
  }

  /** How many sources are skipped, and the first `limit` of them (in the order skipped) with their notes sealed. */
  async skippedNotes(
    owner: string,
    connector: string,
    limit: number,
  ): Promise<{ count: number; named: Array<{ source: string; note: Uint8Array }> }> {
    const sql = this.sql;
    const [counted] = await sql<
      { n: string }[]
    >`SELECT count(*) AS n FROM ${sql(SKIPPED)} WHERE owner = ${owner} AND connector = ${connector}`;
    const named = await sql<{ source: string; note: Uint8Array }[]>`SELECT source, note FROM ${sql(SKIPPED)}
      WHERE owner = ${owner} AND connector = ${connector} ORDER BY skip LIMIT ${limit}`;
    return { count: Number(counted!.n), named: named.map((r) => ({ source: r.source, note: r.note })) };
  }

  /** Up to `limit` chunks still owed their vector, oldest first, each with its text sealed. */
  async owedChunks(owner: string, connector: string, limit: number): Promise<OwedIndexChunk[]> {
    const rows = await this.sql<{ chunk: string; doc: string; ord: number; text: Uint8Array }[]>`
      SELECT chunk, doc, ord, text FROM ${this.sql(CHUNKS)}
      WHERE owner = ${owner} AND connector = ${connector} AND NOT embedded ORDER BY chunk LIMIT ${limit}`;
    return rows.map((r) => ({ chunk: Number(r.chunk), doc: Number(r.doc), ord: r.ord, sealed: r.text }));
  }

  /**
   * Stores chunks' vectors (rotated: KeyedVector) and marks them embedded: only into a chunk that
   * is still this index's, of the same record and place, and owed its vector (locked until
   * stored: a removal or a deletion meanwhile waits, then takes the vectors too). How many stored.
   */
  setVectors(
    owner: string,
    connector: string,
    chunks: ReadonlyArray<{ chunk: number; doc: number; ord: number; vector: KeyedVector }>,
  ): Promise<number> {
    if (chunks.length === 0) return Promise.resolve(0);
    return this.transaction(async (tx) => {
      const owed = await tx<{ chunk: string; doc: string; ord: number }[]>`
        SELECT chunk, doc, ord FROM ${tx(CHUNKS)} WHERE chunk = ANY(${chunks.map((c) => c.chunk)}::bigint[])
          AND owner = ${owner} AND connector = ${connector} AND NOT embedded FOR UPDATE`;
      const place = new Map(owed.map((r) => [Number(r.chunk), `${r.doc}/${r.ord}`]));
      const stored: StoredVector[] = chunks
        .filter((c) => place.get(c.chunk) === `${c.doc}/${c.ord}`)
        .map((c) => ({ id: c.chunk, vector: c.vector }));
      if (stored.length === 0) return 0;
      await this.vectors(tx).put(owner, connector, stored);
      await tx`UPDATE ${tx(CHUNKS)} SET embedded = true WHERE chunk = ANY(${stored.map((v) => v.id)}::bigint[])`;
      return stored.length;
    });
  }

  /**
   * The `limit` best word matches of `parts` (FTS5 phrases of blinded terms, any of them matched:
   * TermBlinder.matchParts) among the records of the range, scored by BM25 over this index's own
   * rows as candidates.ts ownBm25 scores them: each phrase's rarity among the index's records,
   * its count in a record (places in a row, within one of title or content), the record's length
   * against the index's average. Best first, ties by record.
   */
  async bestByWords(
    owner: string,
    connector: string,
    parts: readonly string[],
    limit: number,
    dates: RecordDates = {},
  ): Promise<Array<{ doc: number; score: number }>> {
    const phrases = [...new Set(parts)].map(phraseTerms).filter((p) => p.length > 0);
    if (phrases.length === 0 || limit <= 0) return [];
    const flat = phrases.flatMap((terms, part) => terms.map((term, i) => ({ part, term, i })));
    const sql = this.sql;
    const from = dates.dateFrom ? sql`AND d.record_date >= ${dates.dateFrom}` : sql``;
    const to = dates.dateTo ? sql`AND d.record_date < ${dates.dateTo}` : sql``;
    // A phrase's occurrence in a record: a place where each of its terms is in turn (grouped by
    // where the phrase would start, every term of it found there); its count in the record, and
    // the index's records holding it at all (its idf: every record of the index, as FTS5 counts).
    const rows = await sql<{ doc: string; score: number }[]>`
      WITH phrase AS (
        SELECT u.part, u.term, u.i, count(*) OVER (PARTITION BY u.part) AS n
        FROM unnest(${flat.map((x) => x.part)}::int[], ${flat.map((x) => x.term)}::text[], ${flat.map((x) => x.i)}::int[]) AS u(part, term, i)
      ), occurrence AS (
        SELECT p.part, t.doc, place - p.i AS start
        FROM phrase p JOIN ${sql(TERMS)} t ON t.owner = ${owner} AND t.connector = ${connector} AND t.term = p.term
        CROSS JOIN LATERAL unnest(t.places) AS place
        GROUP BY p.part, p.n, t.doc, place - p.i
        HAVING count(DISTINCT p.i) = p.n
      ), frequency AS (
        SELECT part, doc, count(*) AS f FROM occurrence GROUP BY part, doc
      ), hits AS (
        SELECT part, count(*) AS n FROM frequency GROUP BY part
      ), own AS (
        SELECT rows::float8 AS rows, coalesce(nullif(length::float8 / rows, 0), 1) AS average FROM ${sql(COUNTS)}
        WHERE owner = ${owner} AND connector = ${connector} AND rows > 0
      )
      SELECT f.doc, sum(
        greatest(${FTS5_LEAST_IDF}::float8, ln((own.rows - h.n + 0.5) / (h.n + 0.5)))
        * (f.f * ${BM25_K1 + 1}::float8)
        / (f.f + ${BM25_K1}::float8 * (1 - ${BM25_B}::float8 + ${BM25_B}::float8 * d.terms_length / own.average))
      ) AS score
      FROM frequency f JOIN hits h ON h.part = f.part JOIN ${sql(DOCS)} d ON d.doc = f.doc CROSS JOIN own
      WHERE TRUE ${from} ${to}
      GROUP BY f.doc ORDER BY score DESC, f.doc LIMIT ${limit}`;
    return rows.map((r) => ({ doc: Number(r.doc), score: r.score }));
  }

  /**
   * The `k` chunks nearest `vector` (keyed by the owner's rotation) among `owner`'s `connector`'s,
   * of records in the range: the HNSW index's iterative scan filtered by owner and connector (and,
   * in a range, by the range's chunks), nearest first.
   */
  async nearestChunks(owner: string, connector: string, vector: KeyedVector, k: number, dates: RecordDates = {}): Promise<NearChunk[]> {
    const sql = this.sql;
    let ids: number[] | undefined;
    if (dates.dateFrom || dates.dateTo) {
      const from = dates.dateFrom ? sql`AND d.record_date >= ${dates.dateFrom}` : sql``;
      const to = dates.dateTo ? sql`AND d.record_date < ${dates.dateTo}` : sql``;
      ids = (
        await sql<{ chunk: string }[]>`SELECT c.chunk FROM ${sql(CHUNKS)} c JOIN ${sql(DOCS)} d ON d.doc = c.doc
          WHERE d.owner = ${owner} AND d.connector = ${connector} AND c.embedded ${from} ${to}`
      ).map((r) => Number(r.chunk));
      if (ids.length === 0) return [];
    }
    const near = await this.vectors().knn(owner, vector, Math.min(k, MAX_KNN), { connectors: [connector], ...(ids ? { ids } : {}) });
    if (near.length === 0) return [];
    const places = await sql<{ chunk: string; doc: string; ord: number }[]>`SELECT chunk, doc, ord FROM ${sql(CHUNKS)}
      WHERE chunk = ANY(${near.map((n) => n.id)}::bigint[]) AND owner = ${owner} AND connector = ${connector}`;
    const of = new Map(places.map((p) => [Number(p.chunk), p]));
    return near.flatMap((n) => {
      const p = of.get(n.id);
      return p ? [{ chunk: n.id, doc: Number(p.doc), ord: p.ord, similarity: n.similarity }] : [];
    });
  }

  /**
   * A question's candidates in one index, as candidates.ts finds them in the embedded one: the
   * best BM25 matches of its words, the chunks nearest its vector (each record's nearest kept),
   * each word match's best chunk, and the sealed records found; in one read-only snapshot, so
   * every statement sees the same records (another node may replace a source's meanwhile).
   */
  candidates(owner: string, connector: string, asked: CandidatesAsked): Promise<Candidates> {
    const sql = this.sql;
    const read = async (tx: postgres.TransactionSql): Promise<Candidates> => {
      const rows = new PostgresIndexRows(tx);
      const dates = { dateFrom: asked.dateFrom, dateTo: asked.dateTo };
      const found = new Map<number, Scores>();
      for (const w of await rows.bestByWords(owner, connector, asked.parts, asked.words, dates)) found.set(w.doc, { lexical: w.score });
      if (asked.vector) {
        for (const n of await rows.nearestChunks(owner, connector, asked.vector, Math.min(asked.nearest, MAX_KNN), dates))
          keepNearest(found, n.doc, n.similarity, n.ord);
        await rows.bestChunksOf(owner, connector, asked.vector, found);
      }
      return { found, sealed: await rows.sealed(owner, connector, [...found.keys()]) };
    };
    return "savepoint" in sql ? read(sql) : (sql.begin("isolation level repeatable read read only", read) as Promise<Candidates>);
  }

  /** Word matches the nearest chunks did not reach: their best chunk's similarity, by a search among their chunks only. */
  private async bestChunksOf(owner: string, connector: string, vector: KeyedVector, found: Map<number, Scores>): Promise<void> {
    const docs = [...found].filter(([, hit]) => hit.dense === undefined).map(([doc]) => doc);
    if (docs.length === 0) return;
    const sql = this.sql;
    const chunks = await sql<{ chunk: string; doc: string; ord: number }[]>`SELECT chunk, doc, ord FROM ${sql(CHUNKS)}
      WHERE doc = ANY(${docs}::bigint[]) AND owner = ${owner} AND connector = ${connector} AND embedded`;
    if (chunks.length === 0) return;
    const of = new Map(chunks.map((c) => [Number(c.chunk), c]));
    const near = await this.vectors().knn(owner, vector, Math.min(chunks.length, MAX_KNN), {
      connectors: [connector],
      ids: [...of.keys()],
    });
    for (const n of near) {
      const c = of.get(n.id)!;
      keepNearest(found, Number(c.doc), n.similarity, c.ord);
    }
  }

  /** The `limit` newest records of the range (by their dates; undated last), as a search without words finds them. */
  async newest(owner: string, connector: string, limit: number, dates: RecordDates = {}): Promise<Array<{ doc: number }>> {
    const sql = this.sql;
    const from = dates.dateFrom ? sql`AND record_date >= ${dates.dateFrom}` : sql``;
    const to = dates.dateTo ? sql`AND record_date < ${dates.dateTo}` : sql``;
    const rows = await sql<{ doc: string }[]>`SELECT doc FROM ${sql(DOCS)} WHERE owner = ${owner} AND connector = ${connector} ${from} ${to}
      ORDER BY record_date DESC NULLS LAST, doc LIMIT ${limit}`;
    return rows.map((r) => ({ doc: Number(r.doc) }));
  }

  /** The records `docs` of `owner`'s `connector` as stored (sealed), by number. */
  async sealed(owner: string, connector: string, docs: readonly number[]): Promise<Map<number, Uint8Array>> {
    if (docs.length === 0) return new Map();
    const rows = await this.sql<{ doc: string; record: Uint8Array }[]>`SELECT doc, record FROM ${this.sql(DOCS)}
      WHERE doc = ANY(${docs as number[]}::bigint[]) AND owner = ${owner} AND connector = ${connector}`;
    return new Map(rows.map((r) => [Number(r.doc), r.record]));
  }

  /** Removes every record of `owner`'s `connector`, with its terms, chunks, vectors and skipped sources; how many records. */
  dropConnector(owner: string, connector: string): Promise<number> {
    return this.transaction(async (tx) => {
      await this.vectors(tx).dropConnector(owner, connector);
      await tx`DELETE FROM ${tx(SKIPPED)} WHERE owner = ${owner} AND connector = ${connector}`;
      return (await tx`DELETE FROM ${tx(DOCS)} WHERE owner = ${owner} AND connector = ${connector}`).count;
    });
  }

  /**
   * Whether `owner`'s `connector` still owes work (D29, maintenance.ts indexOwesWork): chunks without
   * a vector, or no record at all (a first scan that never got far, or an empty folder).
   */
  async owesWork(owner: string, connector: string): Promise<boolean> {
    const p = await this.progress(owner, connector);
    return p.embedded < p.total || (await this.count(owner, connector)) === 0;
  }

  /** Chunks of every index still waiting for their vector (the partial index of those owed). */
  async owedChunkCount(): Promise<number> {
    const [row] = await this.sql<{ n: string }[]>`SELECT count(*) AS n FROM ${this.sql(CHUNKS)} WHERE NOT embedded`;
    return Number(row!.n);
  }

  /**
   * Forgets every chunk vector (another embedding model made them, maintenance.ts
   * forgetChunkVectors); the chunks stay, owed, and are embedded again. How many chunks.
   */
  forgetVectors(): Promise<number> {
    return this.transaction(async (tx) => {
      await this.vectors(tx).dropAll();
      return (await tx`UPDATE ${tx(CHUNKS)} SET embedded = false WHERE embedded`).count;
    });
  }

  /** Erases every row of `user` (D13): every connector's records, terms, counts, chunks, vectors and skipped sources. How many records. */
  forget(user: string): Promise<number> {
    return this.transaction(async (tx) => {
      await this.vectors(tx).dropOwner(user);
      await tx`DELETE FROM ${tx(SKIPPED)} WHERE owner = ${user}`;
      return (await tx`DELETE FROM ${tx(DOCS)} WHERE owner = ${user}`).count;
    });
  }

  /** Rows of `user` left in the index's tables (what a deletion checks is 0). */
  async rowsOf(user: string): Promise<number> {
    const sql = this.sql;
    const [row] = await sql<{ n: string }[]>`SELECT
      (SELECT count(*) FROM ${sql(DOCS)} WHERE owner = ${user}) + (SELECT count(*) FROM ${sql(TERMS)} WHERE owner = ${user})
      + (SELECT count(*) FROM ${sql(CHUNKS)} WHERE owner = ${user}) + (SELECT count(*) FROM ${sql(COUNTS)} WHERE owner = ${user})
      + (SELECT count(*) FROM ${sql(CHUNK_COUNTS)} WHERE owner = ${user}) + (SELECT count(*) FROM ${sql(SKIPPED)} WHERE owner = ${user}) AS n`;
    return Number(row!.n) + (await this.vectors().count(user));
  }
}

/** Records' terms with their places (termPlaces) written as rows of the terms table, a bounded statement at a time. */
async function insertTerms(
  tx: postgres.TransactionSql,
  owner: string,
  connector: string,
  records: ReadonlyArray<{ doc: number; terms: Map<string, number[]> }>,
): Promise<void> {
  const rows = records.flatMap((r) => [...r.terms].map(([term, places]) => ({ doc: r.doc, term, places })));
  for (let t = 0; t < rows.length; t += PUT_BATCH * 16) {
    const part = rows.slice(t, t + PUT_BATCH * 16);
    // Places sent as text ('{1,5}'): an array of arrays is no parameter postgres.js sends.
    await tx`INSERT INTO ${tx(TERMS)} (owner, connector, term, doc, places)
      SELECT ${owner}, ${connector}, u.term, u.doc, u.places::integer[]
      FROM unnest(${part.map((x) => x.term)}::text[], ${part.map((x) => x.doc)}::bigint[], ${part.map((x) => `{${x.places.join(",")}}`)}::text[])
        AS u(term, doc, places)`;
  }
}
