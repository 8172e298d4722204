// Attack: a connector removed while its first sync reads a large folder, with a question asked
// meanwhile. remove() takes the live instance out of the registry, then waits for its sync to end
// (close() awaits it; the sync does not stop between files) before the row and index are dropped.
// A question in that window finds the row still there and starts a second instance, which the
// removal never closes: it keeps writing the removed connector's index after it was dropped, and
// a connector added again under the same id is served by that old instance (the old folder).
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir, testApp } from "../helpers";

setDefaultTimeout(180_000);

type App = Awaited<ReturnType<typeof testApp>>;
let t: App | undefined;

afterAll(async () => {
  await t?.services.close();
});

const mail = (i: number, subject: string, body: string) =>
  `Message-ID: <${i}@example.com>\r\nFrom: jeff@example.com\r\nTo: alice@example.com\r\nDate: Tue, 12 Jun 2001 10:00:00 +0000\r\nSubject: ${subject} ${i}\r\n\r\n${body}\r\n`;

function maildir(root: string, name: string, n: number, subject: string, body: string): string {
  const dir = join(root, "alice", name);
  mkdirSync(join(dir, "cur"), { recursive: true });
  for (let i = 0; i < n; i++) writeFileSync(join(dir, "cur", `${i}.x:2,S`), mail(i, subject, body));
  return dir;
}

const ask = { terms: ["harbour"], phrases: [] as string[], limit: 50 };

test("attack: a question while a connector is removed mid-sync leaves no instance, no index rows, and no old folder behind its id", async () => {
  const roots = tempDir("corpus-remove-sync-");
  const old = maildir(roots, "old", 3000, "Harbour audit", "The harbour audit is due on Friday.");
  const fresh = maildir(roots, "new", 1, "Lighthouse", "The lighthouse keeper retires.");
  t = await testApp({ CORPUS_CONNECTOR_ROOTS: join(roots, "{user}") });
  const registry = t.services.connectors;
  await registry.add("alice", { id: "mail", kind: "maildir", config: { path: old } } as any);
  // Part of the folder read: the first sync is under way.
  const first = registry.active("alice")[0]!.connector as any;
  for (let i = 0; i < 600 && !((first.progress().reading?.done ?? 0) > 100); i++) await Bun.sleep(5);
  expect(first.progress().reading?.done ?? 0).toBeGreaterThan(0);

  const removing = registry.remove("alice", "mail");
  // A question arrives meanwhile (gather asks registry.active for the user's connectors).
  const during = registry.active("alice").map((a) => a.connector as any);
  await removing;
  for (const c of during) await c.sync?.();
  await Bun.sleep(50);

  expect(registry.ids("alice")).toEqual([]);
  const indexRowsLeft = registry.rowsOf("alice");

  // The same id again, on another folder: what it answers is that folder's, not the old one's.
  await registry.add("alice", { id: "mail", kind: "maildir", config: { path: fresh } } as any);
  const again = registry.active("alice")[0]!.connector as any;
  await again.sync();
  const found = (await again.search(ask)) as Array<{ title: string }>;
  expect({ indexRowsLeft, oldFolderRecords: found.length, sameInstance: again === during[0] }).toEqual({
    indexRowsLeft: 0,
    oldFolderRecords: 0,
    sameInstance: false,
  });
});
