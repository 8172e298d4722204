// A user's rotation of vectors (D25) is made a few rows a turn wherever a question needs it first
// (D31): made at once (VectorRotation.fromKey, 384x384 Gram-Schmidt), it held the serving thread
// ~20-40 ms quiet, ~90 ms under load (the hostile-sources bench's profile), for the first
// question of each store after a start: a local index's search, the archive's record of the
// answer. Counted: no rotation made at once on those paths, the same hits as before.
import { afterEach, expect, spyOn, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { closeSearches, indexKeysFor, indexMigrations, LocalIndex } from "../../src/connectors/local-index";
import { VectorRotation } from "../../src/crypto/rotation";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { ask } from "../../src/questions/ask";
import { testApp } from "../helpers";
import { mailRecord } from "../support/local-index";
import { migratedDatabase } from "../support/migrated";

const spies: Array<{ mockRestore(): void }> = [];
afterEach(() => {
  for (const s of spies.splice(0)) s.mockRestore();
});

/** Counts rotations made at once from here on. */
function countingAtOnce(): () => number {
  const spy = spyOn(VectorRotation, "fromKey");
  spies.push(spy);
  return () => spy.mock.calls.length;
}

const unit = (i: number) => {
  const v = new Float32Array(EMBEDDING_DIM);
  v[i] = 1;
  return v;
};

test("attack: a local index's first question after a start makes the owner's rotation in turns; the same hits", async () => {
  const db = migratedDatabase([...cryptoMigrations, ...indexMigrations]);
  const master = randomBytes(32);
  const before = new LocalIndex(db, "alice/mail", indexKeysFor(new UserKeys(db, master), "alice", "mail", true), (r) => [r.content]);
  for (let i = 0; i < 5; i++)
    await before.put({ source: `m${i}`, size: 1, mtime: 1 }, [mailRecord(`m${i}`, "2020-03-01T10:00:00.000Z", `harbour audit ${i}`)]);
  await before.prepareRotation();
  const pending = before.pendingChunks(100);
  before.setVectors(
    pending,
    pending.map((_, i) => unit(i)),
  );
  // After a start: the same data key, no rotation kept.
  const after = new LocalIndex(db, "alice/mail", indexKeysFor(new UserKeys(db, master), "alice", "mail", true), (r) => [r.content]);
  const atOnce = countingAtOnce();
  try {
    const request = { terms: ["harbour"], phrases: [], limit: 5, vector: unit(2) };
    const hits = await after.rank(request);
    expect(atOnce()).toBe(0);
    const shown = (h: typeof hits) => h.map((x) => [x.record.id, x.dense, x.chunk]);
    expect(shown(hits)).toEqual(shown(before.rankHere(request)));
    // The record of the chunk along the question's vector is the nearest by meaning.
    const nearest = hits.reduce((a, b) => ((b.dense ?? -1) > (a.dense ?? -1) ? b : a));
    expect(nearest.record.id).toBe("m2");
  } finally {
    await closeSearches(db);
  }
});

test("attack: an answer archived makes the archive's rotation in turns, for a user with a key and for a new one", async () => {
  const t = await testApp();
  try {
    // A key, no rotation made yet: as after a start.
    t.services.userKeys.sealFor("alice", "x", "test");
    const atOnce = countingAtOnce();
    const asked = await ask(t.services, { user: "alice", question: "where is the harbour audit", perConnector: 5, limit: 5 });
    expect(asked.queryId).toBeTruthy();
    expect(atOnce()).toBe(0);
    expect(t.services.archive.rowsOf("alice")).toBeGreaterThan(0);
    // A user's first question makes their key, and the rotation in turns too.
    await ask(t.services, { user: "bob", question: "where is the harbour audit", perConnector: 5, limit: 5 });
    expect(atOnce()).toBe(0);
    expect(t.services.archive.rowsOf("bob")).toBeGreaterThan(0);
  } finally {
    await t.services.close();
  }
});
