// D31: storing a batch's vectors checks that each chunk is still of the record as it was sealed
// when read. Compared in SQL once per chunk, a 4 M character mail's seal was read and compared 64
// times a batch (~0.25 s of the serving thread's CPU, measured while the hostile sources
// embedded); now once per record and batch. Counted in BLOB bytes moved, not timed.
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { indexKeysFor, LocalIndex } from "../../src/connectors/local-index";
import { UserKeys } from "../../src/crypto/user-keys";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { MIGRATIONS } from "../../src/migrations";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";
import { countingBlobBytes } from "../support/blob-bytes";

const CHUNKS = 64;
const CHARS = 400_000;

test("a batch of a long record's chunks reads and compares its seal once, not once per chunk", async () => {
  const raw = openDatabase(tempDir(), MIGRATIONS);
  const counted = countingBlobBytes(raw);
  const keys = new UserKeys(raw, randomBytes(32));
  const slice = CHARS / CHUNKS;
  const chunker = (r: { content: string }) => Array.from({ length: CHUNKS }, (_, i) => r.content.slice(i * slice, (i + 1) * slice));
  const index = new LocalIndex(counted.db, "alice/mail", indexKeysFor(keys, "alice", "mail", true), chunker);
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
