// What the office formats built on a ZIP package share (XLSX, PPTX; ODS, ODT): a part streamed
// through the XML reader as it inflates, and OOXML's relationships from a part to the others.
import { posix } from "node:path";
import { decoderFor, partText } from "./docx";
import { attribute, type XmlHandler, XmlStream } from "./xml";
import type { ZipReader } from "./zip";

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
