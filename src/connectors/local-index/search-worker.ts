// The search worker (a Bun Worker, started by searcher.ts): the local indexes' SQL of a question
// (FTS5's BM25, sqlite-vec's nearest chunks, the sealed rows found) on a connection of its own,
// off the thread that serves requests (D31). It holds no key: the serving thread blinds the
// words, rotates the vector and opens the records.
import { Database } from "bun:sqlite";
import { loadSqliteVec, readThroughMapping } from "../../store/database";
import { candidates } from "./candidates";
import { HeldVectors } from "./held-vectors";
import { PhraseHitsMemo } from "./phrase-hits";
import { type FromSearcher, packCandidates, type ToSearcher } from "./search-protocol";

declare const self: Worker;

let open: { file: string; db: Database; mapped?: boolean } | undefined;
/** The indexes' vectors, held while the worker lives (held-vectors.ts): searched in memory, read again only where they changed. */
const held = new HeldVectors();
/** Phrases' hits, kept while the index is unchanged (phrase-hits.ts). */
const phraseHits = new PhraseHitsMemo();

/** The database at `file`, opened once (read only: the serving thread's connection writes). */
function database(m: ToSearcher): Database {
  if (open?.file !== m.file) {
    open?.db.close();
    held.clear();
    phraseHits.clear();
    const db = new Database(m.file, { readwrite: true, create: false, strict: true });
    db.exec("PRAGMA query_only = ON");
    db.exec("PRAGMA busy_timeout = 5000");
    loadSqliteVec(db, m.dataDir);
    open = { file: m.file, db };
  }
  if (open.mapped !== m.mapped) {
    readThroughMapping(open.db, m.mapped);
    open.mapped = m.mapped;
  }
  return open.db;
}

self.onmessage = (event: MessageEvent<ToSearcher>) => {
  const m = event.data;
  let reply: FromSearcher;
  try {
    const packed = packCandidates(candidates({ db: database(m), owner: m.owner }, m.asked, held, phraseHits));
    reply = { seq: m.seq, ...packed };
    self.postMessage(reply, [packed.numbers.buffer, packed.rows.buffer]);
  } catch (error) {
    reply = { seq: m.seq, error: error instanceof Error ? error.message : String(error) };
    self.postMessage(reply);
  }
};
