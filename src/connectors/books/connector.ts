// `books` (D34): a journal file, or a folder of them (beancount, Ledger/hledger, QIF, OFX,
// GnuCash XML or SQLite), indexed locally, one record per transaction, parsed in the reading worker
// (records.ts, D31). Read only, as every local kind (D19).
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { MAX_FILE_BYTES } from "../files/limits";
import { type FolderSource, IndexedFolderConnector, type IndexedOptions } from "../indexed-source";
import type { LocalIndex, ScanEntry } from "../local-index";
import { asGiven, type Confine, fileEntry, readBelow } from "../paths";
import { type ReadOptions, type SourceReader, SourceUnreadable, sharedReader } from "../reading/reader";
import { type ReadRecords, type SourceRecord, SourceSkipped } from "../types";
import { bookFormatOf } from "./format";
import { FORMAT_NAMES, transactionOf } from "./records";
import type { BookTransaction } from "./sums";

const MAX_DEPTH = 8;

function scanBooks(root: string, only?: string): ScanEntry[] {
  const out: ScanEntry[] = [];
  const walk = (dir: string, depth: number) => {
    if (depth > MAX_DEPTH) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      // Links are never followed (D23): one put in the folder must not lead outside it.
      if (e.name.startsWith(".") || e.isSymbolicLink()) continue;
      const full = join(dir, e.name);
      if (only !== undefined && (depth > 0 || e.name !== only)) continue;
      if (e.isDirectory()) walk(full, depth + 1);
      else if (e.isFile() && bookFormatOf(e.name)) {
        const entry = fileEntry(full, relative(root, full));
        if (entry && entry.size <= MAX_FILE_BYTES) out.push(entry);
      }
    }
  };
  walk(root, 0);
  return out;
}

/**
 * The journals under `root`, or only the file `only` in it (a connector given one file). `check`
 * is asked again before each file is read (D23); `reader` parses it off the serving thread (D31).
 */
export function booksSource(root: string, check: Confine = asGiven, reader: SourceReader = sharedReader(), only?: string): FolderSource {
  return {
    scan: () => scanBooks(root, only),
    // For the index: the records' chunks are cut in the reading worker too (D31).
    read: (entry) => readJournal(root, entry, check, reader, { chunk: true }),
  };
}

/** The transactions of one journal file of `root`, read by `reader`; skipped (SourceSkipped) when it cannot be read. */
function readJournal(root: string, entry: ScanEntry, check: Confine, reader: SourceReader, options: ReadOptions): Promise<ReadRecords> {
  const format = bookFormatOf(entry.source)!;
  const bytes = readBelow(root, entry.source, check, MAX_FILE_BYTES);
  const place = { file: entry.source, url: pathToFileURL(join(root, entry.source)).href, format };
  return reader.books(bytes, place, options).catch((error: unknown) => {
    // Said in the status and not read again until it changes; the parser's words may quote the file.
    if (error instanceof SourceUnreadable) throw new SourceSkipped(`is not a readable ${FORMAT_NAMES[format]} file`);
    throw error;
  });
}

/**
 * A books connector: a folder connector whose transactions can also be read whole, for exact sums
 * (sums.ts): a total needs every transaction of a period, not the best-ranked few. `only` names
 * the one file of a connector given a file.
 */
export class BooksConnector extends IndexedFolderConnector {
  private readonly books: FolderSource;
  private readonly confine: Confine;
  /** Files skipped by transactions(), not read again until they change (one entry per file of the folder at most). */
  private readonly unreadable = new Map<string, { size: number; mtime: number }>();

  constructor(
    private readonly folder: string,
    index: LocalIndex,
    options: IndexedOptions = {},
    only?: string,
    reader: SourceReader = sharedReader(),
  ) {
    const source = booksSource(folder, options.check, reader, only);
    super("books", folder, index, source, options);
    this.books = source;
    this.confine = options.check ?? asGiven;
    this.reader = reader;
  }

  private readonly reader: SourceReader;

  /** The journal files of the books, with their sizes, checked against the owner's roots first (D23). */
  files(): Array<{ source: string; size: number }> {
    this.confine(this.folder);
    return this.books.scan();
  }

  /**
   * The records of one journal file of the books (`file`, its path in the folder, as a record's
   * metadata names it), read again as it is now through the reading worker, ahead of indexing
   * (a question waits for it, D31); undefined when the file is gone, over `maxBytes` or
   * unreadable. Checked against the owner's roots first (D23).
   */
  async fileRecords(file: string, maxBytes: number): Promise<SourceRecord[] | undefined> {
    this.confine(this.folder);
    const entry = this.books.scan().find((e) => e.source === file);
    if (!entry || entry.size > maxBytes) return undefined;
    const format = bookFormatOf(entry.source)!;
    const bytes = readBelow(this.folder, entry.source, this.confine, maxBytes);
    const place = { file: entry.source, url: pathToFileURL(join(this.folder, entry.source)).href, format };
    return this.reader.books(bytes, place, { urgent: true }).catch((error: unknown) => {
      if (error instanceof SourceSkipped || error instanceof SourceUnreadable) return undefined;
      throw error;
    });
  }

  /**
   * Every transaction of the books as they are now, read again through the reading worker (D31),
   * in file and line order. A file that cannot be read is left out, as from the index (its
   * reason is in the status), and not read again until it changes. The folder is checked against the owner's roots first (D23).
   */
  async transactions(): Promise<BookTransaction[]> {
    this.confine(this.folder);
    const out: BookTransaction[] = [];
    const seen = new Set<string>();
    for (const entry of this.books.scan()) {
      seen.add(entry.source);
      const skipped = this.unreadable.get(entry.source);
      if (skipped && skipped.size === entry.size && skipped.mtime === entry.mtime) continue;
      const records = await readJournal(this.folder, entry, this.confine, this.reader, {}).catch((error: unknown) => {
        if (!(error instanceof SourceSkipped)) throw error;
        this.unreadable.set(entry.source, { size: entry.size, mtime: entry.mtime });
        return [];
      });
      for (const r of records) out.push(transactionOf(r)!);
    }
    for (const source of this.unreadable.keys()) if (!seen.has(source)) this.unreadable.delete(source);
    return out;
  }
}
