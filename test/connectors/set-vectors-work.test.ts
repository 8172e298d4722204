// D31: storing a batch's vectors checks that each chunk is still of the record as it was sealed
// when read. Compared in SQL once per chunk, a 4 M character mail's seal was read and compared 64
// times a batch (~0.25 s of the serving thread's CPU, measured while the hostile sources
// embedded); now once per record and batch. Counted in BLOB bytes moved, not timed. The batch's
// vectors are rotated before its transaction, with turns of the event loop between (counted).
import { expect, spyOn, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { EmbeddedIndex, indexKeysFor } from "../../src/connectors/local-index";
import { rotatedInTurns, setVectors } from "../../src/connectors/local-index/vectors";
import { TURN_MS, Turns } from "../../src/connectors/turns";
import { VectorRotation } from "../../src/crypto/rotation";
import { UserKeys } from "../../src/crypto/user-keys";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { MIGRATIONS } from "../../src/migrations";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";
import { countingBlobBytes } from "../support/blob-bytes";
import { mostPerTurn } from "../support/turn-watch";

const CHUNKS = 64;
const CHARS = 400_000;

test("a batch of a long record's chunks reads and compares its seal once, not once per chunk", async () => {
  const raw = openDatabase(tempDir(), MIGRATIONS);
  const counted = countingBlobBytes(raw);
  const keys = new UserKeys(raw, randomBytes(32));
  const slice = CHARS / CHUNKS;
  const chunker = (r: { content: string }) => Array.from({ length: CHUNKS }, (_, i) => r.content.slice(i * slice, (i + 1) * slice));
  const index = new EmbeddedIndex(counted.db, "alice/mail", indexKeysFor(keys, "alice", "mail", true), chunker);
  const content = Array.from({ length: CHARS / 10 }, (_, i) => `w${String(i).padStart(7, "0")} `).join("");
  await index.put({ source: "m1", size: CHARS, mtime: 1 }, [
    { id: "m1", title: "Long", content, source_url: "file:///m1", date: null, type: "email", path: "m1", metadata: {} },
  ]);
  const batch = index.pendingChunks(CHUNKS);
  expect(batch).toHaveLength(CHUNKS);
  const sealedBytes = batch[0]!.sealed.byteLength;
  expect(sealedBytes).toBeGreaterThan(100_000);

  counted.reset();
  index.setVectors(
    batch,
    batch.map(() => new Float32Array(EMBEDDING_DIM).fill(0.05)),
  );
  expect(index.progress()).toEqual({ total: CHUNKS, embedded: CHUNKS });
  // Was 64 seals (one per chunk): the record's, read once, and the vectors (1.5 kB each).
  expect(counted.bytes()).toBeLessThan(2 * sealedBytes);
  raw.close();
});

test("a batch's vectors are rotated a budget of work at a time before its transaction, which rotates none (D31)", async () => {
  const db = openDatabase(tempDir(), MIGRATIONS);
  const keys = indexKeysFor(new UserKeys(db, randomBytes(32)), "alice", "mail", true);
  const chunker = (r: { content: string }) => r.content.split(" ");
  const ctx = { db, owner: "alice/mail", keys, chunker };
  const index = new EmbeddedIndex(db, ctx.owner, keys, chunker);
  const words = Array.from({ length: CHUNKS }, (_, i) => `w${i}`).join(" ");
  await index.put({ source: "m1", size: 1, mtime: 1 }, [
    { id: "m1", title: "Long", content: words, source_url: "file:///m1", date: null, type: "email", path: "m1", metadata: {} },
  ]);
  const batch = index.pendingChunks(CHUNKS);
  const vectors = batch.map(() => new Float32Array(EMBEDDING_DIM).fill(0.05));
  const applied = spyOn(VectorRotation.prototype, "apply");
  try {
    // The clock counts rotations (as if each took 1 ms); a watcher counts those between two turns.
    const perTurn = mostPerTurn(() => applied.mock.calls.length);
    const rotated = await rotatedInTurns(ctx, vectors, new Turns(() => applied.mock.calls.length));
    const most = perTurn.stop();
    // Was all 64 in setVectors' one turn.
    expect(applied).toHaveBeenCalledTimes(CHUNKS);
    expect(most).toBeLessThanOrEqual(TURN_MS + 1);
    setVectors(ctx, batch, vectors, rotated);
    expect(applied).toHaveBeenCalledTimes(CHUNKS);
  } finally {
    applied.mockRestore();
  }
  expect(index.progress()).toEqual({ total: CHUNKS, embedded: CHUNKS });
  db.close();
});
