// The embedded store is the local index's vectors as they are written today: what EmbeddedIndex
// stores (rotated by the connector's key, D25) the store finds by owner and connector, nearest
// first, by the cosine of the model's vectors; an owner's drop takes theirs and no one else's.
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { EmbeddedIndex, indexKeysFor } from "../../src/connectors/local-index";
import { UserKeys } from "../../src/crypto/user-keys";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { MIGRATIONS } from "../../src/migrations";
import { openDatabase } from "../../src/store/database";
import { SqliteVectorStore } from "../../src/vectors/sqlite";
import { tempDir } from "../helpers";

const CHUNKS = 8;
const direction = (i: number) => {
  const v = new Float32Array(EMBEDDING_DIM);
  v[i] = 1;
  v[EMBEDDING_DIM - 1] = 0.5;
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};

async function indexed(db: ReturnType<typeof openDatabase>, keys: UserKeys, user: string, connector: string) {
  const chunker = (r: { content: string }) => r.content.split(" ").slice(0, CHUNKS);
  const index = new EmbeddedIndex(db, `${user}/${connector}`, indexKeysFor(keys, user, connector, true), chunker);
  const content = Array.from({ length: CHUNKS }, (_, i) => `part${i}`).join(" ");
  await index.put({ source: "r1", size: content.length, mtime: 1 }, [
    { id: "r1", title: "R", content, source_url: "file:///r1", date: null, type: "file", path: "r1", metadata: {} },
  ]);
  const batch = index.pendingChunks(CHUNKS);
  index.setVectors(
    batch,
    batch.map((c) => direction(c.ord)),
  );
  return batch.map((c) => c.chunk);
}

test("the local index's vectors, found by owner and connector, as the model's cosine ranks them", async () => {
  const db = openDatabase(tempDir(), MIGRATIONS);
  const keys = new UserKeys(db, randomBytes(32));
  const mail = await indexed(db, keys, "alice", "mail");
  const bobs = await indexed(db, keys, "bob", "mail");
  const store = new SqliteVectorStore(db);
  const rotation = indexKeysFor(keys, "alice", "mail", false).rotation();
  // Nearest the 4th chunk's direction: it first, at the cosine of the vectors before rotation.
  const query = rotation.apply(direction(3));
  const found = await store.knn("alice", query, 3, { connectors: ["mail"] });
  expect(found[0]).toEqual({ id: mail[3]!, connector: "mail", similarity: expect.closeTo(1, 5) });
  const cosine = direction(3).reduce((s, x, i) => s + x * direction(0)[i]!, 0);
  expect(found[1]!.similarity).toBeCloseTo(cosine, 5);
  expect((await store.knn("alice", query, 20)).map((n) => n.id).sort((a, b) => a - b)).toEqual(mail);
  expect(await store.count("alice")).toBe(CHUNKS);

  expect(await store.dropOwner("alice")).toBe(CHUNKS);
  expect(await store.count("alice")).toBe(0);
  expect(await store.knn("alice", query, 20)).toEqual([]);
  expect((await store.knn("bob", query, 20)).map((n) => n.id).sort((a, b) => a - b)).toEqual(bobs);
  db.close();
});
