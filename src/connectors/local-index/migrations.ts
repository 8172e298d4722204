// The local index's tables (see index.ts). Each migration stays as it shipped: a data folder of
// any earlier version opens and upgrades by the same ids and statements.
import type { Database } from "bun:sqlite";
import { EMBEDDING_DIM } from "../../embedding/embedder";
import type { Migration } from "../../store/migrations";
import { termsLength } from "./word-statistics";

export const indexMigrations: Migration[] = [
  {
    id: "connectors-001-local-index",
    up(db) {
      db.exec(`CREATE TABLE connector_docs (
        doc INTEGER PRIMARY KEY,
        owner TEXT NOT NULL,
        source TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime INTEGER NOT NULL,
        record_date TEXT,
        record BLOB NOT NULL
      )`);
      db.exec("CREATE INDEX connector_docs_source ON connector_docs (owner, source)");
      db.exec(
        "CREATE VIRTUAL TABLE connector_fts USING fts5(title, content, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2')",
      );
    },
  },
  {
    id: "connectors-003-chunk-vectors",
    up(db) {
      db.exec(`CREATE TABLE connector_chunks (
        chunk INTEGER PRIMARY KEY,
        doc INTEGER NOT NULL,
        owner TEXT NOT NULL,
        ord INTEGER NOT NULL,
        embedded INTEGER NOT NULL DEFAULT 0
      )`);
      db.exec("CREATE INDEX connector_chunks_doc ON connector_chunks (doc)");
      db.exec("CREATE INDEX connector_chunks_pending ON connector_chunks (owner, embedded)");
      db.exec(
        `CREATE VIRTUAL TABLE connector_vec USING vec0(chunk_id integer primary key, owner text partition key, embedding float[${EMBEDDING_DIM}] distance_metric=cosine)`,
      );
    },
  },
  {
    // The first index kept words, paths and vectors as they are: all of it goes (freed pages are
    // overwritten, secure_delete) and every connector re-indexes into the blinded form.
    id: "connectors-004-blinded-index",
    up(db) {
      db.exec("DROP TABLE connector_fts");
      db.exec("DROP TABLE connector_vec");
      db.exec("DELETE FROM connector_chunks");
      db.exec("DELETE FROM connector_docs");
      db.exec(`CREATE VIRTUAL TABLE connector_terms USING fts5(title, content, content='', contentless_delete=1, tokenize='ascii')`);
      db.exec("INSERT INTO connector_terms (connector_terms, rank) VALUES ('secure-delete', 1)");
      db.exec(
        `CREATE VIRTUAL TABLE connector_vec USING vec0(chunk_id integer primary key, owner text partition key, embedding float[${EMBEDDING_DIM}] distance_metric=cosine)`,
      );
    },
  },
  {
    // Chunks still owed a vector, counted and found at start without scanning the others (D29).
    id: "connectors-005-owed-chunks",
    up(db) {
      db.exec("CREATE INDEX connector_chunks_owed ON connector_chunks (owner) WHERE embedded = 0");
    },
  },
  {
    // The format of each record's blinded words (index-terms.ts TERMS_FORMAT): records of an
    // older one have their words written again by the next scan. Every record so far is of 1.
    id: "connectors-006-terms-format",
    up(db) {
      db.exec("ALTER TABLE connector_docs ADD COLUMN terms_format INTEGER NOT NULL DEFAULT 1");
      db.exec("CREATE INDEX connector_docs_terms_format ON connector_docs (owner, terms_format)");
    },
  },
  {
    // Sources skipped past a bound or their reading budget (D31, skipped.ts), kept across restarts:
    // keyed like connector_docs (a keyed hash of the path), their name and reason sealed.
    id: "connectors-007-skipped-sources",
    up(db) {
      db.exec(`CREATE TABLE connector_skipped (
        skip INTEGER PRIMARY KEY,
        owner TEXT NOT NULL,
        source TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime INTEGER NOT NULL,
        note BLOB NOT NULL,
        UNIQUE (owner, source)
      )`);
    },
  },
  {
    // Records of an index hidden from every reader while a put writes (D31, documents.ts): those
    // of its rows from `from_doc` on (being staged), or those of `source` below `below_doc` (put
    // aside, being removed). One row an index at most, so that switching a source's records is one
    // statement, however many they are.
    id: "connectors-008-hidden-records",
    up(db) {
      db.exec(`CREATE TABLE connector_hidden (
        owner TEXT PRIMARY KEY,
        from_doc INTEGER,
        source TEXT,
        below_doc INTEGER
      )`);
    },
  },
  {
    // A chunk's number is never given again (AUTOINCREMENT): the newest chunks removed and others
    // put before the next search took the same numbers, and so vec0's same slots, and the search
    // worker's held copy (held-vectors.ts), which knows a vec0 chunk changed by its validity and
    // rowids only, kept answering with the removed chunks' vectors.
    id: "connectors-009-chunk-numbers-once",
    up(db) {
      db.exec(`CREATE TABLE connector_chunks_once (
        chunk INTEGER PRIMARY KEY AUTOINCREMENT,
        doc INTEGER NOT NULL,
        owner TEXT NOT NULL,
        ord INTEGER NOT NULL,
        embedded INTEGER NOT NULL DEFAULT 0
      )`);
      db.exec(
        "INSERT INTO connector_chunks_once (chunk, doc, owner, ord, embedded) SELECT chunk, doc, owner, ord, embedded FROM connector_chunks",
      );
      // Past every number a vector may still be stored under (a chunk removed before its vector):
      // vec0's own table of rowids, read without its vectors.
      db.exec("DELETE FROM sqlite_sequence WHERE name = 'connector_chunks_once'");
      db.exec(
        "INSERT INTO sqlite_sequence (name, seq) SELECT 'connector_chunks_once', max(n) FROM (SELECT max(chunk) AS n FROM connector_chunks UNION ALL SELECT max(rowid) FROM connector_vec_rowids UNION ALL SELECT 0)",
      );
      db.exec("DROP TABLE connector_chunks");
      db.exec("ALTER TABLE connector_chunks_once RENAME TO connector_chunks");
      db.exec("CREATE INDEX connector_chunks_doc ON connector_chunks (doc)");
      db.exec("CREATE INDEX connector_chunks_pending ON connector_chunks (owner, embedded)");
      db.exec("CREATE INDEX connector_chunks_owed ON connector_chunks (owner) WHERE embedded = 0");
    },
  },
  {
    // Each index's chunks and those with their vector, counted as they are written (triggers),
    // not counted again by every question: a question reads each connector's progress for its
    // note, and counting the Enron mail's 10,053 chunks took ~2.5 ms of the serving thread each
    // time (issue 36). Every writer of connector_chunks, now and later, keeps them; an index's row
    // goes with its last chunk (D13: nothing of a deleted user's is left).
    id: "connectors-010-chunk-counts",
    up(db) {
      keepCounts(db, {
        counts: "connector_chunk_counts",
        of: "connector_chunks",
        rows: "total",
        sum: { name: "embedded", of: "embedded" },
        trigger: { prefix: "connector_chunks_counted", updated: "embedded" },
      });
    },
  },
  {
    // Each chunk's text to embed, sealed (bound to its record's row and place), as the reading
    // worker cut it when its record was read (D31): embedding reads it, never cutting its record
    // again on the serving thread. Chunks stored before have none: cut by the chunker once more.
    id: "connectors-011-chunk-texts",
    up(db) {
      db.exec("ALTER TABLE connector_chunks ADD COLUMN text BLOB");
    },
  },
  {
    // Each index's own BM25 statistics (D25, candidates.ts ownBm25): each record's length in
    // words (FTS5's, its docsize row), and each index's rows and their total length, counted as
    // they are written (triggers on connector_docs, as connector_chunk_counts): FTS5's bm25()
    // weighs lengths against the average of the whole table, every index's rows counted.
    id: "connectors-012-terms-counts",
    up(db) {
      db.exec("ALTER TABLE connector_docs ADD COLUMN terms_length INTEGER NOT NULL DEFAULT 0");
      const set = db.query("UPDATE connector_docs SET terms_length = ? WHERE doc = ?");
      for (const { doc } of db.query<{ doc: number }, []>("SELECT doc FROM connector_docs").all()) set.run(termsLength(db, doc), doc);
      keepCounts(db, {
        counts: "connector_terms_counts",
        of: "connector_docs",
        rows: "rows",
        sum: { name: "length", of: "terms_length" },
        trigger: { prefix: "connector_docs_counted", updated: "length" },
      });
    },
  },
  {
    // A record's owner, source and date by its number, apart from its sealed row (candidates.ts
    // DOCS_BY_DOC): a question's word search looks up every hit of each word in the table (its own
    // and other indexes', to count them), and a row of connector_docs holds the sealed record, one
    // leaf page or more each, a page read per hit; this index holds ~80 records a page. The Enron
    // bench's commonest word: 1,556 hits, 9.4 -> 2.9 ms (the lookups alone 11.4 -> 1.4).
    id: "connectors-013-docs-by-doc",
    up(db) {
      db.exec("CREATE INDEX connector_docs_by_doc ON connector_docs (doc, owner, source, record_date)");
    },
  },
  {
    // A record's chunks by its number with what a search asks of them (their place, whether
    // embedded; the chunk's number is the row's), apart from their sealed texts (connectors-011, ~730
    // bytes a chunk: ~5 rows a page): the best chunk of each word match (candidates.ts
    // bestChunksOf) and a date range's chunks read no row of text. Replaces the index by doc alone.
    id: "connectors-014-chunks-by-doc",
    up(db) {
      db.exec("DROP INDEX connector_chunks_doc");
      db.exec("CREATE INDEX connector_chunks_doc ON connector_chunks (doc, embedded, ord)");
    },
  },
  {
    // A record's number is never given again, as a chunk's (connectors-009): a put after the newest
    // record's removal took its number, and the search worker's candidates read before the removal
    // were taken for that row's (rank.ts stillShown knows rows by their numbers): the removed record
    // was shown. The highest number given, kept past its row (documents.ts nextDoc).
    id: "connectors-015-doc-numbers-once",
    up(db) {
      db.exec("CREATE TABLE connector_doc_numbers (given INTEGER NOT NULL)");
      db.exec("INSERT INTO connector_doc_numbers (given) SELECT coalesce(max(doc), 0) FROM connector_docs");
    },
  },
  {
    // The word index's generation (phrase-hits.ts): every write of a record, and so of its words,
    // changes it, in the writing transaction, whoever writes (another process on the folder too).
    id: "connectors-016-generation",
    up(db) {
      db.exec("CREATE TABLE connector_generation (n INTEGER NOT NULL)");
      db.exec("INSERT INTO connector_generation (n) VALUES (0)");
      for (const [name, event] of [
        ["in", "INSERT"],
        ["out", "DELETE"],
        ["changed", "UPDATE"],
      ])
        db.exec(`CREATE TRIGGER connector_generation_${name} AFTER ${event} ON connector_docs BEGIN
          UPDATE connector_generation SET n = n + 1;
        END`);
    },
  },
];

