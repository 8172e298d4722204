// Per-user data keys (D3): random 32-byte keys, stored wrapped by the master key. Destroying a
// user's key (crypto-shredding) makes everything sealed under it unreadable, in the live
// database, its WAL and any copy of them.
import type { Database } from "bun:sqlite";
import { hkdfSync, randomBytes } from "node:crypto";
import type { Migration } from "../store/migrations";
import { open, seal } from "./aead";
import { VectorRotation } from "./rotation";

/** Rotations kept in memory (by user and store, each ~0.6 MB at 384 dimensions; building one takes ~20 ms). */
const ROTATIONS_KEPT = 64;
/** Data and derived keys kept in memory (32 bytes each; unwrapping or deriving one again costs microseconds). */
const KEYS_KEPT = 10_000;

/** Keeps `value` under `id` in `cache`, dropping the oldest entry once `limit` is reached. */
function keep<T>(cache: Map<string, T>, limit: number, id: string, value: T): T {
  if (cache.size >= limit) cache.delete(cache.keys().next().value!);
  cache.set(id, value);
  return value;
}

/** Thrown where a key is needed but the user has none and none may be made (deleted meanwhile). */
export class NoUserKey extends Error {
  constructor() {
    super("the user has no data key");
  }
}

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
  private readonly derived = new Map<string, Buffer>();
  /** By user and scope. */
  private readonly rotations = new Map<string, VectorRotation>();
  /** Rotations being made in turns (prepareRotation), by user and scope: one making however many ask meanwhile. */
  private readonly making = new Map<string, Promise<void>>();

  constructor(
    private readonly db: Database,
    private readonly masterKey: Buffer,
  ) {}

  private aad(user: string) {
    return `corpus/user-key/${user}`;
  }

  /**
   * The user's data key, created on first use unless `create` is false. Background work (indexing,
   * embedding) never creates one: after a deletion destroyed the key it finds none and stops.
   */
  keyFor(user: string, create = true): Buffer {
    const cached = this.cache.get(user);
    if (cached) return cached;
    const row = this.db
      .query<{ wrapped_key: Uint8Array }, [string]>("SELECT wrapped_key FROM crypto_user_keys WHERE user_id = ?")
      .get(user);
    let key: Buffer;
    if (row) key = open(this.masterKey, row.wrapped_key, this.aad(user));
    else if (!create) throw new NoUserKey();
    else {
      key = randomBytes(32);
      this.db
        .query("INSERT INTO crypto_user_keys (user_id, wrapped_key, created_at) VALUES (?, ?, ?)")
        .run(user, seal(this.masterKey, key, this.aad(user)), Date.now());
    }
    keep(this.cache, KEYS_KEPT, user, key);
    return key;
  }

  /** The user's key if one exists; never creates one. */
  existingKeyFor(user: string): Buffer | undefined {
    if (this.cache.has(user)) return this.cache.get(user);
    const row = this.db.query<{ n: number }, [string]>("SELECT 1 AS n FROM crypto_user_keys WHERE user_id = ?").get(user);
    return row ? this.keyFor(user) : undefined;
  }

  /**
   * A key for one purpose (a word index, a vector cache), derived from the user's data key with
   * HKDF, so each room's secret dies with the data key and no two purposes share one.
   */
  derive(user: string, purpose: string, create = true): Buffer {
    const id = `${user}\u0000${purpose}`;
    return (
      this.derived.get(id) ??
      keep(
        this.derived,
        KEYS_KEPT,
        id,
        Buffer.from(hkdfSync("sha256", this.keyFor(user, create), Buffer.alloc(0), `corpus/${purpose}`, 32)),
      )
    );
  }

  /**
   * The user's secret rotation of embedding vectors for one store (`scope`: a connector, the
   * archive), D25. One per store: an attacker who knows enough of one store's texts to solve
   * for its rotation learns nothing of the others'.
   */
  rotation(user: string, scope: string, dim: number, create = true): VectorRotation {
    const id = `${user}\u0000${scope}`;
    return (
      this.rotations.get(id) ??
      keep(this.rotations, ROTATIONS_KEPT, id, VectorRotation.fromKey(this.derive(user, `vector-rotation/${scope}`, create), dim))
    );
  }

  /**
   * The rotation of `rotation(user, scope, dim)` made ready a few rows a turn (`turn` between), so
   * that the call after finds it kept: work asks for it before it needs it (D31). Undefined when
   * it is kept already: nothing to wait for, not even a turn (a question's search goes on at once).
   */
  prepareRotation(user: string, scope: string, dim: number, turn: () => Promise<unknown>, create = true): Promise<void> | undefined {
    const id = `${user}\u0000${scope}`;
    if (this.rotations.has(id)) return undefined;
    let key: Buffer;
    try {
      // Each caller's own key check (`create`), before any making is shared.
      key = this.derive(user, `vector-rotation/${scope}`, create);
    } catch (error) {
      return Promise.reject(error);
    }
    // Questions arriving together after a start wait on one making: each made its own, 20 clients
    // four stores' rotations 80 times at once (2.6 s of the serving thread, answers-load.ts).
    const pending = this.making.get(id);
    if (pending) return pending;
    const made: Promise<void> = VectorRotation.fromKeyInTurns(key, dim, turn)
      .then((rotation) => {
        // Not once the user's key was destroyed meanwhile (destroy): it would outlive the key.
        if (this.making.get(id) === made && !this.rotations.has(id)) keep(this.rotations, ROTATIONS_KEPT, id, rotation);
      })
      .finally(() => {
        if (this.making.get(id) === made) this.making.delete(id);
      });
    this.making.set(id, made);
    return made;
  }

  sealFor(user: string, plaintext: Uint8Array | string, purpose: string, create = true): Buffer {
    return seal(this.keyFor(user, create), plaintext, `${purpose}/${user}`);
  }

  openFor(user: string, sealed: Uint8Array, purpose: string): Buffer {
    return open(this.keyFor(user, false), sealed, `${purpose}/${user}`);
  }

  /** The data key of `user` (0 or 1) (a deletion asks every room, after it erased, that nothing is left: users/deletion.ts). */
  rowsOf(user: string): number {
    return this.db.query<{ n: number }, [string]>("SELECT (SELECT count(*) FROM crypto_user_keys WHERE user_id = ?1) AS n").get(user)!.n;
  }

  /** Crypto-shredding: the key and everything derived from it are gone; returns whether there was one. */
  destroy(user: string): boolean {
    this.cache.delete(user);
    for (const cache of [this.derived, this.rotations, this.making])
      for (const id of [...cache.keys()]) if (id.startsWith(`${user}\u0000`)) cache.delete(id);
    return this.db.query("DELETE FROM crypto_user_keys WHERE user_id = ?").run(user).changes > 0;
  }
}
