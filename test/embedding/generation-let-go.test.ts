// Attack on the embedding service's deletion bookkeeping (service.ts deleteOwner / remove /
// finish): a deletion bumps the owner's generation while a job of theirs waits or runs, so the job
// stores nothing (D25: "nothing of theirs is written after", even under a key they get later).
// The entry is now let go in remove() once the owner has no job left, and finish() calls remove()
// *before* it asks stillWanted(): the owner's last job finds the generation gone (0 again, the
// one it was queued in) and stores its vectors after all. No model: the worker is a stand-in.
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { UserKeys } from "../../src/crypto/user-keys";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { EmbeddingService } from "../../src/embedding/service";
import type { EmbedJob } from "../../src/embedding/worker-client";
import { MIGRATIONS } from "../../src/migrations";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";

/** A service whose worker computes nothing until released: a job stays "in the worker". */
function held() {
  const dir = tempDir();
  const db = openDatabase(dir, MIGRATIONS);
  const keys = new UserKeys(db, randomBytes(32));
  const service = new EmbeddingService(db, keys, dir);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let started!: () => void;
  const inWorker = new Promise<void>((r) => (started = r));
  const vector = () => new Float32Array(EMBEDDING_DIM).fill(0.5);
  const worker = {
    alive: true,
    async run(job: EmbedJob) {
      started();
      await gate;
      job.texts.forEach((_, i) => job.set(i, vector()));
    },
    async embed(texts: string[]) {
      started();
      await gate;
      return texts.map(vector);
    },
  };
  (service as unknown as { load(): Promise<unknown> }).load = () => Promise.resolve(worker);
  return { db, keys, service, release, inWorker };
}

test.each([
  ["background job", "background", "alice's old harbour audit notes"],
  ["question", "urgent", "what did the harbour audit find"],
] as const)(
  "attack: a deleted user's %s, in the worker at the deletion, is cached under the key they are given after",
  async (_, priority, text) => {
    const { keys, service, release, inWorker } = held();
    keys.keyFor("alice");
    const job = service.embed("alice", [text], priority);
    await inWorker;
    // Alice deletes her data (users/deletion.ts: the cache, then her key), and comes back: her next
    // answer makes her a new key.
    service.deleteOwner("alice");
    keys.destroy("alice");
    keys.keyFor("alice");
    release();
    await job;
    await service.idle();
    // Was 1: the deleted alice's text cached after her deletion, under her new key.
    expect(service.rowsOf("alice")).toBe(0);
    await service.close();
  },
);

test("attack: a user's job queued after their deletion, behind one from before it, is never cached", async () => {
  const { keys, service, release, inWorker } = held();
  keys.keyFor("alice");
  const before = service.embed("alice", ["alice's old harbour audit notes"], "background");
  await inWorker;
  service.deleteOwner("alice");
  keys.destroy("alice");
  keys.keyFor("alice");
  // Back, she asks again: a job of her new data, queued in her new generation.
  const after = service.embed("alice", ["alice's new pallet inventory"], "background");
  release();
  await Promise.all([before, after]);
  await service.idle();
  // Was [false, false]: the second job, the owner's last, let the generation go in remove() and
  // then found itself of another generation than the (forgotten) current one: nothing stored.
  expect(service.cached("alice", ["alice's old harbour audit notes", "alice's new pallet inventory"]).map(Boolean)).toEqual([false, true]);
  await service.close();
});
