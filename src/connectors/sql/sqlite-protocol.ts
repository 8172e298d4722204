// Messages between the serving thread (sqlite-reader.ts) and the SQLite reader (sqlite-worker.ts).
import type { WindowedQuery } from "./windows";

/**
 * One statement of a connector's connection (`connection`: its number; `file`: the database's
 * checked real path); or a search's read of a table in windows (windows.ts selectInWindows), all
 * of them run there and answered once, within `budgetMs` from its arrival; `abort`: the search
 * gave up, the read stops at its next window.
 */
export type ToSqliteReader =
  | { type: "select"; seq: number; connection: number; file: string; sql: string; params: unknown[] }
  | { type: "windows"; seq: number; connection: number; file: string; query: WindowedQuery; budgetMs: number }
  | { type: "abort"; seq: number }
  | { type: "close"; connection: number };

/**
 * A statement's (or a read's) rows, or why there are none (SQLite's message and code); or that a
 * read turned between its windows (`turned`): the reader is not stuck, its answer is yet to come.
 */
export type FromSqliteReader =
  | { seq: number; rows: Array<Record<string, unknown>> }
  | { seq: number; error: string; code?: string }
  | { seq: number; turned: true };
