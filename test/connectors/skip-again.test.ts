// A source skipped by a bound measured over the whole process (the reader's memory, D31) is read
// once more before it is kept skipped: another user's work may have grown the process meanwhile,
// and a skip is kept across restarts until the file changes. A bound of the source's own (its
// size, its CPU time) is kept at once.
import { expect, test } from "bun:test";
import { type FolderSource, IndexedFolderConnector } from "../../src/connectors/indexed-source";
import { neededTooMuchMemory } from "../../src/connectors/reading/reader";
import { type SourceRecord, SourceSkipped } from "../../src/connectors/types";
import { ask, localIndexes } from "../support/local-index";

const record = (id: string): SourceRecord => ({
  id,
  title: id,
  content: `pipeline capacity auction ${id}`,
  source_url: `file:///mail/${id}`,
  date: null,
  type: "email",
  path: id,
  metadata: {},
});

/** A one-file source whose reads fail with `failures` in turn, then succeed. */
function failingSource(failures: SourceSkipped[]) {
  let reads = 0;
  const source: FolderSource = {
    scan: () => [{ source: "a.eml", size: 1, mtime: 1 }],
    async read(entry) {
      const failure = failures[reads++];
      if (failure) throw failure;
      return [record(entry.source)];
    },
  };
  return { source, reads: () => reads };
}

const memory = () => new SourceSkipped(neededTooMuchMemory(1024 * 2 ** 20), { again: true });

test("a memory skip is read once more: the second read's records are indexed, nothing kept skipped", async () => {
  const { source, reads } = failingSource([memory()]);
  const { indexFor } = localIndexes();
  const c = new IndexedFolderConnector("maildir", "/", indexFor("alice/mail"), source, { check: (p) => p });
  await c.sync();
  expect(reads()).toBe(2);
  expect((await c.rank(ask(["pipeline"]))).map((h) => h.record.id)).toEqual(["a.eml"]);
  expect((await c.health()).reason ?? "").not.toContain("skipped");
  await c.close();
});

test("a memory skip twice over is kept; a source's own bound is kept at its first read", async () => {
  for (const failures of [[memory(), memory()], [new SourceSkipped("is larger than 50 MB")]]) {
    const { source, reads } = failingSource(failures);
    const { indexFor } = localIndexes();
    const c = new IndexedFolderConnector("maildir", "/", indexFor("alice/mail"), source, { check: (p) => p });
    await c.sync();
    expect(reads()).toBe(failures.length);
    expect((await c.health()).reason).toContain("skipped 1 file");
    await c.close();
  }
});
