// What every part of a local index works with: the database, the connector's key in it, the
// owner's secrets as the index uses them, and how records are cut into chunks.
import type { Database } from "bun:sqlite";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { VectorRotation } from "../../crypto/rotation";
import type { UserKeys } from "../../crypto/user-keys";
import { EMBEDDING_DIM } from "../../embedding/embedder";
import { TermBlinder } from "../index-terms";
import type { SourceRecord } from "../types";

/**
 * Cuts a record into the texts that are embedded, in a stable order: only for records given
 * without their chunks (the reading worker cuts those it reads, D31) and chunks stored before
 * their texts were.
 */
export type Chunker = (record: SourceRecord) => string[];

/** The owner's secrets, as the index uses them. */
export interface IndexKeys {
  /** Seals a record; `row` binds it to its place. */
  seal(plaintext: string, row: string): Buffer;
  open(sealed: Uint8Array, row: string): string;
  blinder: TermBlinder;
  rotation(): VectorRotation;
  /** Makes rotation() ready with turns of the event loop between its parts (D31); undefined when it is ready. */
  prepareRotation(): Promise<void> | undefined;
}

/**
 * The secrets of `owner`'s index of connector `id`, from their data key. Background indexing
 * passes `create` false: once a deletion destroyed the key, it writes nothing more.
 */
export function indexKeysFor(keys: UserKeys, owner: string, id: string, create: boolean): IndexKeys {
  const purpose = `connector-index/${id}`;
  return {
    seal: (text, row) => keys.sealFor(owner, text, `${purpose}/${row}`, create),
    open: (sealed, row) => keys.openFor(owner, sealed, `${purpose}/${row}`).toString("utf8"),
    blinder: new TermBlinder(() => keys.derive(owner, `word-index/${id}`, create)),
    rotation: () => keys.rotation(owner, `connector/${id}`, EMBEDDING_DIM, create),
    prepareRotation: () => keys.prepareRotation(owner, `connector/${id}`, EMBEDDING_DIM, () => nextTurn(), create),
  };
}

/** One connector's index: its rows are those of `owner` (e.g. "alice/mail"). */
export interface IndexContext {
  readonly db: Database;
  readonly owner: string;
  readonly keys: IndexKeys;
  readonly chunker: Chunker;
}
