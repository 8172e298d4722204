// `maildir` (D18): a Maildir (cur/ and new/), a folder of .eml files, or mbox files, parsed
// with mailparser (headers, text and HTML parts, attachments' names, decoded charsets).

import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import type { AddressObject } from "mailparser";
import { type FolderSource, IndexedFolderConnector, type IndexedOptions } from "../indexed-source";
import type { LocalIndex, ScanEntry } from "../local-index";
import { asGiven, type Confine, fileEntry, readBelow } from "../paths";
import type { SourceRecord } from "../types";

const MAX_DEPTH = 6;

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

/** mboxrd: messages start at lines "From "; ">From " lines are unquoted one level. */
export function splitMbox(text: string): string[] {
  const messages: string[] = [];
  let current: string[] | undefined;
  for (const line of text.split("\n")) {
    if (line.startsWith("From ")) {
      if (current) messages.push(current.join("\n"));
      current = [];
      continue;
    }
    current?.push(/^>+From /.test(line) ? line.slice(1) : line);
  }
  if (current) messages.push(current.join("\n"));
  return messages;
}

const addresses = (a: AddressObject | AddressObject[] | undefined) =>
  a
    ? (Array.isArray(a) ? a : [a])
        .flatMap((x) => x.value.map((v) => v.address ?? v.name))
        .filter(Boolean)
        .join(", ")
    : "";

export async function parseMessage(raw: Buffer | string, id: string, path: string, url: string): Promise<SourceRecord> {
  // Loaded on first use: the parser takes ~0.1 s to load, which start-up need not pay.
  const { simpleParser } = await import("mailparser");
  const m = await simpleParser(raw, { skipHtmlToText: false, skipTextLinks: true, skipImageLinks: true });
  const from = addresses(m.from);
  const attachments = m.attachments
    .map((a) => a.filename)
    .filter(Boolean)
    .join(", ");
  const body = (m.text ?? (typeof m.html === "string" ? m.html : "")).trim();
  return {
    id,
    title: m.subject?.trim() || "(no subject)",
    content: body,
    source_url: url,
    date: m.date && !Number.isNaN(m.date.getTime()) ? m.date.toISOString() : null,
    type: "email",
    path,
    metadata: {
      from,
      to: addresses(m.to),
      cc: addresses(m.cc),
      subject: m.subject ?? "",
      message_id: m.messageId ?? "",
      attachments,
    },
  };
}

/** `check` is asked again before each file is read (D23). */
export function maildirSource(root: string, check: Confine = asGiven): FolderSource {
  return {
    scan: () => scanMail(root),
    async read(entry) {
      const full = join(root, entry.source);
      const raw = readBelow(root, entry.source, check);
      const url = pathToFileURL(full).href;
      if (isMbox(entry.source, raw)) {
        const parts = splitMbox(raw.toString("latin1"));
        return Promise.all(
          parts.map((p, i) =>
            parseMessage(Buffer.from(p, "latin1"), `${entry.source}#${i + 1}`, `${entry.source}#${i + 1}`, `${url}#${i + 1}`),
          ),
        );
      }
      return [await parseMessage(raw, entry.source, entry.source, url)];
    },
  };
}

/** `options.check` is asked again before each scan and each file read (D23). */
export const createMaildirConnector = (path: string, index: LocalIndex, options: IndexedOptions = {}) =>
  new IndexedFolderConnector("maildir", path, index, maildirSource(path, options.check), options);
