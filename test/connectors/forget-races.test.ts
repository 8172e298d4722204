// Attacks on removing a connector while its first sync reads a large folder (registry forget()):
// a question meanwhile, two removals at once, a re-pointing PATCH during a removal, the user's
// deletion during a PATCH. Before: a question started a second live instance that no removal
// closed (it wrote the dropped index and served the old folder under a re-added id); the first
// of two removals to end unhid the connector while the other still ran; a PATCH made a live
// instance of a connector, or of a user, already gone.
import { expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bearer, req, tempDir } from "../helpers";
import { type App, appPerTest } from "../support/app-per-test";

setDefaultTimeout(180_000);

const newApp = appPerTest();
let t: App | undefined;

const mail = (i: number, subject: string, body: string) =>
  `Message-ID: <${i}@example.com>\r\nFrom: jeff@example.com\r\nTo: alice@example.com\r\nDate: Tue, 12 Jun 2001 10:00:00 +0000\r\nSubject: ${subject} ${i}\r\n\r\n${body}\r\n`;

function maildir(root: string, name: string, n: number, subject: string, body: string): string {
  const dir = join(root, "alice", name);
  mkdirSync(join(dir, "cur"), { recursive: true });
  for (let i = 0; i < n; i++) writeFileSync(join(dir, "cur", `${i}.x:2,S`), mail(i, subject, body));
  return dir;
}

async function midSync(n = 200) {
  const roots = tempDir("corpus-forget-race-");
  const old = maildir(roots, "old", n, "Harbour audit", "The harbour audit is due on Friday.");
  const other = maildir(roots, "other", 1, "Pier", "The pier is closed.");
  const fresh = maildir(roots, "new", 1, "Lighthouse", "The lighthouse keeper retires.");
  t = await newApp({ CORPUS_CONNECTOR_ROOTS: join(roots, "{user}") });
  const registry = t.services.connectors;
  await registry.add("alice", { id: "mail", kind: "maildir", config: { path: old } } as any);
  // Its first sync is under way: it began reading when the connector was made, and reads a file
  // a turn of the event loop at most; add() answers a turn or two later (1 of 3,000 read then,
  // as of 200), so 200 are far from read. 3,000 took the file 15 s of the unit suite.
  const first = (await registry.active("alice"))[0]!.connector as any;
  const reading = first.progress().reading;
  expect(reading.done).toBeLessThan(reading.total);
  return { registry, old, other, fresh };
}

test("attack: a question while a connector is removed mid-sync leaves no instance, no index rows, and no old folder behind its id", async () => {
  const { registry, fresh } = await midSync();
  const removing = registry.remove("alice", "mail");
  // A question arrives meanwhile (gather asks registry.active for the user's connectors).
  const during = (await registry.active("alice")).map((a) => a.connector as any);
  await removing;
  for (const c of during) await c.sync?.();
  expect(await registry.ids("alice")).toEqual([]);
  const indexRowsLeft = registry.rowsOf("alice");
  // The same id again, on another folder: what it answers is that folder's, not the old one's.
  await registry.add("alice", { id: "mail", kind: "maildir", config: { path: fresh } } as any);
  const again = (await registry.active("alice"))[0]!.connector as any;
  await again.sync();
  const found = (await again.search({ terms: ["harbour"], phrases: [], limit: 50 })) as unknown[];
  expect({ indexRowsLeft, oldFolderRecords: found.length, sameInstance: again === during[0] }).toEqual({
    indexRowsLeft: 0,
    oldFolderRecords: 0,
    sameInstance: false,
  });
});

test("attack: delete_my_data while a PATCH waits for the old sync leaves no live connector of the deleted user", async () => {
  const { registry, other } = await midSync();
  const token = (await t!.services.auth.issuer.issue("alice", ["corpus:search", "connectors:write"])).token;
  const patching = registry.update("alice", "mail", { config: { path: other } } as any).then(
    () => "changed",
    (e) => (e as Error).constructor.name,
  );
  const deleted = await t!.app.handle(req("/v1/delete_my_data", { method: "DELETE", headers: bearer(token) }));
  expect(deleted.status).toBe(200);
  // Which ends first depends on where the old sync was when asked to stop (between files): the
  // PATCH is refused (the user went meanwhile), or the instance it made is closed by the deletion.
  expect(["ConnectorNotFound", "changed"]).toContain(await patching);
  const live = [...((registry as any).live as Map<string, unknown>).keys()];
  expect({ live, rows: await registry.rowsOf("alice") }).toEqual({ live: [], rows: 0 });
});

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
  const after = await registry.ids("alice");
  expect({ added, kept: added === "added" ? after : ["mail"] }).toEqual({ added, kept: ["mail"] });
});

test("attack: PATCH (re-point) during a DELETE leaves no live instance and no index rows of the removed connector", async () => {
  const { registry, other } = await midSync();
  const removing = registry.remove("alice", "mail");
  const patching = registry.update("alice", "mail", { config: { path: other } } as any).catch((e) => e);
  await patching;
  // A question meanwhile: the connector being removed must not be shown (and so not started).
  const shownDuring = await registry.ids("alice");
  await removing;
  const live = (registry as any).live as Map<string, unknown>;
  expect({ shownDuring, ids: await registry.ids("alice"), live: [...live.keys()], rows: await registry.rowsOf("alice") }).toEqual({
    shownDuring: [],
    ids: [],
    live: [],
    rows: 0,
  });
});
