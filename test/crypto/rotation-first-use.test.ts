// A user's rotation of vectors (D25) is made a few rows a turn wherever a question needs it first
// (D31): made at once (VectorRotation.fromKey, 384x384 Gram-Schmidt), it held the serving thread
// ~20-40 ms quiet, ~90 ms under load (the hostile-sources bench's profile), for the first
// question of each store after a start: a local index's search, the archive's record of the
// answer. Counted: no rotation made at once on those paths, the same hits as before.
import { afterEach, expect, spyOn, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { closeSearches, EmbeddedIndex, indexKeysFor, indexMigrations } from "../../src/connectors/local-index";
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
  const before = new EmbeddedIndex(db, "alice/mail", indexKeysFor(new UserKeys(db, master), "alice", "mail", true), (r) => [r.content]);
  for (let i = 0; i < 5; i++)
    await before.put({ source: `m${i}`, size: 1, mtime: 1 }, [mailRecord(`m${i}`, "2020-03-01T10:00:00.000Z", `harbour audit ${i}`)]);
  await before.prepareRotation();
  const pending = before.pendingChunks(100);
  before.setVectors(
    pending,
    pending.map((_, i) => unit(i)),
  );
  // After a start: the same data key, no rotation kept.
  const after = new EmbeddedIndex(db, "alice/mail", indexKeysFor(new UserKeys(db, master), "alice", "mail", true), (r) => [r.content]);
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

/** Counts rotations made in turns from here on. */
function countingInTurns(): () => number {
  const spy = spyOn(VectorRotation, "fromKeyInTurns");
  spies.push(spy);
  return () => spy.mock.calls.length;
}

test("attack: twenty questions at once after a start make each store's rotation once, not once each", async () => {
  const db = migratedDatabase(cryptoMigrations);
  const keys = new UserKeys(db, randomBytes(32));
  const inTurns = countingInTurns();
  const atOnce = countingAtOnce();
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  // As the load bench's twenty clients after a start: four stores each asked by every question.
  const scopes = ["connector/mail", "connector/invoices", "connector/receipts", "archive"];
  const asked = Array.from({ length: 20 }, () => scopes.map((scope) => keys.prepareRotation("alice", scope, EMBEDDING_DIM, turn)));
  await Promise.all(asked.flat());
  expect(inTurns()).toBe(scopes.length);
  // Every one of them finds its rotation kept: none is made again, at once or in turns.
  for (const scope of scopes) {
    expect(keys.prepareRotation("alice", scope, EMBEDDING_DIM, turn)).toBeUndefined();
    keys.rotation("alice", scope, EMBEDDING_DIM);
  }
  expect(atOnce()).toBe(0);
  expect(inTurns()).toBe(scopes.length);
});

test("attack: a rotation being made when the user's key is destroyed is not kept: the next key's is made anew", async () => {
  const db = migratedDatabase(cryptoMigrations);
  const keys = new UserKeys(db, randomBytes(32));
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  const first = keys.prepareRotation("alice", "archive", EMBEDDING_DIM, turn)!;
  // Deleted meanwhile (D13's crypto-shredding); a question after it makes a new key.
  expect(keys.destroy("alice")).toBe(true);
  await first;
  const next = keys.prepareRotation("alice", "archive", EMBEDDING_DIM, turn);
  expect(next).toBeDefined();
  await next;
  const fresh = VectorRotation.fromKey(keys.derive("alice", "vector-rotation/archive"), EMBEDDING_DIM);
  expect(keys.rotation("alice", "archive", EMBEDDING_DIM).apply(unit(3))).toEqual(fresh.apply(unit(3)));
});
