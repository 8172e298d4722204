// The SQLite reader (a Bun Worker, started by sqlite-reader.ts): the statements of SQLite
// connectors (a search's windows over the rows, the rows read) run here, each connector on a
// read-only connection of its own, off the thread that serves requests (D31): 20 rows of 1 MB
// asked were ~50 ms of that thread's CPU a question in LIKE scans, at most ~20 ms a turn.
import { constants, Database } from "bun:sqlite";
import { checkDatabaseFiles } from "../paths";
import type { FromSqliteReader, ToSqliteReader } from "./sqlite-protocol";

declare const self: Worker;

const connections = new Map<number, Database>();

/** The connection of `m`, opened as the serving thread opens one (sqliteDriver): read only, following no link, its files checked again. */
function connection(m: Extract<ToSqliteReader, { type: "select" }>): Database {
  let db = connections.get(m.connection);
  if (!db) {
    checkDatabaseFiles(m.file);
    db = new Database(m.file, constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_NOFOLLOW);
    db.exec("PRAGMA query_only = ON");
    connections.set(m.connection, db);
  }
  return db;
}

self.onmessage = (event: MessageEvent<ToSqliteReader>) => {
  const m = event.data;
  if (m.type === "close") {
    connections.get(m.connection)?.close();
    connections.delete(m.connection);
    return;
  }
  let reply: FromSqliteReader;
  try {
    reply = {
      seq: m.seq,
      rows: connection(m)
        .query<Record<string, unknown>, never[]>(m.sql)
        .all(...(m.params as never[])),
    };
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    reply = { seq: m.seq, error: error instanceof Error ? error.message : String(error), ...(typeof code === "string" ? { code } : {}) };
  }
  self.postMessage(reply);
};
