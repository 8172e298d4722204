// A streaming XML reader for the parts of office files (DOCX, spreadsheets, ODT, PPTX): fed the text
// of a part chunk by chunk as ZipReader inflates it, it tells its handler each start tag, end tag
// and piece of text, holding at most a chunk and one cut-off tag. Only the five predefined
// entities and character references are known: a document type declaration (the only place
// entities are declared, e.g. a billion laughs) has no business in these files and refuses the
// file (FileSkipped). Used in the reading worker only (D31).
import { FileSkipped } from "./limits";

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

export const DECLARES_ENTITIES = "declares XML entities (a document type), which office files never do";

export interface XmlHandler {
  /** A start tag: its qualified name and the text of its attributes. */
  open(name: string, attributes: string, selfClosing: boolean): void;
  close(name: string): void;
  /** Text (entities decoded); one text node may come in several pieces. */
  text(text: string): void;
}

/** A space, tab, line break or slash: the end of a tag's name. */
const endsName = (c: number) => c === 0x20 || c === 0x2f || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x3e;

/** The value of attribute `name` (qualified) in a start tag's attribute text, decoded. */
export function attribute(attributes: string, name: string): string | undefined {
  for (let at = attributes.indexOf(name); at >= 0; at = attributes.indexOf(name, at + 1)) {
    const before = at === 0 ? 0x20 : attributes.charCodeAt(at - 1);
    if (before !== 0x20 && before !== 0x09 && before !== 0x0a && before !== 0x0d) continue;
    let i = at + name.length;
    while (attributes.charCodeAt(i) === 0x20) i++;
    if (attributes.charCodeAt(i) !== 0x3d) continue;
    i++;
    while (attributes.charCodeAt(i) === 0x20) i++;
    const quote = attributes[i];
    if (quote !== '"' && quote !== "'") continue;
    const end = attributes.indexOf(quote, i + 1);
    if (end < 0) return undefined;
    return decodeXml(attributes.slice(i + 1, end));
  }
  return undefined;
}

/** The name without its namespace prefix. */
export const localName = (name: string) => name.slice(name.indexOf(":") + 1);

export class XmlStream {
  private carry = "";
  /** What ends markup too long to carry, dropped until then. */
  private dropUntil?: string;

  constructor(private readonly handler: XmlHandler) {}

  /** `last` when no more follows: nothing is carried. */
  feed(chunk: string, last = false): void {
    let xml = this.carry + chunk;
    this.carry = "";
    if (this.dropUntil) {
      const end = xml.indexOf(this.dropUntil);
      if (end < 0) {
        this.carry = xml.slice(Math.max(0, xml.length - (this.dropUntil.length - 1)));
        return;
      }
      xml = xml.slice(end + this.dropUntil.length);
      this.dropUntil = undefined;
    }
    let i = 0;
    while (i < xml.length) {
      const lt = xml.indexOf("<", i);
      const textEnd = lt < 0 ? xml.length : lt;
      if (textEnd > i) {
        // An entity reference cut by the chunk's end waits for the rest.
        let end = textEnd;
        const amp = lt < 0 && !last ? xml.lastIndexOf("&", end) : -1;
        if (amp >= i && amp > end - MAX_ENTITY && !xml.includes(";", amp)) end = amp;
        if (end > i) this.handler.text(decodeXml(xml.slice(i, end)));
        if (end < textEnd) this.carry = xml.slice(end);
      }
      if (lt < 0) return;
      i = this.markup(xml, lt, last);
    }
  }

  /** Reads the markup at `lt`; answers where reading goes on. */
  private markup(xml: string, lt: number, last: boolean): number {
    const second = xml.charCodeAt(lt + 1);
    if (second === 0x21 && (xml.startsWith("<!DOCTYPE", lt) || xml.startsWith("<!ENTITY", lt))) throw new FileSkipped(DECLARES_ENTITIES);
    const close =
      second === 0x21 && xml.startsWith("<![CDATA[", lt)
        ? "]]>"
        : second === 0x21 && xml.startsWith("<!--", lt)
          ? "-->"
          : second === 0x3f
            ? "?>"
            : ">";
    const end = xml.indexOf(close, lt + 1);
    if (end < 0) {
      // `<!` cut before its keyword is whole: it waits, and is looked at again.
      if (last) return xml.length;
      if (xml.length - lt <= MAX_CARRY) this.carry = xml.slice(lt);
      else this.dropUntil = close;
      return xml.length;
    }
    const next = end + close.length;
    if (close === "]]>") this.handler.text(xml.slice(lt + 9, end));
    else if (close === ">") this.tag(xml, lt, end);
    return next;
  }

  private tag(xml: string, lt: number, gt: number): void {
    const closing = xml.charCodeAt(lt + 1) === 0x2f;
    const nameStart = closing ? lt + 2 : lt + 1;
    let nameEnd = nameStart;
    while (nameEnd < gt && !endsName(xml.charCodeAt(nameEnd))) nameEnd++;
    const name = xml.slice(nameStart, nameEnd);
    if (closing) {
      this.handler.close(name);
      return;
    }
    const selfClosing = xml.charCodeAt(gt - 1) === 0x2f;
    this.handler.open(name, xml.slice(nameEnd, selfClosing ? gt - 1 : gt), selfClosing);
    if (selfClosing) this.handler.close(name);
  }
}
