// The memory budget per thread (D31): the process over its budget because of a worker's memory
// makes that worker collect, on its own thread, and never the serving thread's long work (a
// folder's sync), whose full collections could give none of it back and held every request
// meanwhile. Integration: it starts a worker.
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { EmbeddedIndex, indexKeysFor, indexMigrations, syncIndex } from "../../src/connectors/local-index";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { MEMORY_BUDGET_BYTES, ownMemoryBytes } from "../../src/limits/memory";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";
import { mailRecord } from "../support/local-index";

const MB = 1024 * 1024;

test("attack: a worker's memory over the budget is collected by that worker; a folder's sync on the serving thread forces no collection for it (D31)", async () => {
  const worker = new Worker(join(import.meta.dir, "../support/memory-holding-worker.ts"));
  const reply = () => new Promise<unknown>((resolve) => worker.addEventListener("message", (e) => resolve(e.data), { once: true }));
  const db = openDatabase(tempDir(), [...cryptoMigrations, ...indexMigrations]);
  const index = new EmbeddedIndex(db, "alice/mail", indexKeysFor(new UserKeys(db, randomBytes(32)), "alice", "mail", true), (r) => [
    r.content,
  ]);
  const entries = Array.from({ length: 20 }, (_, i) => ({ source: `m${i}`, size: 1, mtime: 1 }));
  const real = Bun.gc;
  let collections = 0;
  try {
    const holding = reply();
    worker.postMessage(Math.ceil((MEMORY_BUDGET_BYTES * 1.5) / MB));
    await holding;
    expect(ownMemoryBytes()).toBeGreaterThan(MEMORY_BUDGET_BYTES);
    Bun.gc = (force?: boolean) => {
      collections++;
      return real(force);
    };
    const result = await syncIndex(index, entries, async (e) => [
      mailRecord(e.source, "2020-03-01T10:00:00.000Z", `harbour audit ${e.source}`, { from: "a@example.com" }),
    ]);
    expect(result.read).toBe(entries.length);
    // Was a full collection of this thread's heap (Bun.gc(true)) after the first file and every 100 ms after.
    expect(collections).toBe(0);
    Bun.gc = real;
    const checked = reply();
    worker.postMessage("check");
    expect(await checked).toBe(true);
  } finally {
    Bun.gc = real;
    await worker.terminate();
    db.close();
  }
});
