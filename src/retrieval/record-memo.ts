// What a question reads from a record's text (its counted words, its amounts, its dates), computed
// once per version of that text instead of on every question (issue 36): most of a question's
// candidates were candidates of the questions before it. Keyed by owner, connector and record,
// kept while the text read is the same, and bounded by what the values hold, oldest out first
// (as chunk-cache.ts).
import type { SourceRecord } from "../connectors/types";

interface Remembered<T> {
  /**
   * A 64-bit hash of the text the value was computed from (wyhash: 0.27 ms over 2 MB, a question's
   * candidates, where SHA-256 took 1.37 ms). Never shared between records: a text made to collide with
   * its record's previous version misleads only its own record's ranking, which its writer
   * decides anyway.
   */
  digest: bigint;
  value: T;
  size: number;
  /** The frozen record it was read from (getOfRecord): met again, its text is neither built nor hashed again. */
  from?: WeakRef<SourceRecord>;
}

export class RecordMemo<T> {
  private readonly entries = new Map<string, Remembered<T>>();
  private heldSize = 0;
  /** Texts hashed so far, to tell whether the value is still theirs (tests count the work). */
  hashed = 0;

  /**
   * `compute` reads a text (by default, that of the record's version); `sizeOf` is what its value
   * holds (characters or items), of which the memo keeps at most `budget`.
   */
  constructor(
    private readonly budget: number,
    private readonly sizeOf: (value: T) => number,
    private readonly compute?: (text: string) => T,
  ) {}

  /**
   * `compute(text)`, remembered for the record of `key` (owner, connector and record: recordKey)
   * while `text` is the same; `computeOf` instead where the value is read from the record (then
   * `text` must hold all of it that the value depends on: the bytes of a sealed record, say).
   */
  get(key: string, text: string | Uint8Array, computeOf?: () => T): T {
    this.hashed++;
    const digest = Bun.hash.wyhash(text) as bigint;
    const cached = this.entries.get(key);
    if (cached && cached.digest === digest) return cached.value;
    const value = computeOf ? computeOf() : this.compute!(text as string);
    this.forget(key);
    const size = this.sizeOf(value) + 1;
    if (size > this.budget / 4) return value;
    while (this.heldSize + size > this.budget) this.forget(this.entries.keys().next().value!);
    this.entries.set(key, { digest, value, size });
    this.heldSize += size;
    return value;
  }

  /**
   * `get` of what `textOf` reads of `record`. A local index's records are opened once per version
   * and frozen (documents.ts openRecords): the same frozen object met again holds the same text, so
   * its value is returned without building that text and hashing it (issue 36: ~0.5 ms of the
   * serving thread a question). Any other record is read and hashed as `get` does (`computeOf` as there).
   */
  getOfRecord(key: string, record: SourceRecord, textOf: (record: SourceRecord) => string, computeOf?: () => T): T {
    const cached = this.entries.get(key);
    if (cached?.from !== undefined && cached.from.deref() === record) return cached.value;
    const value = this.get(key, textOf(record), computeOf);
    const entry = this.entries.get(key);
    // Frozen with its metadata: what textOf reads of it cannot change.
    if (entry && Object.isFrozen(record) && Object.isFrozen(record.metadata)) entry.from = new WeakRef(record);
    return value;
  }

  /** What the values held now add up to (tests). */
  get size(): number {
    return this.heldSize;
  }

  private forget(key: string): void {
    const gone = this.entries.get(key);
    if (!gone) return;
    this.entries.delete(key);
    this.heldSize -= gone.size;
  }
}

/** A record's key in a memo: its owner's, its connector's and its own id. */
export const recordKey = (owner: string, connectorId: string, recordId: string) => `${owner}\u0000${connectorId}\u0000${recordId}`;
