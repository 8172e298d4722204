// Indexing beside serving (issue 14): a question never waits for a whole folder to be read. It
// waits for a due sync at most syncWaitMs, then is answered from what is indexed so far, and the
// connector's progress says how far reading has come (the query's notes say it to the user).
import { expect, test } from "bun:test";
import { type FolderSource, IndexedFolderConnector, SYNC_WAIT_MS } from "../../src/connectors/indexed-source";
import type { SourceRecord } from "../../src/connectors/types";
import { ask, localIndexes } from "../support/local-index";

const record = (id: string, content: string): SourceRecord => ({
  id,
  title: id,
  content,
  source_url: `file:///mail/${id}`,
  date: null,
  type: "email",
  path: id,
  metadata: {},
});

/** Two files; the second is read only once `release` is called (a long folder still being read). */
function slowSource() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const source: FolderSource = {
    scan: () => [
      { source: "a.eml", size: 1, mtime: 1 },
      { source: "b.eml", size: 1, mtime: 1 },
    ],
    async read(entry) {
      if (entry.source === "b.eml") await gate;
      return [record(entry.source, `pipeline capacity auction ${entry.source}`)];
    },
  };
  return { source, release };
}

test("a question during the first sync is answered from what is read, and progress says how far", async () => {
  const { source, release } = slowSource();
  const { indexFor } = localIndexes();
  const c = new IndexedFolderConnector("maildir", "/", indexFor("alice/mail"), source, { check: (p) => p, syncWaitMs: 20 });
  // Never read whole while the question waits: it gets the first file, not a wait for the second.
  const hits = await c.rank(ask(["pipeline"]));
  expect(hits.map((h) => h.record.id)).toEqual(["a.eml"]);
  expect(c.progress()).toMatchObject({ reading: { done: 1, total: 2 } });
  expect((await c.health()).status).toBe("indexing");
  release();
  await c.sync();
  expect((await c.rank(ask(["pipeline"]))).map((h) => h.record.id).sort()).toEqual(["a.eml", "b.eml"]);
  expect(c.progress().reading).toBeUndefined();
  await c.close();
});

test("a sync that ends within the wait is waited for: a small folder's first question finds all of it", async () => {
  const { source, release } = slowSource();
  release();
  const { indexFor } = localIndexes();
  const c = new IndexedFolderConnector("maildir", "/", indexFor("alice/mail"), source, { check: (p) => p });
  expect(SYNC_WAIT_MS).toBeGreaterThanOrEqual(500);
  expect((await c.rank(ask(["pipeline"]))).map((h) => h.record.id).sort()).toEqual(["a.eml", "b.eml"]);
  await c.close();
});

test("a connector closed during a sync writes nothing more: not the file in hand, not the rest", async () => {
  const { source, release } = slowSource();
  const { indexFor } = localIndexes();
  const index = indexFor("alice/mail");
  const c = new IndexedFolderConnector("maildir", "/", index, source, { check: (p) => p, syncWaitMs: 0 });
  // a.eml is written; b.eml's read is held.
  expect((await c.rank(ask(["pipeline"]))).map((h) => h.record.id)).toEqual(["a.eml"]);
  const closing = c.close();
  release();
  await closing;
  expect(index.count()).toBe(1);
  // Asked again, it reads nothing more.
  await c.sync();
  expect(index.count()).toBe(1);
});

test("attack: a connector closed in the turn after its last file removes nothing (vanished files stay until a sync that is not stopped)", async () => {
  const { indexFor } = localIndexes();
  const index = indexFor("alice/mail");
  let entries = [
    { source: "a.eml", size: 1, mtime: 1 },
    { source: "x.eml", size: 1, mtime: 1 },
  ];
  let onLastRead = () => {};
  const source: FolderSource = {
    scan: () => entries,
    async read(entry) {
      onLastRead();
      return [record(entry.source, `pipeline capacity auction ${entry.source}`)];
    },
  };
  const c = new IndexedFolderConnector("maildir", "/", index, source, { check: (p) => p });
  await c.sync();
  expect(index.count()).toBe(2);
  // A rescan: a.eml changed, x.eml vanished. The connector is closed (removed, re-pointed, its
  // user deleted, the server closing) during the turn of the event loop the sync takes after a.eml.
  entries = [{ source: "a.eml", size: 1, mtime: 2 }];
  let closing: Promise<void> | undefined;
  let recordsWhenClosed = -1;
  onLastRead = () => {
    setImmediate(() => {
      recordsWhenClosed = index.count();
      closing = c.close();
    });
  };
  await c.sync();
  await new Promise((resolve) => setImmediate(resolve));
  await closing;
  // Once stopped, "nothing more read, written or removed" (syncIndex): what the index held when
  // the connector was closed is what it holds after (x.eml's record is not removed by a closed connector).
  expect(recordsWhenClosed).toBeGreaterThan(0);
  expect(index.count()).toBe(recordsWhenClosed);
});
