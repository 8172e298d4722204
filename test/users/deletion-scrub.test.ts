// A deletion's later steps (D13, D29), a user's or a connector's: the word index rewritten without the deleted entries and
// the WAL emptied. They are owed in the deletion's own transaction, so a process that dies (or
// fails) between the commit and those steps does them at its next start, and a failure does not
// fail the deletion's answer. The failure is injected into the purge (as an I/O error would come).
import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bearer, postJson, req, tempDir, testApp } from "../helpers";

const owedScrubs = (t: Awaited<ReturnType<typeof testApp>>) =>
  t.db.query<{ n: number }, []>("SELECT count(*) AS n FROM scrub_owed").get()!.n;

async function deleteWithFailingPurge(dir: string) {
  const t = await testApp({ CORPUS_DATA_DIR: dir, CORPUS_WEBHOOK_ALLOW_PRIVATE: "true" });
  const token = (await t.services.auth.issuer.issue("erin", ["connectors:write", "corpus:search"])).token;
  expect((await t.app.handle(postJson("/v1/webhooks", { url: "http://127.0.0.1:9/hook" }, bearer(token)))).status).toBe(200);
  t.services.connectors.purgeRemovedTerms = () => {
    throw new Error("disk I/O error");
  };
  const r = await t.app.handle(req("/v1/delete_my_data", { method: "DELETE", headers: bearer(token) }));
  expect(r.status).toBe(200);
  expect(((await r.json()) as { status: string }).status).toBe("deletion_confirmed");
  expect(t.logs.records().some((l) => l.message === "deletion scrub owed; tried again shortly" && l.error === "Error")).toBe(true);
  expect(JSON.stringify(t.logs.records())).not.toContain("disk I/O error");
  expect(owedScrubs(t)).toBe(1);
  const health = (await (await t.app.handle(req("/api/connectors/health"))).json()) as { pending: Record<string, number> };
  expect(health.pending).toEqual({ archive_vectors: 0, connector_chunks: 0, webhook_deliveries: 1, deletion_steps: 1 });
  return t;
}

test("a scrub that failed after the commit is done at the next start", async () => {
  const dir = tempDir();
  const first = await deleteWithFailingPurge(dir);
  // The process ends without paying (as if killed between the commit and the steps).
  await first.services.close();

  const second = await testApp({ CORPUS_DATA_DIR: dir });
  expect(owedScrubs(second)).toBe(1);
  second.services.owed.start();
  expect(owedScrubs(second)).toBe(0);
  expect(second.logs.records().find((l) => l.message === "owed work at start")).toMatchObject({ deletion_steps: 1, webhook_deliveries: 1 });
  await second.services.close();
});

test("in the same process, the next check of owed work does it", async () => {
  const t = await deleteWithFailingPurge(tempDir());
  t.services.owed.start();
  // Still failing at start: it stays owed, and says so.
  expect(owedScrubs(t)).toBe(1);
  delete (t.services.connectors as { purgeRemovedTerms?: unknown }).purgeRemovedTerms;
  await Bun.sleep(0);
  t.services.owed.check();
  expect(owedScrubs(t)).toBe(0);
  await t.services.close();
});

test("a connector's removal owes its scrub the same way: the removal answers, the next start pays", async () => {
  const dir = tempDir();
  const roots = tempDir("corpus-scrub-roots-");
  mkdirSync(join(roots, "frank", "docs"), { recursive: true });
  writeFileSync(join(roots, "frank", "docs", "note.txt"), "The quarterly plan for the Lisbon office.\n");
  const env = { CORPUS_DATA_DIR: dir, CORPUS_CONNECTOR_ROOTS: join(roots, "{user}") };
  const t = await testApp(env);
  const token = (await t.services.auth.issuer.issue("frank", ["connectors:write", "connectors:read"])).token;
  const added = await t.app.handle(
    postJson("/v1/connectors", { id: "docs", kind: "files", config: { path: join(roots, "frank", "docs") } }, bearer(token)),
  );
  expect(added.status).toBe(200);
  t.services.connectors.purgeRemovedTerms = () => {
    throw new Error("disk I/O error");
  };
  const removed = await t.app.handle(req("/v1/connectors/docs", { method: "DELETE", headers: bearer(token) }));
  expect(removed.status).toBe(200);
  expect(owedScrubs(t)).toBe(1);
  // The row and the index went in the same transaction as the debt.
  expect(t.db.query("SELECT count(*) AS n FROM connectors").get()).toEqual({ n: 0 });
  expect(t.db.query("SELECT count(*) AS n FROM connector_docs").get()).toEqual({ n: 0 });
  await t.services.close();
  const again = await testApp(env);
  again.services.owed.start();
  expect(owedScrubs(again)).toBe(0);
  await again.services.close();
});
