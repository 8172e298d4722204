// Per-user data keys (D3): random 32-byte keys, stored wrapped by the master key. Destroying a
// user's key (crypto-shredding) makes everything sealed under it unreadable, in the live
// database, its WAL and any copy of them.
// The wrapped keys are one room (D33, UserKeyRecords): the embedded database (below), read at
// once when a key is first used, as always; or the shared PostgreSQL (user-keys-postgres.ts),
// which answers later, so that a user's key is made present on this node by `ready` (awaited
// where work for a user begins: the request guard, MCP, background work) before the synchronous
// uses (keyFor, derive, rotation, sealFor, openFor) answer from memory.
import type { Database } from "bun:sqlite";
import { hkdfSync, randomBytes } from "node:crypto";
import type postgres from "postgres";
import type { Migration } from "../store/migrations";
import { type Awaitable, atOnce, inTransaction } from "../store/shared";
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

/**
 * A synchronous use of a shared store's key that no `ready` made present on this node: a
 * programming error (an entry path that forgot to await it), never a user's; not a NoUserKey,
 * which background work takes for "the user is gone" and stops quietly.
 */
export class UserKeyNotReady extends Error {
  constructor(user: string, create: boolean) {
    super(
      create
        ? `users' data keys: the key of ${JSON.stringify(user)} is used to write, but was made ready without { create: true } and there is none`
        : `users' data keys: the key of ${JSON.stringify(user)} is used, but was not made ready on this node (await keys.ready(user) first)`,
    );
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

/** Where the wrapped data keys are kept (D33): at once by the embedded database, later by PostgreSQL. */
export interface UserKeyRecords {
  /** True when the store answers promises: a key is used only after `UserKeys.ready` brought it. */
  readonly answersLater: boolean;
  /** The user's key as kept (wrapped by the master key), if any. */
  wrapped(user: string): Awaitable<Uint8Array | undefined>;
  /**
   * Keeps `wrapped` as the user's key unless one is kept already (made meanwhile, on another
   * node): answers the one kept, so that two first uses at once end with one key.
   */
  keep(user: string, wrapped: Uint8Array, at: number): Awaitable<Uint8Array>;
  /** The user's key rows (0 or 1). */
  rowsOf(user: string): Awaitable<number>;
  /** Erases the user's key; whether there was one. */
  forget(user: string): Awaitable<boolean>;
  /**
   * The shared store: rewrites its table so that keys erased before leave its files, not only its
   * rows (the embedded database's scrub does that for its own: secure_delete, the WAL emptied);
   * false while a transaction older than an erase keeps its row (asked again later).
   */
  compact?(): Promise<boolean>;
}

/** The embedded store: the data folder's database, today's table and statements. */
export class SqliteUserKeyRecords implements UserKeyRecords {
  readonly answersLater = false;

  constructor(private readonly db: Database) {}

  wrapped(user: string): Uint8Array | undefined {
    return (
      this.db.query<{ wrapped_key: Uint8Array }, [string]>("SELECT wrapped_key FROM crypto_user_keys WHERE user_id = ?").get(user)
        ?.wrapped_key ?? undefined
    );
  }

  keep(user: string, wrapped: Uint8Array, at: number): Uint8Array {
    this.db
      .query("INSERT INTO crypto_user_keys (user_id, wrapped_key, created_at) VALUES (?, ?, ?) ON CONFLICT (user_id) DO NOTHING")
      .run(user, wrapped, at);
    return this.wrapped(user)!;
  }

  rowsOf(user: string): number {
    return this.db.query<{ n: number }, [string]>("SELECT (SELECT count(*) FROM crypto_user_keys WHERE user_id = ?1) AS n").get(user)!.n;
  }

  forget(user: string): boolean {
    return this.db.query("DELETE FROM crypto_user_keys WHERE user_id = ?").run(user).changes > 0;
  }
}

/** What a user's deletion erases and counts of the data keys room, inside its PostgreSQL transaction (D33). */
export interface UserKeysInTransaction {
  destroy(user: string): Promise<boolean>;
  rowsOf(user: string): Promise<number>;
}

/** The room's name in messages (shared.ts's lists). */
const ROOM = "users' data keys";

export class UserKeys {
  private readonly records: UserKeyRecords;
  private readonly cache = new Map<string, Buffer>();
  /** Keys made ready to be kept for the node's life, out of the cache's reach (the operator's: no deletion destroys it). */
  private readonly held = new Map<string, Buffer>();
  /** The shared store: users made ready on this node and found without a key (a use then is NoUserKey, as on the embedded store). */
  private readonly keyless = new Map<string, true>();
  private readonly derived = new Map<string, Buffer>();
  /** By user and scope. */
  private readonly rotations = new Map<string, VectorRotation>();
  /** Rotations being made in turns (prepareRotation), by user and scope: one making however many ask meanwhile. */
  private readonly making = new Map<string, Promise<void>>();

  /** `records`: the shared store, or the embedded database (its store made here). */
  constructor(
    records: UserKeyRecords | Database,
    private readonly masterKey: Buffer,
  ) {
    this.records = "answersLater" in records ? records : new SqliteUserKeyRecords(records);
  }

  private aad(user: string) {
    return `corpus/user-key/${user}`;
  }

  private wrap(user: string, key: Buffer): Buffer {
    return seal(this.masterKey, key, this.aad(user));
  }

  /**
   * Makes the user's key present on this node (made first when `create` and there is none; two
   * nodes making it at once end with one), so that the synchronous uses after answer from memory.
   * Awaited where work for a user begins (the request guard, MCP, background work at its start).
   * The shared store reads the row again at every call (one row by its key): a key destroyed by
   * another node's deletion is dropped here, with all derived from it, at this node's next
   * request or job, never used on from memory. The embedded store has nothing to do: its key is
   * read (or made) at once where it is used, as always. `held`: kept for the node's life (the
   * operator's key, made ready once at start: the cache never lets it go). `read`: the row as the
   * caller read it just now, for this request (the guard's, with the token's revocation in one
   * statement): not read again.
   */
  ready(
    user: string,
    { create = false, held = false, read }: { create?: boolean; held?: boolean; read?: { wrapped: Uint8Array | undefined } } = {},
  ): Awaitable<void> {
    if (!this.records.answersLater) {
      // Another process on the data folder (`corpus user remove --delete-data`) may have destroyed
      // the key kept in memory: one row read by its key, and the key dropped unless it is still the one kept.
      const cached = this.cache.get(user);
      if (cached) {
        const wrapped = atOnce(this.records.wrapped(user), ROOM);
        if (!wrapped || !open(this.masterKey, wrapped, this.aad(user)).equals(cached)) this.drop(user);
      }
      return;
    }
    return this.bring(user, create, held, read).then(() => {});
  }

  /** `ready`'s work on the shared store: the user's key, now present on this node, or none. */
  private async bring(
    user: string,
    create: boolean,
    held: boolean,
    read?: { wrapped: Uint8Array | undefined },
  ): Promise<Buffer | undefined> {
    let wrapped = read ? read.wrapped : await this.records.wrapped(user);
    if (!wrapped && create) wrapped = await this.records.keep(user, this.wrap(user, randomBytes(32)), Date.now());
    return this.present(user, wrapped, held);
  }

  /**
   * Background work's check of its owner, where a job starts and before each batch it writes
   * (D33): the shared store reads the key again (as `ready`, never making one) and answers it,
   * or rejects with NoUserKey once a deletion on any node destroyed it, or once another replaced
   * `began` (the key the job began with: the user deleted and back meanwhile is someone the job
   * was not started for), so the job stops there, writing nothing after. Undefined on the embedded
   * store: nothing to wait for (its key is read where it is used, and a deletion there closes the
   * user's work itself).
   */
  recheck(user: string, began?: Buffer): Promise<Buffer> | undefined {
    if (!this.records.answersLater) return undefined;
    return this.bring(user, false, false).then((key) => {
      if (!key || (began && !key.equals(began))) throw new NoUserKey();
      return key;
    });
  }

  /** What `ready` found: the key kept in memory (answered), or none (and nothing derived from one). */
  private present(user: string, wrapped: Uint8Array | undefined, held: boolean): Buffer | undefined {
    if (!wrapped) {
      // Found without one before: nothing of theirs is in memory (drop looks through every derived key).
      if (this.keyless.has(user)) return undefined;
      this.drop(user);
      keep(this.keyless, KEYS_KEPT, user, true);
      return undefined;
    }
    const key = open(this.masterKey, wrapped, this.aad(user));
    const cached = this.cache.get(user) ?? this.held.get(user);
    if (cached?.equals(key)) return cached;
    // Another key than the one in memory: the user was deleted and came back meanwhile; nothing of the old one stays.
    this.drop(user);
    if (held) this.held.set(user, key);
    else keep(this.cache, KEYS_KEPT, user, key);
    return key;
  }

  /** Forgets from memory the user's key and everything derived from it. */
  private drop(user: string): void {
    this.cache.delete(user);
    this.held.delete(user);
    this.keyless.delete(user);
    for (const cache of [this.derived, this.rotations, this.making])
      for (const id of [...cache.keys()]) if (id.startsWith(`${user}\u0000`)) cache.delete(id);
  }

  /**
   * The user's data key, created on first use unless `create` is false. Background work (indexing,
   * embedding) never creates one: after a deletion destroyed the key it finds none and stops.
   * The shared store: from memory, where `ready` put it (UserKeyNotReady where none did).
   */
  keyFor(user: string, create = true): Buffer {
    const cached = this.cache.get(user) ?? this.held.get(user);
    if (cached) return cached;
    if (this.records.answersLater) {
      if (!this.keyless.has(user)) throw new UserKeyNotReady(user, false);
      if (create) throw new UserKeyNotReady(user, true);
      throw new NoUserKey();
    }
    let wrapped = atOnce(this.records.wrapped(user), ROOM);
    if (!wrapped) {
      if (!create) throw new NoUserKey();
      wrapped = atOnce(this.records.keep(user, this.wrap(user, randomBytes(32)), Date.now()), ROOM);
    }
    return keep(this.cache, KEYS_KEPT, user, open(this.masterKey, wrapped, this.aad(user)));
  }

  /** The user's key if one exists; never creates one. */
  existingKeyFor(user: string): Buffer | undefined {
    const cached = this.cache.get(user) ?? this.held.get(user);
    if (cached || this.keyless.has(user)) return cached;
    if (this.records.answersLater) throw new UserKeyNotReady(user, false);
    return atOnce(this.records.wrapped(user), ROOM) ? this.keyFor(user) : undefined;
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
  rowsOf(user: string): Awaitable<number> {
    return this.records.rowsOf(user);
  }

  /** Crypto-shredding: the key and everything derived from it are gone; answers whether there was one. */
  destroy(user: string): Awaitable<boolean> {
    this.drop(user);
    return this.records.forget(user);
  }

  /**
   * After a deletion committed on the shared store: the destroyed key's wrapped bytes out of
   * PostgreSQL's files (PostgresUserKeyRecords.compact). Everything else of the user there is
   * sealed, blinded or rotated under that key (D3, D25). False while a transaction older than
   * the erase keeps the row (the sweep asks again); undefined on the embedded store.
   */
  compactDestroyed(): Promise<boolean> | undefined {
    return this.records.compact?.();
  }

  /** The erase and count of a user's deletion inside its PostgreSQL transaction (D33); refused for the embedded store. */
  within(tx: postgres.TransactionSql): UserKeysInTransaction {
    const records = inTransaction(this.records, tx, ROOM);
    return {
      destroy: async (user) => {
        this.drop(user);
        return records.forget(user);
      },
      rowsOf: async (user) => records.rowsOf(user),
    };
  }
}
