// Attack on embedding ahead (src/connectors/embed-ahead.ts): it embeds a SQL connector's newest
// rows 64 at a time, but read all AHEAD_RECORDS (5,000) of them at once, whole, and held them
// until the last page was embedded (minutes of the worker). What it held followed the rows' size,
// with no bound: a table of 5,000 rows of 20 kB held ~110 MB of the request thread's heap while
// the first page embedded (the budget of the whole process is 200 MB, src/limits/memory.ts); rows of
// 200 kB would have held 1 GB. Now only rows of at most NEWEST_ROW_BYTES are read ahead, and each
// page's rows are let go once embedded.
import { Database } from "bun:sqlite";
import { expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { AHEAD_PAGE, AHEAD_RECORDS } from "../../src/connectors/embed-ahead";
import { NEWEST_ROW_BYTES } from "../../src/connectors/sql/connector";
import { tempDir, testApp } from "../helpers";

setDefaultTimeout(120_000);

/** Rows of 20 kB are left to the questions that meet them; rows just under the bound are read ahead. */
for (const ROW_CHARS of [20_000, NEWEST_ROW_BYTES - 100]) {
  test(`attack: embedding a table's newest rows ahead (5,000 of ${ROW_CHARS} characters) holds a bounded part of them while it embeds 64`, async () => {
    const roots = tempDir("corpus-ahead-memory-");
    mkdirSync(join(roots, "alice"), { recursive: true });
    const file = join(roots, "alice", "docs.sqlite");
    const db = new Database(file);
    db.exec("CREATE TABLE doc (id INTEGER PRIMARY KEY, title TEXT, body TEXT)");
    db.exec(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${AHEAD_RECORDS})
     INSERT INTO doc SELECT i, 'doc ' || i, hex(randomblob(${ROW_CHARS / 2})) FROM n`,
    );
    db.close();
    const t = await testApp({ CORPUS_CONNECTOR_ROOTS: join(roots, "{user}") });
    const { services } = t;
    try {
      Bun.gc(true);
      const before = process.memoryUsage().heapUsed;
      await services.connectors.add("alice", {
        id: "docs",
        kind: "sql",
        config: { url: file, tables: [{ name: "doc", id: "id", title: "title", text: ["body"] }] },
      } as never);
      // The first page is in the embedding queue (rows under the bound), or none will be (over it).
      await Promise.race([services.embeddings.queued(), services.connectors.embeddedAhead()]);
      if (ROW_CHARS < NEWEST_ROW_BYTES) expect(services.embeddings.pending).toBeGreaterThan(0);
      Bun.gc(true);
      const heldMB = (process.memoryUsage().heapUsed - before) / 1e6;
      // A page's rows are 64 x 20 kB = 1.3 MB; a few pages' worth would be bounded. Was ~112 MB:
      // the text of all 5,000 rows.
      expect((AHEAD_PAGE * ROW_CHARS) / 1e6).toBeLessThan(2);
      expect(heldMB).toBeLessThan(32);
    } finally {
      await services.close();
    }
  });
}
