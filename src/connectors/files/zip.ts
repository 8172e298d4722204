// The few parts of a ZIP container (DOCX, XLSX, ODF, PPTX) that text extraction needs, each inflated under a
// shared budget of bytes: the size the central directory declares is checked first, and the
// inflation itself, streamed, stops at the budget, since a declared size may lie. Nothing else
// of the archive is unpacked.
import { createInflateRaw } from "node:zlib";
import { EXPANDS_TOO_FAR, FileSkipped, MAX_EXPANDED_BYTES, MAX_ZIP_ENTRIES, TOO_MANY_ENTRIES } from "./limits";

/** The signature each record of the archive starts with. */
const SIGNATURE = {
  endOfDirectory: 0x06054b50,
  zip64Locator: 0x07064b50,
  zip64EndOfDirectory: 0x06064b50,
  central: 0x02014b50,
  local: 0x04034b50,
} as const;
const MAX_COMMENT = 0xffff;

/** A broken or unsupported archive: the file is unreadable (not skipped for a bound). */
export class ZipError extends Error {}

interface Entry {
  method: number;
  compressed: number;
  size: number;
  localOffset: number;
}

/** The end of central directory record: where the entries are listed, and how many. */
function centralDirectory(buf: Buffer): { offset: number; count: number } {
  const lowest = Math.max(0, buf.length - 22 - MAX_COMMENT);
  for (let i = buf.length - 22; i >= lowest; i--) {
    if (buf.readUInt32LE(i) !== SIGNATURE.endOfDirectory) continue;
    let count = buf.readUInt16LE(i + 10);
    let offset = buf.readUInt32LE(i + 16);
    const locator = i - 20;
    if ((count === 0xffff || offset === 0xffffffff) && locator >= 0 && buf.readUInt32LE(locator) === SIGNATURE.zip64Locator) {
      const at = Number(buf.readBigUInt64LE(locator + 8));
      if (at + 56 > buf.length || buf.readUInt32LE(at) !== SIGNATURE.zip64EndOfDirectory) throw new ZipError("broken ZIP64 directory");
      count = Number(buf.readBigUInt64LE(at + 32));
      offset = Number(buf.readBigUInt64LE(at + 48));
    }
    return { offset, count };
  }
  throw new ZipError("not a ZIP archive");
}

/**
 * Every entry of the central directory, by name, read once (a workbook names hundreds of parts:
 * walking the directory for each was entries × parts). Past MAX_ZIP_ENTRIES the file is skipped.
 */
function readEntries(buf: Buffer, directory: { offset: number; count: number }): Map<string, Entry> {
  if (directory.count > MAX_ZIP_ENTRIES) throw new FileSkipped(TOO_MANY_ENTRIES);
  const entries = new Map<string, Entry>();
  let at = directory.offset;
  for (let n = 0; n < directory.count; n++) {
    if (at + 46 > buf.length || buf.readUInt32LE(at) !== SIGNATURE.central) throw new ZipError("broken ZIP directory");
    const nameLength = buf.readUInt16LE(at + 28);
    const extraLength = buf.readUInt16LE(at + 30);
    const commentLength = buf.readUInt16LE(at + 32);
    const name = buf.toString("utf8", at + 46, at + 46 + nameLength);
    const entry: Entry = {
      method: buf.readUInt16LE(at + 10),
      compressed: buf.readUInt32LE(at + 20),
      size: buf.readUInt32LE(at + 24),
      localOffset: buf.readUInt32LE(at + 42),
    };
    zip64Sizes(buf.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength), entry);
    // The first of two entries of one name is the one read, as before.
    if (!entries.has(name)) entries.set(name, entry);
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** Sizes and offset too large for 32 bits are in the ZIP64 extra field, in this order. */
function zip64Sizes(extra: Buffer, entry: Entry): void {
  for (let i = 0; i + 4 <= extra.length; ) {
    const id = extra.readUInt16LE(i);
    const length = extra.readUInt16LE(i + 2);
    if (id === 0x0001) {
      let p = i + 4;
      const next = () => (p + 8 <= i + 4 + length && p + 8 <= extra.length ? Number(extra.readBigUInt64LE((p += 8) - 8)) : undefined);
      if (entry.size === 0xffffffff) entry.size = next() ?? entry.size;
      if (entry.compressed === 0xffffffff) entry.compressed = next() ?? entry.compressed;
      if (entry.localOffset === 0xffffffff) entry.localOffset = next() ?? entry.localOffset;
      return;
    }
    i += 4 + length;
  }
}

/** Bytes handed out at a time: the reading worker's thread takes its messages between chunks. */
const CHUNK = 256 * 1024;

/** Lets the event loop run (requests, timers) before the next chunk. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

const isTooLarge = (error: unknown) => error instanceof RangeError || (error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE";

/**
 * Reads parts of one archive as streams of chunks; all of them together inflate to at most
 * MAX_EXPANDED_BYTES. A reader that stops early stops the inflation there.
 */
export class ZipReader {
  private spent = 0;
  private readonly entries: Map<string, Entry>;

  constructor(private readonly buf: Buffer) {
    this.entries = readEntries(buf, centralDirectory(buf));
  }

  private entry(name: string): Entry | undefined {
    return this.entries.get(name);
  }

  /** The names of the archive's parts. */
  names(): IterableIterator<string> {
    return this.entries.keys();
  }

  has(name: string): boolean {
    return this.entry(name) !== undefined;
  }

  private spend(bytes: number): void {
    this.spent += bytes;
    if (this.spent > MAX_EXPANDED_BYTES) throw new FileSkipped(EXPANDS_TOO_FAR);
  }

  /**
   * The part's bytes, chunk by chunk (nothing if there is no such part); FileSkipped once the
   * archive's budget is spent (by the declared size first, then by what inflates), ZipError if
   * it is broken.
   */
  async *chunks(name: string): AsyncGenerator<Buffer> {
    const e = this.entry(name);
    if (!e) return;
    if (e.size > MAX_EXPANDED_BYTES - this.spent) throw new FileSkipped(EXPANDS_TOO_FAR);
    const at = e.localOffset;
    if (at + 30 > this.buf.length || this.buf.readUInt32LE(at) !== SIGNATURE.local) throw new ZipError("broken ZIP entry");
    const start = at + 30 + this.buf.readUInt16LE(at + 26) + this.buf.readUInt16LE(at + 28);
    const data = this.buf.subarray(start, Math.min(this.buf.length, start + e.compressed));
    if (e.method === 0) {
      for (let i = 0; i < data.length; i += CHUNK) {
        const chunk = data.subarray(i, i + CHUNK);
        this.spend(chunk.length);
        yield chunk;
        await turn();
      }
      return;
    }
    if (e.method !== 8) throw new ZipError(`unsupported ZIP compression method ${e.method}`);
    const inflater = createInflateRaw({ chunkSize: CHUNK });
    inflater.end(data);
    try {
      for await (const chunk of inflater as AsyncIterable<Buffer>) {
        this.spend(chunk.length);
        yield chunk;
        await turn();
      }
    } catch (error) {
      if (error instanceof FileSkipped) throw error;
      if (isTooLarge(error)) throw new FileSkipped(EXPANDS_TOO_FAR);
      throw new ZipError("broken compressed data");
    } finally {
      inflater.destroy();
    }
  }

  /** A small part whole (relationships, properties), within the same budget. */
  async read(name: string): Promise<Buffer | undefined> {
    if (!this.has(name)) return undefined;
    const parts: Buffer[] = [];
    for await (const chunk of this.chunks(name)) parts.push(chunk);
    return Buffer.concat(parts);
  }
}
