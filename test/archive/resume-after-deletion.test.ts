// Attack on Archive.resumePending (the owed archive vectors, D29) and a user's deletion (D13).
// resumePending skips a user deleted meanwhile: embedPending's comment says such a user "ends
// here (NoUserKey)", and resumePending catches NoUserKey. But the embedding service now cancels
// a deleted owner's queued background job (EmbeddingCancelled, service.ts generation): that
// error is no NoUserKey, so the whole pass throws; every other user's owed vectors in it are left
// pending, and the owed-work guard logs the pass as a failure (ERROR "background job failed").
import { expect, setDefaultTimeout, test } from "bun:test";
import { forgetArchiveVectors } from "../../src/archive/store";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { bearer, req, tokenFor } from "../helpers";
import { type App, appPerTest } from "../support/app-per-test";
import { archivedChunk } from "../support/archived-chunk";

setDefaultTimeout(120_000);

const newApp = appPerTest();
let t: App;

test("attack: a user deleted while owed archive vectors are resumed makes the pass fail; the other users' vectors stay owed", async () => {
  t = await newApp();
  const { services } = t;
  const token = await tokenFor(services, "alice", ["corpus:search", "connectors:write", "connectors:read"]);
  const some = new Float32Array(EMBEDDING_DIM).fill(1 / Math.sqrt(EMBEDDING_DIM));
  // Alice's answer archived first, bob's next; then owed again (as after a model change).
  services.archive.store(
    "alice",
    "qry_alice",
    "where is the lighthouse",
    [archivedChunk("c1", "Lighthouse", "the keeper retires")],
    [some],
  );
  services.archive.store(
    "bob",
    "qry_bob",
    "when did the pallets arrive",
    [archivedChunk("c1", "Harbour", "the pallets on day four")],
    [some],
  );
  forgetArchiveVectors(services.db);
  expect(services.archive.pending()).toBe(2);

  // Another background job is in the worker (the model loading): alice's batch waits behind it.
  const other = services.embeddings.embed("carol", ["an unrelated background text"], "background").catch(() => {});
  const resumed = services.archive.resumePending().then(
    (n) => ({ ok: true, n }),
    (error: unknown) => ({ ok: false, error: error instanceof Error ? error.constructor.name : String(error) }),
  );
  expect(services.embeddings.pending).toBe(2);

  // Alice deletes her data while her owed batch waits.
  const deleted = await t.app.handle(req("/v1/delete_my_data", { method: "DELETE", headers: bearer(token) }));
  expect(deleted.status).toBe(200);

  const outcome = await resumed;
  await other;
  await services.embeddings.idle();
  const bobEmbedded = services.db
    .query<{ n: number }, []>("SELECT count(*) AS n FROM archive_chunks WHERE user_id = 'bob' AND embedded = 1")
    .get()!.n;
  // Was { outcome: { ok: false, error: "EmbeddingCancelled" }, bobEmbedded: 0 }: the deletion of
  // alice, which the pass is meant to skip, failed it, and bob's owed vector was not stored.
  expect({ outcome, bobEmbedded }).toEqual({ outcome: { ok: true, n: 1 }, bobEmbedded: 1 });
});
