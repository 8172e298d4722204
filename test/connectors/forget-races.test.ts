// Attack: two removals (or a removal and a re-pointing PATCH) of one connector at once. The
// registry's `forgetting` set is a Set: the first forget() to finish takes the key out while the
// other is still closing the live instance. Meanwhile the connector is shown again, a question
// starts a new instance that no one closes, and an add-again of the id is refused by nothing, so
// the slower removal then drops the new connector's row and index (its 201 already answered).
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir, testApp } from "../helpers";

setDefaultTimeout(180_000);

type App = Awaited<ReturnType<typeof testApp>>;
let t: App | undefined;

afterEach(async () => {
  await t?.services.close();
  t = undefined;
});

const mail = (i: number, subject: string, body: string) =>
  `Message-ID: <${i}@example.com>\r\nFrom: jeff@example.com\r\nTo: alice@example.com\r\nDate: Tue, 12 Jun 2001 10:00:00 +0000\r\nSubject: ${subject} ${i}\r\n\r\n${body}\r\n`;

function maildir(root: string, name: string, n: number, subject: string, body: string): string {
  const dir = join(root, "alice", name);
  mkdirSync(join(dir, "cur"), { recursive: true });
  for (let i = 0; i < n; i++) writeFileSync(join(dir, "cur", `${i}.x:2,S`), mail(i, subject, body));
  return dir;
}

async function midSync(n = 3000) {
  const roots = tempDir("corpus-forget-race-");
  const old = maildir(roots, "old", n, "Harbour audit", "The harbour audit is due on Friday.");
  const other = maildir(roots, "other", 1, "Pier", "The pier is closed.");
  const fresh = maildir(roots, "new", 1, "Lighthouse", "The lighthouse keeper retires.");
  t = await testApp({ CORPUS_CONNECTOR_ROOTS: join(roots, "{user}") });
  const registry = t.services.connectors;
  await registry.add("alice", { id: "mail", kind: "maildir", config: { path: old } } as any);
  const first = registry.active("alice")[0]!.connector as any;
  for (let i = 0; i < 600 && !((first.progress().reading?.done ?? 0) > 100); i++) await Bun.sleep(5);
  expect(first.progress().reading?.done ?? 0).toBeGreaterThan(0);
  return { registry, old, other, fresh };
}

test("attack: DELETE twice at once, then the id added again: the new connector survives", async () => {
  const { registry, fresh } = await midSync();
  const a = registry.remove("alice", "mail");
  const b = registry.remove("alice", "mail").catch((e) => e);
  await b; // the second finishes first (nothing to close) and takes the key out of `forgetting`
  // Refused while a removal of the id is still under way, or, if accepted, kept.
  const added = await registry
    .add("alice", { id: "mail", kind: "maildir", config: { path: fresh } } as any)
    .then(() => "added")
    .catch((e) => (e as Error).constructor.name);
  await a;
  const after = registry.ids("alice");
  expect({ added, kept: added === "added" ? after : ["mail"] }).toEqual({ added, kept: ["mail"] });
});

test("attack: PATCH (re-point) during a DELETE leaves no live instance and no index rows of the removed connector", async () => {
  const { registry, other } = await midSync();
  const removing = registry.remove("alice", "mail");
  const patching = registry.update("alice", "mail", { config: { path: other } } as any).catch((e) => e);
  await patching;
  // A question meanwhile: the connector being removed must not be shown (and so not started).
  const shownDuring = registry.ids("alice");
  await removing;
  await Bun.sleep(300);
  const live = (registry as any).live as Map<string, unknown>;
  expect({ shownDuring, ids: registry.ids("alice"), live: [...live.keys()], rows: registry.rowsOf("alice") }).toEqual({
    shownDuring: [],
    ids: [],
    live: [],
    rows: 0,
  });
});

test("attack: a label-only PATCH while a re-pointing PATCH waits for the old sync: the new folder is indexed whole", async () => {
  const { registry, other } = await midSync();
  const repointing = registry.update("alice", "mail", { config: { path: other } } as any);
  // view(d) of the label change makes the instance now, while the index is still to be dropped.
  const relabel = registry.update("alice", "mail", { label: "Mine" } as any);
  await Promise.all([repointing, relabel]);
  const c = registry.active("alice")[0]!.connector as any;
  await c.sync();
  await Bun.sleep(6_000); // past RESCAN_MS: a rescan sees nothing changed
  await c.sync();
  const found = (await c.search({ terms: ["pier"], phrases: [], limit: 50 })) as unknown[];
  expect(found.length).toBe(1);
});
