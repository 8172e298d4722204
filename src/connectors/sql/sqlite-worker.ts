// The SQLite reader (a Bun Worker, started by sqlite-reader.ts): the statements of SQLite
// connectors (a search's windows over the rows, the rows read) run here, each connector on a
// read-only connection of its own, off the thread that serves requests (D31): 20 rows of 1 MB
// asked were ~50 ms of that thread's CPU a question in LIKE scans, at most ~20 ms a turn.
// A search's read of a table runs here whole, its windows and the rows found (selectInWindows),
// and is answered once: one message each way a table, not one a statement (~6 a question).
import { constants, Database } from "bun:sqlite";
import { checkDatabaseFiles } from "../paths";
import type { FromSqliteReader, ToSqliteReader } from "./sqlite-protocol";
import { selectInWindows } from "./windows";

declare const self: Worker;

const connections = new Map<number, Database>();
/** The reads under way, by their message's number: aborted when the search gives up. */
const reads = new Map<number, AbortController>();

/** The connection of `m`, opened as the serving thread opens one (sqliteDriver): read only, following no link, its files checked again. */
function connection(m: { connection: number; file: string }): Database {
  let db = connections.get(m.connection);
  if (!db) {
    checkDatabaseFiles(m.file);
    db = new Database(m.file, constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_NOFOLLOW);
    db.exec("PRAGMA query_only = ON");
    connections.set(m.connection, db);
  }
  return db;
}

const rowsOf = (db: Database, sql: string, params: unknown[]) =>
  db.query<Record<string, unknown>, never[]>(sql).all(...(params as never[]));

/** SQLite's refusal as the asking thread's connection throws it: its message and code. */
function failure(seq: number, error: unknown): FromSqliteReader {
  const code = (error as { code?: unknown } | null)?.code;
  return { seq, error: error instanceof Error ? error.message : String(error), ...(typeof code === "string" ? { code } : {}) };
}

async function read(m: Extract<ToSqliteReader, { type: "windows" }>): Promise<FromSqliteReader> {
  const stop = new AbortController();
  reads.set(m.seq, stop);
  try {
    const turned = () => self.postMessage({ seq: m.seq, turned: true } satisfies FromSqliteReader);
    const bounds = { deadline: performance.now() + m.budgetMs, signal: stop.signal, turned };
    // The connection asked again at each statement: one closed meanwhile is opened again, as a statement's is.
    return { seq: m.seq, rows: await selectInWindows(async (sql, params) => rowsOf(connection(m), sql, params), m.query, bounds) };
  } catch (error) {
    return failure(m.seq, error);
  } finally {
    reads.delete(m.seq);
  }
}

self.onmessage = (event: MessageEvent<ToSqliteReader>) => {
  const m = event.data;
  if (m.type === "close") {
    connections.get(m.connection)?.close();
    connections.delete(m.connection);
    return;
  }
  if (m.type === "abort") return void reads.get(m.seq)?.abort();
  if (m.type === "windows") return void read(m).then((reply) => self.postMessage(reply));
  let reply: FromSqliteReader;
  try {
    reply = { seq: m.seq, rows: rowsOf(connection(m), m.sql, m.params) };
  } catch (error) {
    reply = failure(m.seq, error);
  }
  self.postMessage(reply);
};
