// `files` (D18): a folder of text, Markdown, HTML, PDF, DOCX, ODT, PPTX, CSV and JSON files, one
// record per file, and of spreadsheets (XLSX, ODS), one record per row (sheets.ts), indexed
// locally and kept up to date incrementally.
import { readdirSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { type FolderSource, IndexedFolderConnector, type IndexedOptions } from "../indexed-source";
import type { LocalIndex, ScanEntry } from "../local-index";
import { asGiven, type Confine, fileEntry, readBelow } from "../paths";
import { type SourceReader, SourceUnreadable, sharedReader } from "../reading/reader";
import type { ReadRecords, SourceRecord } from "../types";
import { fileTexts, fileTypeOf, isSheetType } from "./extract";
import { FileSkipped, MAX_FILE_BYTES } from "./limits";

const MAX_DEPTH = 8;

function scanFiles(root: string): ScanEntry[] {
  const out: ScanEntry[] = [];
  const walk = (dir: string, depth: number) => {
    if (depth > MAX_DEPTH) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      // Links are never followed (D23): one put in the folder must not lead outside it.
      if (e.name.startsWith(".") || e.isSymbolicLink()) continue;
      const full = join(dir, e.name);
      if (e.isDirectory()) walk(full, depth + 1);
      else if (e.isFile() && fileTypeOf(e.name)) {
        const entry = fileEntry(full, relative(root, full));
        if (entry && entry.size <= MAX_FILE_BYTES) out.push(entry);
      }
    }
  };
  walk(root, 0);
  return out;
}

/** `check` is asked again before each file is read (D23); `reader` parses it off the serving thread (D31). */
export function filesSource(root: string, check: Confine = asGiven, reader: SourceReader = sharedReader()): FolderSource {
  return {
    scan: () => scanFiles(root),
    async read(entry) {
      const full = join(root, entry.source);
      const type = fileTypeOf(full)!;
      const bytes = readBelow(root, entry.source, check, MAX_FILE_BYTES);
      const unreadable = (error: unknown): never => {
        // Said in the status and not read again until it changes; the parser's words may quote the file.
        if (error instanceof SourceUnreadable) throw new FileSkipped(`is not a readable ${type.toUpperCase()} file`);
        throw error;
      };
      const modified = new Date(entry.mtime).toISOString();
      if (isSheetType(type)) {
        const place = { file: entry.source, url: pathToFileURL(full).href, fileType: type, size: entry.size, modified };
        return reader.sheet(bytes, place, { chunk: true }).catch(unreadable);
      }
      const extracted = await reader.file(bytes, type, basename(entry.source)).catch(unreadable);
      const record: SourceRecord = {
        id: entry.source,
        ...fileTexts(extracted, basename(entry.source)),
        source_url: pathToFileURL(full).href,
        date: modified,
        type: "file",
        path: entry.source,
        metadata: {
          file_type: type,
          size: entry.size,
          modified,
          ...(extracted.pages ? { pages: extracted.pages } : {}),
        },
      };
      const read: ReadRecords = [record];
      if (extracted.chunks) read.chunks = [extracted.chunks];
      return read;
    },
  };
}

/** `options.check` is asked again before each scan and each file read (D23). */
export const createFilesConnector = (path: string, index: LocalIndex, options: IndexedOptions = {}) =>
  new IndexedFolderConnector("files", path, index, filesSource(path, options.check), options);
