// What the office formats built on a ZIP package share (DOCX, XLSX, PPTX; ODS, ODT): a part
// streamed through the XML reader as it inflates, OOXML's relationships from a part to the
// others, and the package's main document and title.
import { posix } from "node:path";
import { attribute, decodeXml, type XmlHandler, XmlStream } from "./xml";
import type { ZipReader } from "./zip";

/** Where OOXML's main document is when the package's relationships do not say. */
const DEFAULT_MAIN = "word/document.xml";

/** A decoder for a part's bytes: UTF-16 when it starts with that byte order mark, else UTF-8. */
export const decoderFor = (first: Buffer) => new TextDecoder(first[0] === 0xff && first[1] === 0xfe ? "utf-16le" : "utf-8");

export async function partText(zip: ZipReader, name: string): Promise<string | undefined> {
  const bytes = await zip.read(name);
  return bytes && decoderFor(bytes).decode(bytes);
}

/** Where the package's relationships point to its main document. */
export async function mainPart(zip: ZipReader): Promise<string> {
  const rels = await partText(zip, "_rels/.rels");
  for (const m of rels?.matchAll(/<[\w:]*Relationship\b[^>]*>/g) ?? []) {
    const type = /\bType\s*=\s*["']([^"']+)["']/.exec(m[0])?.[1] ?? "";
    const target = /\bTarget\s*=\s*["']([^"']+)["']/.exec(m[0])?.[1];
    if (/\/officeDocument$/.test(type) && target) return decodeXml(target).replace(/^\/+/, "");
  }
  return DEFAULT_MAIN;
}

/** The title from the package's core properties (OOXML's and ODF's meta.xml alike), if it has one. */
export async function coreTitle(zip: ZipReader, part = "docProps/core.xml"): Promise<string | undefined> {
  const value = /<dc:title[^>]*>([^<]*)<\/dc:title>/.exec((await partText(zip, part)) ?? "")?.[1];
  return value ? decodeXml(value).trim() || undefined : undefined;
}

/** Feeds the part `name` to `handler` as it inflates; stops once `stop` says so. False when there is no such part. */
export async function streamPart(zip: ZipReader, name: string, handler: XmlHandler, stop: () => boolean = () => false): Promise<boolean> {
  if (!zip.has(name)) return false;
  const stream = new XmlStream(handler);
  let decoder: TextDecoder | undefined;
  for await (const chunk of zip.chunks(name)) {
    decoder ??= decoderFor(chunk);
    stream.feed(decoder.decode(chunk, { stream: true }));
    // Stopping here stops the inflation too.
    if (stop()) return true;
  }
  if (decoder) stream.feed(decoder.decode(), true);
  return true;
}

export interface Relationship {
  type: string;
  /** The part it points to, as the archive names it. */
  target: string;
}

/** The relationships of `part` (OOXML: `dir/_rels/name.rels`) by id, their targets resolved against the part's folder. */
export async function relationships(zip: ZipReader, part: string): Promise<Map<string, Relationship>> {
  const dir = posix.dirname(part);
  const rels = await partText(zip, posix.join(dir === "." ? "" : dir, "_rels", `${posix.basename(part)}.rels`));
  const out = new Map<string, Relationship>();
  for (const m of rels?.matchAll(/<[\w:]*Relationship\b([^>]*)>/g) ?? []) {
    const id = attribute(m[1]!, "Id");
    const target = attribute(m[1]!, "Target");
    if (!id || !target || attribute(m[1]!, "TargetMode") === "External") continue;
    const resolved = target.startsWith("/") ? target.slice(1) : posix.normalize(posix.join(dir, target));
    out.set(id, { type: attribute(m[1]!, "Type") ?? "", target: resolved.replace(/^(\.\.\/)+/, "") });
  }
  return out;
}
