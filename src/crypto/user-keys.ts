// Per-user data keys (D3): random 32-byte keys, stored wrapped by the master key. Destroying a
// user's key (crypto-shredding) makes everything sealed under it unreadable, in the live
// database, its WAL and any copy of them.
import type { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import type { Migration } from "../store/migrations";
import { open, seal } from "./aead";

export const cryptoMigrations: Migration[] = [
  {
    id: "crypto-001-user-keys",
    up(db) {
      db.exec(`CREATE TABLE crypto_user_keys (
        user_id TEXT PRIMARY KEY,
        wrapped_key BLOB NOT NULL,
        created_at INTEGER NOT NULL
      )`);
    },
  },
];

export class UserKeys {
  private readonly cache = new Map<string, Buffer>();

  constructor(
    private readonly db: Database,
    private readonly masterKey: Buffer,
  ) {}

  private aad(user: string) {
    return `corpus/user-key/${user}`;
  }

  /** The user's data key, created on first use. */
  keyFor(user: string): Buffer {
    const cached = this.cache.get(user);
    if (cached) return cached;
    const row = this.db.query<{ wrapped_key: Uint8Array }, [string]>("SELECT wrapped_key FROM crypto_user_keys WHERE user_id = ?").get(user);
    let key: Buffer;
    if (row) key = open(this.masterKey, row.wrapped_key, this.aad(user));
    else {
      key = randomBytes(32);
      this.db.query("INSERT INTO crypto_user_keys (user_id, wrapped_key, created_at) VALUES (?, ?, ?)").run(user, seal(this.masterKey, key, this.aad(user)), Date.now());
    }
    this.cache.set(user, key);
    return key;
  }

  /** The user's key if one exists; never creates one. */
  existingKeyFor(user: string): Buffer | undefined {
    if (this.cache.has(user)) return this.cache.get(user);
    const row = this.db.query<{ n: number }, [string]>("SELECT 1 AS n FROM crypto_user_keys WHERE user_id = ?").get(user);
    return row ? this.keyFor(user) : undefined;
  }

  sealFor(user: string, plaintext: Uint8Array | string, purpose: string): Buffer {
    return seal(this.keyFor(user), plaintext, `${purpose}/${user}`);
  }

  openFor(user: string, sealed: Uint8Array, purpose: string): Buffer {
    return open(this.keyFor(user), sealed, `${purpose}/${user}`);
  }

  /** Crypto-shredding: the key is gone; returns whether there was one. */
  destroy(user: string): boolean {
    this.cache.delete(user);
    return this.db.query("DELETE FROM crypto_user_keys WHERE user_id = ?").run(user).changes > 0;
  }
}
