// The SQLite reader (src/connectors/sql/sqlite-worker.ts) wedged on demand, for the stuck
// timeout's test: while a file WEDGED lies beside the database, a statement never answers (its
// thread spins, as one stuck in a statement would); without it, statements are the real reader's.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import "../../src/connectors/sql/sqlite-worker";
import type { ToSqliteReader } from "../../src/connectors/sql/sqlite-protocol";

declare const self: Worker;

export const WEDGED = "WEDGED";

const answer = self.onmessage!;
self.onmessage = (event: MessageEvent<ToSqliteReader>) => {
  if (event.data.type === "select" || event.data.type === "windows")
    while (existsSync(join(dirname(event.data.file), WEDGED))) Bun.sleepSync(5);
  return answer.call(self, event);
};
