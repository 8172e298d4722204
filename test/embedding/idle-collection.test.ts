// D31: nothing holds the serving thread for its memory's sake. Once the embedding service had no
// job for 2 s, the serving thread ran a full collection of its heap and trimmed the C heap (~44
// ms of its CPU in one turn, measured while a hostile folder was indexed); the memory is the
// embedding worker's, which collects and trims on its own thread when it is idle. Counted here:
// the serving thread's full collections after a question, once the timers of a long quiet ran.
import { afterAll, expect, jest, setDefaultTimeout, spyOn, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { UserKeys } from "../../src/crypto/user-keys";
import { EmbeddingService } from "../../src/embedding/service";
import { MIGRATIONS } from "../../src/migrations";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";

// The model loads in its worker: longer than 5 s on a busy two-core machine.
setDefaultTimeout(60_000);

const QUIET_MS = 60_000;

let service: EmbeddingService | undefined;
afterAll(async () => {
  jest.useRealTimers();
  await service?.close();
});

test("attack: after a question and a long quiet, the serving thread runs no full collection of its own", async () => {
  const dir = tempDir();
  const db = openDatabase(dir, MIGRATIONS);
  service = new EmbeddingService(db, new UserKeys(db, randomBytes(32)), dir, { threads: 1 });
  await service.warm();
  const collections = spyOn(Bun, "gc");
  // The quiet's timers on a clock of the test's own: a worker's messages are no timers, and still come.
  jest.useFakeTimers();
  try {
    const [vector] = await service.embed("alice", ["where is the team dinner"]);
    expect(vector).toHaveLength(384);
    for (let i = 0; i < 10; i++) await Promise.resolve();
    jest.advanceTimersByTime(QUIET_MS);
    expect(collections).not.toHaveBeenCalled();
  } finally {
    jest.useRealTimers();
    collections.mockRestore();
  }
});
