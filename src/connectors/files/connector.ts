// `files` (D18): a folder of text, Markdown, HTML, PDF, DOCX, CSV and JSON files, one record
// per file, indexed locally and kept up to date incrementally.
import { readdirSync, readFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import type { EmbeddingService } from "../../embedding/service";
import type { Logger } from "../../log";
import { IndexedFolderConnector, type FolderSource } from "../indexed-source";
import { scanEntry, type LocalIndex, type ScanEntry } from "../local-index";
import { extractText, fileTypeOf } from "./extract";

const MAX_DEPTH = 8;
const MAX_FILE_BYTES = 50 * 1024 * 1024;

function scanFiles(root: string): ScanEntry[] {
  const out: ScanEntry[] = [];
  const walk = (dir: string, depth: number) => {
    if (depth > MAX_DEPTH) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name.startsWith(".")) continue;
      const full = join(dir, e.name);
      if (e.isDirectory()) walk(full, depth + 1);
      else if (e.isFile() && fileTypeOf(e.name)) {
        const entry = scanEntry(full, relative(root, full));
        if (entry.size <= MAX_FILE_BYTES) out.push(entry);
      }
    }
  };
  walk(root, 0);
  return out;
}

export function filesSource(root: string): FolderSource {
  return {
    scan: () => scanFiles(root),
    async read(entry) {
      const full = join(root, entry.source);
      const type = fileTypeOf(full)!;
      const extracted = await extractText(readFileSync(full), type);
      return [
        {
          id: entry.source,
          title: extracted.title || basename(entry.source),
          content: extracted.text.trim(),
          source_url: pathToFileURL(full).href,
          date: new Date(entry.mtime).toISOString(),
          type: "file",
          path: entry.source,
          metadata: { file_type: type, size: entry.size, modified: new Date(entry.mtime).toISOString(), ...(extracted.pages ? { pages: extracted.pages } : {}) },
        },
      ];
    },
  };
}

export const createFilesConnector = (path: string, index: LocalIndex, embeddings?: EmbeddingService, log?: Logger) =>
  new IndexedFolderConnector("files", path, index, filesSource(path), embeddings, log);
