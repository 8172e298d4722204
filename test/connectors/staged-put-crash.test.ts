// Issue 35 item 1 (D31): a process killed (SIGKILL) while a source's new records are staged, between
// two of their bounded transactions, leaves the old records as they were, answering alone; the next
// sync removes what was staged, reads the source again and ends with the new records only.
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { syncIndex } from "../../src/connectors/local-index";
import { RECORDS_PER_TRANSACTION } from "../../src/connectors/local-index/documents";
import { tempDir } from "../helpers";
import { ask } from "../support/local-index";
import { ENTRY, generation, NEW_RECORDS, OLD_RECORDS, OWNER, openIndex } from "../support/staged-put-child";

const CHILD = join(import.meta.dir, "..", "support", "staged-put-child.ts");

async function child(dir: string, key: Buffer, mode: "old" | "new") {
  const proc = Bun.spawn([process.execPath, CHILD, dir, key.toString("hex"), mode], { stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  return { code: proc.exitCode, signal: proc.signalCode, stdout, stderr };
}

test("attack: SIGKILL between two staged transactions leaves the old records; the next sync ends with the new ones and nothing staged", async () => {
  expect(NEW_RECORDS).toBeGreaterThan(2 * RECORDS_PER_TRANSACTION);
  const dir = tempDir("corpus-staged-crash-");
  const key = randomBytes(32);
  expect(await child(dir, key, "old")).toMatchObject({ code: 0, stderr: "" });
  const killed = await child(dir, key, "new");
  expect({ signal: killed.signal, stdout: killed.stdout }).toEqual({ signal: "SIGKILL", stdout: "" });

  const { db, index } = openIndex(dir, key);
  const rows = () => db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM connector_docs WHERE owner = ?").get(OWNER)!.n;
  const marked = () => db.query<{ n: number }, []>("SELECT count(*) AS n FROM connector_hidden").get()!.n;
  // Killed mid-staging: some staged (hidden), not all; the old records answer alone.
  expect(rows()).toBeGreaterThan(OLD_RECORDS);
  expect(rows()).toBeLessThan(OLD_RECORDS + NEW_RECORDS);
  expect(marked()).toBe(1);
  expect(index.count()).toBe(OLD_RECORDS);
  expect(
    index
      .search(ask(["harbour"], { limit: 10_000 }))
      .map((r) => r.id)
      .sort(),
  ).toEqual(
    generation("old", OLD_RECORDS)
      .map((r) => r.id)
      .sort(),
  );

  // The next start's sync: the source changed (its size and mtime are the old ones), read again.
  const result = await syncIndex(index, [{ ...ENTRY, mtime: 2 }], async () => generation("new", NEW_RECORDS));
  expect(result.read).toBe(1);
  expect(index.count()).toBe(NEW_RECORDS);
  expect({ rows: rows(), marked: marked() }).toEqual({ rows: NEW_RECORDS, marked: 0 });
  expect(db.query("SELECT count(*) AS n FROM connector_chunks").get()).toEqual({ n: NEW_RECORDS });
  const found = index.search(ask(["harbour"], { limit: 10_000 })).map((r) => r.id);
  expect(found.length).toBe(NEW_RECORDS);
  expect(found.every((id) => id.startsWith("new-"))).toBe(true);
  expect(db.query("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
  db.close();
}, 120_000);
