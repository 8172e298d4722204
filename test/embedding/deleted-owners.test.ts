// Attack on the embedding service's bookkeeping of deletions (service.ts deleteOwner): each
// deletion bumps the owner's generation, so that a job queued before it stores nothing. The
// entry is kept for ever, also once no job of that owner is left: a long-running server keeps
// one entry per user it ever deleted (storeCounts, beside it, is dropped at the deletion).
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { UserKeys } from "../../src/crypto/user-keys";
import { EmbeddingService } from "../../src/embedding/service";
import { MIGRATIONS } from "../../src/migrations";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";

test("attack: the generations of deleted owners with no job left are never let go", async () => {
  const dir = tempDir();
  const db = openDatabase(dir, MIGRATIONS);
  const service = new EmbeddingService(db, new UserKeys(db, randomBytes(32)), dir);
  for (let i = 0; i < 10_000; i++) service.deleteOwner(`user-${i}`);
  expect(service.pending).toBe(0);
  const kept = (service as unknown as { generations: Map<string, number> }).generations.size;
  // Was 10000: one entry per user ever deleted, though no job of theirs waits to be told.
  expect(kept).toBe(0);
  await service.close();
  db.close();
});
