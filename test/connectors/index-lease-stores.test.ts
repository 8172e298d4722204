import { expect, test } from "bun:test";
import { type FolderSource, INDEX_LEASE_MS, IndexedFolderConnector, indexLeaseName } from "../../src/connectors/indexed-source";
import type { SourceRecord } from "../../src/connectors/types";
import type { Leases } from "../../src/jobs/leases";
import { LEASE_STORES, type LeaseStore } from "../support/lease-stores";
import { localIndexes } from "../support/local-index";
import { storeSuite } from "../support/shared-database";
import { soon } from "../support/wait";

const LEASE = indexLeaseName("alice/mail");

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

/** Two files, counted as they are read; with a gate, the second waits for `release` (a node stalled mid-sync). */
function source(gated: boolean) {
  let release!: () => void;
  const gate = gated ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
  const read: string[] = [];
  const folder: FolderSource = {
    scan: () => [
      { source: "a.eml", size: 1, mtime: 1 },
      { source: "b.eml", size: 1, mtime: 1 },
    ],
    async read(entry) {
      read.push(entry.source);
      if (entry.source === "b.eml") await gate;
      return [record(entry.source)];
    },
  };
  return { folder, read, release: () => release?.() };
}

/** A node's connector of alice's mail: its own index, the lease store given. */
function nodeConnector(name: string, leases: Leases, folder: FolderSource) {
  const { indexFor } = localIndexes();
  return new IndexedFolderConnector("maildir", "/", indexFor("alice/mail"), folder, {
    check: (p) => p,
    lease: { leases, holder: name, name: LEASE },
  });
}

function suite(name: string, open: () => Promise<LeaseStore>) {
  storeSuite(name, open, (store) => {
    test("while node A indexes, node B's sync reads nothing; once A released the lease, B's next sync indexes", async () => {
      const clock = { t: Date.now() };
      const onA = source(true);
      const onB = source(false);
      const a = nodeConnector("node-a", store().leases(clock), onA.folder);
      await soon("node-a reading", () => onA.read.length === 2);
      expect(await store().leases(clock).holderOf(LEASE)).toBe("node-a");
      const b = nodeConnector("node-b", store().leases(clock), onB.folder);
      await b.sync();
      expect(onB.read).toEqual([]);
      expect((await b.health()).status).not.toBe("error");
      onA.release();
      await a.sync();
      expect(await store().leases(clock).holderOf(LEASE)).toBeUndefined();
      await b.sync();
      expect(onB.read.sort()).toEqual(["a.eml", "b.eml"]);
      expect(await store().leases(clock).holderOf(LEASE)).toBeUndefined();
      await Promise.all([a.close(), b.close()]);
    });

    test("a node stalled past its lease: the other claims the connector and indexes it", async () => {
      const clock = { t: Date.now() + 10 * INDEX_LEASE_MS };
      const onA = source(true);
      const onB = source(false);
      const a = nodeConnector("node-a", store().leases(clock), onA.folder);
      await soon("node-a reading", () => onA.read.length === 2);
      const b = nodeConnector("node-b", store().leases(clock), onB.folder);
      await b.sync();
      expect(onB.read).toEqual([]);
      clock.t += INDEX_LEASE_MS; // node-a renewed no more: its lease has expired
      await b.sync();
      expect(onB.read.sort()).toEqual(["a.eml", "b.eml"]);
      onA.release();
      await Promise.all([a.close(), b.close()]);
    });
  });
}

for (const [name, open] of LEASE_STORES) suite(name, open);
