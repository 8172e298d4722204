// Issue 35 (D31): a live SQL row's chunks are scored by the vectors of the embedding cache, each
// read from SQLite and opened with its owner's key. 20 long rows asked were ~280 vectors read and
// opened on the serving thread for every question; they are kept in memory per owner, asker and
// row while the row's chunks are the same, and let go when the asker is deleted.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { connectorsSettled, tempDir, testApp } from "../helpers";
import { operatorFile } from "../support/sources";

const ROWS = 20;
const dir = tempDir("corpus-row-vectors-");
const file = join(dir, "shop.db");
const db = new Database(file);
db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT, body TEXT)");
// Each row cut into ~5 chunks.
for (let i = 1; i <= ROWS; i++)
  db.query("INSERT INTO notes VALUES (?, ?, ?)").run(i, `note ${i} porto`, `${"lorem ipsum dolor sit amet ".repeat(100)} porto`);
db.close();

let t: Awaited<ReturnType<typeof testApp>>;
/** Vectors of the embedding cache opened (decrypted) since the last call. */
let opened = 0;

beforeAll(async () => {
  t = await testApp({
    CORPUS_CONNECTORS_FILE: operatorFile(
      [{ id: "shop", kind: "sql", config: { url: file, tables: [{ name: "notes", id: "id", title: "title", text: ["body"] }] } }],
      dir,
    ),
  });
  // Alice's data key, as her first token makes it: her cache keeps what her questions embed.
  t.services.userKeys.keyFor("alice");
  const openFor = t.services.userKeys.openFor.bind(t.services.userKeys);
  t.services.userKeys.openFor = (user, sealed, purpose) => {
    if (purpose.startsWith("embedding-cache/")) opened++;
    return openFor(user, sealed, purpose);
  };
  await t.services.connectors.list("alice");
  await connectorsSettled(t.services, "alice");
});
afterAll(() => t.services.close());

const ask = () => t.services.query.run({ user: "alice", question: "notes about porto", perConnector: 30 });
const openedBy = async () => {
  opened = 0;
  const outcome = await ask();
  return { outcome, opened };
};

test("a question over 20 long rows seen before opens none of their chunks' vectors again, and ranks them as before", async () => {
  const first = await ask();
  expect(first.chunks.filter((c) => c.connectorId === "shop").length).toBe(ROWS);
  // Seen for the first time: embedded in the background.
  expect(first.notes.some((n) => n.includes("seen for the first time"))).toBe(true);
  await t.services.embeddings.idle();
  const read = await openedBy();
  // Every chunk of every row read and opened (the asker's cache: the operator's holds none of them): ~5 a row.
  expect(read.opened).toBeGreaterThan(ROWS * 3);
  expect(read.outcome.chunks.every((c) => c.dense !== undefined)).toBe(true);
  const kept = await openedBy();
  // Only the question's own vector and the archive's few returned chunks: none of the rows'.
  expect(kept.opened).toBeLessThan(ROWS);
  const scores = (o: typeof kept.outcome) => o.chunks.map((c) => [c.record.id, c.chunkIndex, c.dense]);
  expect(scores(kept.outcome)).toEqual(scores(read.outcome));
});

test("a row changed is read again; the asker deleted, every row's vectors are let go with their cache", async () => {
  const before = await openedBy();
  expect(before.opened).toBeLessThan(ROWS);
  const w = new Database(file);
  w.query("UPDATE notes SET body = ? WHERE id = 1").run(`changed ${"lorem ipsum dolor sit amet ".repeat(100)} porto`);
  w.close();
  const changed = await openedBy();
  // Its chunks' vectors read again (those of the texts it shares with the rows before, the new one
  // queued), the other rows' not.
  expect(changed.opened).toBeGreaterThan(before.opened);
  expect(changed.opened).toBeLessThan(before.opened + 10);
  await t.services.embeddings.idle();
  t.services.embeddings.deleteOwner("alice");
  const after = await ask();
  // Nothing of alice's kept in memory either: every row is new to her again.
  expect(after.notes).toContain(`${ROWS} records seen for the first time were ranked by their words; their meaning is being indexed`);
});
