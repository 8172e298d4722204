// DOCX text, read from the main document's XML as it inflates, in one pass: the text of runs, a
// tab for a run's tab, a line for a break, a blank line after each paragraph (mammoth's raw
// text, the same on mammoth's own test documents). mammoth built the whole document model for
// this: 4 MB of dense XML took 730 MB and 6.4 s on the request thread (measured), so a small
// hostile file could stop the service. Here memory stays at a chunk and the text kept, the
// parts come from ZipReader (which bounds what is inflated), and it all runs in the reading
// worker (D31).
import type { Extracted } from "./extract";
import { TextBudget } from "./limits";
import { ZipReader } from "./zip";

const WORD_NS = ["http://schemas.openxmlformats.org/wordprocessingml/2006/main", "http://purl.oclc.org/ooxml/wordprocessingml/main"];
const COMPAT_NS = "http://schemas.openxmlformats.org/markup-compatibility/2006";
const DEFAULT_MAIN = "word/document.xml";
/** Markup cut by a chunk's end waits for the next chunk, up to this; longer markup is dropped. */
const MAX_CARRY = 64 * 1024;
/** The longest entity reference (`&#x10FFFF;`). */
const MAX_ENTITY = 10;

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

/** XML character and entity references as their characters. */
export function decodeXml(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|amp|lt|gt|quot|apos);/gi, (all, ref: string) => {
    if (ref[0] !== "#") return ENTITIES[ref.toLowerCase()] ?? all;
    const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : "";
  });
}

/** A space, tab, line break or slash: the end of a tag's name. */
const endsName = (c: number) => c === 0x20 || c === 0x2f || c === 0x09 || c === 0x0a || c === 0x0d;

/** The prefix `xml` gives one of `namespaces` (`w:`, or "" when it is the default one). */
function prefixOf(xml: string, namespaces: string[], fallback: string): string {
  for (const m of xml.matchAll(/xmlns(?::([\w.-]+))?\s*=\s*["']([^"']+)["']/g))
    if (namespaces.includes(m[2]!)) return m[1] ? `${m[1]}:` : "";
  return fallback;
}

/**
 * The text of a WordprocessingML document, fed in pieces. Only `t` is text (never deleted text
 * or field codes); `mc:Choice` is skipped for its `mc:Fallback`, as mammoth did.
 */
export class WordText {
  private readonly out = new TextBudget();
  private names?: { text: string; run: string; paragraph: string; tab: string; br: string; cr: string; choice: string };
  private carry = "";
  /** What ends markup too long to carry, dropped until then. */
  private dropUntil?: string;
  private runs = 0;
  private inText = false;
  private skipping = 0;

  get full(): boolean {
    return this.out.full;
  }

  text(): string {
    return this.out.text();
  }

  /** `last` when no more follows: nothing is carried. */
  feed(chunk: string, last = false): void {
    let xml = this.carry + chunk;
    this.carry = "";
    if (this.dropUntil) {
      const end = xml.indexOf(this.dropUntil);
      if (end < 0) {
        // The end marker may be cut by the chunk's end.
        this.carry = xml.slice(xml.length - (this.dropUntil.length - 1));
        return;
      }
      xml = xml.slice(end + this.dropUntil.length);
      this.dropUntil = undefined;
    }
    // The namespaces are declared on the root element: its start tag is awaited whole.
    if (!this.names) {
      const root = /<[^?!]/.exec(xml.slice(0, MAX_CARRY));
      const rootEnd = root ? xml.indexOf(">", root.index) : -1;
      if (rootEnd < 0 && !last && xml.length < MAX_CARRY) {
        this.carry = xml;
        return;
      }
      const head = xml.slice(0, rootEnd < 0 ? MAX_CARRY : rootEnd + 1);
      const w = prefixOf(head, WORD_NS, "w:");
      const mc = prefixOf(head, [COMPAT_NS], "mc:");
      this.names = { text: `${w}t`, run: `${w}r`, paragraph: `${w}p`, tab: `${w}tab`, br: `${w}br`, cr: `${w}cr`, choice: `${mc}Choice` };
    }
    let i = 0;
    while (i < xml.length && !this.out.full) {
      const lt = xml.indexOf("<", i);
      const textEnd = lt < 0 ? xml.length : lt;
      if (textEnd > i && this.inText && !this.skipping) {
        // An entity reference cut by the chunk's end waits for the rest.
        let end = textEnd;
        const amp = lt < 0 && !last ? xml.lastIndexOf("&", end) : -1;
        if (amp >= i && amp > end - MAX_ENTITY && !xml.includes(";", amp)) end = amp;
        this.out.add(decodeXml(xml.slice(i, end)));
        if (end < textEnd) this.carry = xml.slice(end);
      }
      if (lt < 0) return;
      i = this.markup(xml, lt, last);
    }
  }

  /** Reads the markup at `lt`; answers where reading goes on. */
  private markup(xml: string, lt: number, last: boolean): number {
    const bang = xml.charCodeAt(lt + 1) === 0x21;
    const close = bang && xml.startsWith("<![CDATA[", lt) ? "]]>" : bang && xml.startsWith("<!--", lt) ? "-->" : ">";
    const end = xml.indexOf(close, lt + 1);
    if (end < 0) {
      if (last) return xml.length;
      if (xml.length - lt <= MAX_CARRY) this.carry = xml.slice(lt);
      else this.dropUntil = close;
      return xml.length;
    }
    const next = end + close.length;
    if (close === "]]>") {
      if (this.inText && !this.skipping) this.out.add(xml.slice(lt + 9, end));
      return next;
    }
    if (close === "-->") return next;
    this.tag(xml, lt, end);
    return next;
  }

  private tag(xml: string, lt: number, gt: number): void {
    const n = this.names!;
    const closing = xml.charCodeAt(lt + 1) === 0x2f;
    const selfClosing = xml.charCodeAt(gt - 1) === 0x2f;
    const nameStart = closing ? lt + 2 : lt + 1;
    let nameEnd = nameStart;
    while (nameEnd < gt && !endsName(xml.charCodeAt(nameEnd))) nameEnd++;
    // Compared in place: no string is made per tag.
    const is = (name: string) => name.length === nameEnd - nameStart && xml.startsWith(name, nameStart);
    if (is(n.choice)) {
      if (!selfClosing) this.skipping = Math.max(0, this.skipping + (closing ? -1 : 1));
      return;
    }
    if (this.skipping) return;
    if (is(n.text)) this.inText = !closing && !selfClosing;
    else if (is(n.run)) {
      if (!selfClosing) this.runs = Math.max(0, this.runs + (closing ? -1 : 1));
    } else if (closing && is(n.paragraph)) this.out.add("\n\n");
    else if (!closing && this.runs > 0 && is(n.tab)) this.out.add("\t");
    else if (!closing && this.runs > 0 && (is(n.br) || is(n.cr))) this.out.add("\n");
  }
}

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

export async function docxText(bytes: Uint8Array): Promise<Extracted> {
  const zip = new ZipReader(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const main = await mainPart(zip);
  if (!zip.has(main)) throw new Error("no main document in the DOCX");
  const text = new WordText();
  let decoder: TextDecoder | undefined;
  for await (const chunk of zip.chunks(main)) {
    decoder ??= decoderFor(chunk);
    text.feed(decoder.decode(chunk, { stream: true }));
    // Stopping here stops the inflation too.
    if (text.full) break;
  }
  if (decoder && !text.full) text.feed(decoder.decode(), true);
  return { text: text.text(), title: await coreTitle(zip) };
}
