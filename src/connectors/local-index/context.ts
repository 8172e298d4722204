// What every part of a local index works with: the database, the connector's key in it, the
// owner's secrets as the index uses them, and how records are cut into chunks.
import type { Database } from "bun:sqlite";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { VectorRotation } from "../../crypto/rotation";
import type { UserKeys } from "../../crypto/user-keys";
import { EMBEDDING_DIM } from "../../embedding/embedder";
import { RecordMemo, recordKey } from "../../retrieval/record-memo";
import { TermBlinder } from "../index-terms";
import type { SourceRecord } from "../types";

/** Cuts a record into the texts that are embedded, in a stable order. */
export type Chunker = (record: SourceRecord) => string[];

/** Characters of chunks each chunker's memo keeps (~8 MB): a folder's records between being stored and embedded. */
export const REMEMBERED_CHUNK_CHARS = 4_000_000;
const chunkMemos = new WeakMap<Chunker, RecordMemo<string[]>>();

/**
 * `chunker` remembering each record's chunks per version of its title and text, for the index of
 * `owner`: a record was cut when it was made ready to store (its chunks counted) and again when
 * its chunks were embedded, both on the serving thread (D31: cutting is its largest part left
 * while a folder is indexed). Keyed by index and record, never by text alone (a text made to
 * collide with another's hash then misleads only its own record).
 */
export function rememberingChunker(owner: string, chunker: Chunker): Chunker {
  let memo = chunkMemos.get(chunker);
  if (!memo) {
    memo = new RecordMemo<string[]>(REMEMBERED_CHUNK_CHARS, (chunks) => chunks.reduce((n, c) => n + c.length, 0));
    chunkMemos.set(chunker, memo);
  }
  const remembered = memo;
  return (r) => remembered.get(recordKey(owner, "", r.id), `${r.title}\u0000${r.content}`, () => chunker(r));
}

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
