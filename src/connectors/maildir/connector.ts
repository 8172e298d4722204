// `maildir` (D18): a Maildir (cur/ and new/), a folder of .eml files, or mbox files, parsed
// in the reading worker (message.ts, D31).

import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { type FolderSource, IndexedFolderConnector, type IndexedOptions } from "../indexed-source";
import type { LocalIndex, ScanEntry } from "../local-index";
import { asGiven, type Confine, fileEntry, readBelow } from "../paths";
import { type SourceReader, SourceUnreadable, sharedReader } from "../reading/reader";
import { SourceSkipped } from "../types";

export { parseMessage, splitMbox } from "./message";

const MAX_DEPTH = 6;
/**
 * A mail file larger than this (an mbox, most likely) is skipped, not read: it is read whole and
 * parsed in the reading worker (D31), so its size is memory. Twenty times the largest mbox in
 * shared/data (12 MB of 1,702 messages).
 */
export const MAX_MAIL_FILE_BYTES = 256 * 1024 * 1024;

function isMbox(name: string, head: Buffer): boolean {
  return name.endsWith(".mbox") || name.endsWith("/mbox") || name === "mbox" || head.subarray(0, 5).toString("latin1") === "From ";
}

/** Every message file under `root`: .eml files, Maildir cur/ and new/ entries, mbox files. */
function scanMail(root: string): ScanEntry[] {
  const out: ScanEntry[] = [];
  const walk = (dir: string, depth: number) => {
    if (depth > MAX_DEPTH) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      // Links are never followed (D23): one put in the folder must not lead outside it.
      if (e.isSymbolicLink()) continue;
      const full = join(dir, e.name);
      if (e.isDirectory()) {
        // tmp/ holds messages being delivered; hidden folders only count as Maildir++ folders.
        if (e.name === "tmp" || (e.name.startsWith(".") && !readdirSafe(full).includes("cur"))) continue;
        walk(full, depth + 1);
      } else if (e.isFile() && !e.name.startsWith(".")) {
        const inBox = dir.endsWith("/cur") || dir.endsWith("/new");
        const entry =
          inBox || e.name.endsWith(".eml") || e.name.endsWith(".mbox") || e.name === "mbox"
            ? fileEntry(full, relative(root, full))
            : undefined;
        if (entry) out.push(entry);
      }
    }
  };
  walk(root, 0);
  return out;
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** `check` is asked again before each file is read (D23); `reader` parses it off the serving thread (D31). */
export function maildirSource(root: string, check: Confine = asGiven, reader: SourceReader = sharedReader()): FolderSource {
  return {
    scan: () => scanMail(root),
    async read(entry) {
      const raw = readBelow(root, entry.source, check, MAX_MAIL_FILE_BYTES);
      const place = { id: entry.source, url: pathToFileURL(join(root, entry.source)).href, mbox: isMbox(entry.source, raw) };
      return reader.mail(raw, place, { chunk: true }).catch((error: unknown) => {
        if (error instanceof SourceUnreadable) throw new SourceSkipped("is not a readable mail file");
        throw error;
      });
    },
  };
}

/** `options.check` is asked again before each scan and each file read (D23). */
export const createMaildirConnector = (path: string, index: LocalIndex, options: IndexedOptions = {}) =>
  new IndexedFolderConnector("maildir", path, index, maildirSource(path, options.check), options);
