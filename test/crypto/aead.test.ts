import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { DecryptError, open, openText, seal, sealingOf } from "../../src/crypto/aead";
import { cryptoMigrations, NoUserKey, UserKeys } from "../../src/crypto/user-keys";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";

describe("AES-256-GCM sealing (D3)", () => {
  const key = randomBytes(32);

  test("a sealing is told from every other by 33 bytes: the same bytes alike, the same value sealed again not, nor one of another length", () => {
    const sealed = seal(key, "x".repeat(100_000), "t/1");
    const id = sealingOf(sealed);
    expect(id.length).toBe(33);
    expect(Buffer.from(sealingOf(Buffer.from(sealed))).equals(Buffer.from(id))).toBe(true);
    expect(Buffer.from(sealingOf(seal(key, "x".repeat(100_000), "t/1"))).equals(Buffer.from(id))).toBe(false);
    const shorter = Buffer.concat([sealed.subarray(0, 13), sealed.subarray(14)]);
    expect(Buffer.from(sealingOf(shorter)).equals(Buffer.from(id))).toBe(false);
  });

  test("round trip; the plaintext is not in the sealed bytes", () => {
    const sealed = seal(key, "invoice 1042 from Acme", "t/1");
    expect(sealed.includes(Buffer.from("Acme"))).toBe(false);
    expect(openText(key, sealed, "t/1")).toBe("invoice 1042 from Acme");
  });

  test("fresh nonce each time", () => {
    expect(seal(key, "x", "a").equals(seal(key, "x", "a"))).toBe(false);
  });

  test("wrong key, wrong associated data or a flipped bit do not open", () => {
    const sealed = seal(key, "secret", "user/alice");
    expect(() => open(randomBytes(32), sealed, "user/alice")).toThrow(DecryptError);
    expect(() => open(key, sealed, "user/bob")).toThrow(DecryptError);
    const tampered = Buffer.from(sealed);
    tampered[20]! ^= 1;
    expect(() => open(key, tampered, "user/alice")).toThrow(DecryptError);
    expect(() => open(key, Buffer.from("short"), "user/alice")).toThrow("not a sealed value");
  });
});

describe("per-user data keys (D3)", () => {
  test("a rotation prepared in turns is the one rotation() gives after, kept: not made again in its caller's turn", async () => {
    const keys = new UserKeys(openDatabase(tempDir(), cryptoMigrations), randomBytes(32));
    let turns = 0;
    await keys.prepareRotation("alice", "connector/mail", 384, async () => turns++);
    expect(turns).toBeGreaterThan(1);
    const prepared = keys.rotation("alice", "connector/mail", 384);
    expect(keys.rotation("alice", "connector/mail", 384)).toBe(prepared);
    // Prepared again: nothing made, no turn taken.
    await keys.prepareRotation("alice", "connector/mail", 384, async () => turns++);
    expect(turns).toBe(12);
  });

  test("one key per user, wrapped by the master key, stable across reopen, destroyed for good", () => {
    const dir = tempDir();
    const master = randomBytes(32);
    const db = openDatabase(dir, cryptoMigrations);
    const keys = new UserKeys(db, master);
    const sealed = keys.sealFor("alice", "alice's archive", "archive");
    expect(keys.keyFor("alice").equals(keys.keyFor("bob"))).toBe(false);
    const row = db.query<{ wrapped_key: Uint8Array }, []>("SELECT wrapped_key FROM crypto_user_keys WHERE user_id = 'alice'").get()!;
    expect(Buffer.from(row.wrapped_key).includes(keys.keyFor("alice"))).toBe(false);

    const again = new UserKeys(db, master);
    expect(again.openFor("alice", sealed, "archive").toString()).toBe("alice's archive");
    expect(() => new UserKeys(db, randomBytes(32)).openFor("alice", sealed, "archive")).toThrow(DecryptError);

    expect(again.destroy("alice")).toBe(true);
    expect(again.existingKeyFor("alice")).toBeUndefined();
    // Reading never makes a key; a new key for the same name opens nothing of the old one's.
    expect(() => again.openFor("alice", sealed, "archive")).toThrow(NoUserKey);
    again.keyFor("alice");
    expect(() => again.openFor("alice", sealed, "archive")).toThrow(DecryptError);
    db.close();
  });
});
