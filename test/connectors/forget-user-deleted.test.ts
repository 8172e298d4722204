// Attack: a user re-points their connector (PATCH of its path) during its first sync and deletes
// their data while the PATCH waits for the old sync to stop. The deletion closes the user's live
// connectors and drops their rows; the PATCH then answers with view(d, true), which makes a new
// live instance for a user who no longer exists: it stays in the registry (and reads their folder).
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bearer, req, tempDir, testApp } from "../helpers";

setDefaultTimeout(180_000);

type App = Awaited<ReturnType<typeof testApp>>;
let t: App | undefined;

afterAll(async () => {
  await t?.services.close();
});

const USER = "alice";

function maildir(root: string, name: string, n: number): string {
  const dir = join(root, USER, name);
  mkdirSync(join(dir, "cur"), { recursive: true });
  for (let i = 0; i < n; i++)
    writeFileSync(
      join(dir, "cur", `${i}.x:2,S`),
      `Message-ID: <${i}@example.com>\r\nFrom: jeff@example.com\r\nDate: Tue, 12 Jun 2001 10:00:00 +0000\r\nSubject: Harbour ${i}\r\n\r\nThe harbour audit is due.\r\n`,
    );
  return dir;
}

test("attack: delete_my_data while a PATCH waits for the old sync leaves no live connector of the deleted user", async () => {
  const roots = tempDir("corpus-forget-deleted-");
  const old = maildir(roots, "old", 3000);
  const other = maildir(roots, "other", 50);
  t = await testApp({ CORPUS_CONNECTOR_ROOTS: join(roots, "{user}") });
  const registry = t.services.connectors;
  const token = (await t.services.auth.issuer.issue(USER, ["corpus:search", "connectors:write"])).token;
  await registry.add(USER, { id: "mail", kind: "maildir", config: { path: old } } as any);
  const first = registry.active(USER)[0]!.connector as any;
  for (let i = 0; i < 600 && !((first.progress().reading?.done ?? 0) > 100); i++) await Bun.sleep(5);

  const patching = registry.update(USER, "mail", { config: { path: other } } as any).then(
    () => "changed",
    (e) => (e as Error).constructor.name,
  );
  const deleted = await t.app.handle(req("/v1/delete_my_data", { method: "DELETE", headers: bearer(token) }));
  expect(deleted.status).toBe(200);
  await patching;
  await Bun.sleep(300);
  const live = [...((registry as any).live as Map<string, unknown>).keys()];
  expect({ live, rows: registry.rowsOf(USER) }).toEqual({ live: [], rows: 0 });
});
