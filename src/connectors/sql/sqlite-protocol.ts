// Messages between the serving thread (sqlite-reader.ts) and the SQLite reader (sqlite-worker.ts).

/** One statement of a connector's connection (`connection`: its number; `file`: the database's checked real path). */
export type ToSqliteReader =
  | { type: "select"; seq: number; connection: number; file: string; sql: string; params: unknown[] }
  | { type: "close"; connection: number };

/** A statement's rows, or why there are none (SQLite's message and code). */
export type FromSqliteReader = { seq: number; rows: Array<Record<string, unknown>> } | { seq: number; error: string; code?: string };