/** A table of per-owner counts that triggers keep as another table's rows are written. */
interface KeptCounts {
  /** The counts table, one row per owner. */
  counts: string;
  /** The table whose rows are counted. */
  of: string;
  /** The column of the counts table holding how many rows the owner has. */
  rows: string;
  /** The column of the counts table holding the sum of the counted table's column `of`. */
  sum: { name: string; of: string };
  /** The triggers' names: `${prefix}_in`, `${prefix}_out` and `${prefix}_${updated}`. */
  trigger: { prefix: string; updated: string };
}

/**
 * Makes `counts`, fills it from what `of` holds, and keeps it by triggers on every insert, delete
 * and change of owner or counted column: counts read at once instead of counted each question
 * (connectors-010, -012). A row whose owner has nothing left is deleted.
 */
function keepCounts(db: Database, k: KeptCounts): void {
  const { counts, of, rows, sum, trigger } = k;
  const add = `INSERT INTO ${counts} (owner, ${rows}, ${sum.name}) VALUES (NEW.owner, 1, NEW.${sum.of})
          ON CONFLICT (owner) DO UPDATE SET ${rows} = ${rows} + 1, ${sum.name} = ${sum.name} + excluded.${sum.name};`;
  const take = `UPDATE ${counts} SET ${rows} = ${rows} - 1, ${sum.name} = ${sum.name} - OLD.${sum.of} WHERE owner = OLD.owner;
        DELETE FROM ${counts} WHERE owner = OLD.owner AND ${rows} = 0;`;
  db.exec(`CREATE TABLE ${counts} (
        owner TEXT PRIMARY KEY,
        ${rows} INTEGER NOT NULL,
        ${sum.name} INTEGER NOT NULL
      ) WITHOUT ROWID`);
  db.exec(`INSERT INTO ${counts} (owner, ${rows}, ${sum.name}) SELECT owner, count(*), sum(${sum.of}) FROM ${of} GROUP BY owner`);
  db.exec(`CREATE TRIGGER ${trigger.prefix}_in AFTER INSERT ON ${of} BEGIN
        ${add}
      END`);
  db.exec(`CREATE TRIGGER ${trigger.prefix}_out AFTER DELETE ON ${of} BEGIN
        ${take}
      END`);
  db.exec(`CREATE TRIGGER ${trigger.prefix}_${trigger.updated} AFTER UPDATE OF ${sum.of}, owner ON ${of} BEGIN
        ${take}
        ${add}
      END`);
}
