// DOCX text, read from the main document's XML as it inflates, in one pass: the text of runs, a
// tab for a run's tab, a line for a break, a blank line after each paragraph (mammoth's raw
// text, the same on mammoth's own test documents). mammoth built the whole document model for
// this: 4 MB of dense XML took 730 MB and 6.4 s on the request thread (measured), so a small
// hostile file could stop the service. Here the markup is read by the office files' one XML
// reader (xml.ts: a chunk and a cut-off tag held at a time, no document type), the parts come
// from ZipReader (which bounds what is inflated), and it all runs in the reading worker (D31).
import type { Extracted } from "./extract";
import { TextBudget } from "./limits";
import { coreTitle, mainPart, streamPart } from "./package";
import { type XmlHandler, XmlStream } from "./xml";
import { ZipReader } from "./zip";

const WORD_NS = ["http://schemas.openxmlformats.org/wordprocessingml/2006/main", "http://purl.oclc.org/ooxml/wordprocessingml/main"];
const COMPAT_NS = "http://schemas.openxmlformats.org/markup-compatibility/2006";

/** The prefix a start tag's attributes give one of `namespaces` (`w:`, or "" when it is the default one). */
function prefixOf(attributes: string, namespaces: string[], fallback: string): string {
  for (const m of attributes.matchAll(/xmlns(?::([\w.-]+))?\s*=\s*["']([^"']+)["']/g))
    if (namespaces.includes(m[2]!)) return m[1] ? `${m[1]}:` : "";
  return fallback;
}

/**
 * What XmlStream tells of a WordprocessingML document, as its text in `out`. Only `t` is text
 * (never deleted text or field codes); `mc:Choice` is skipped for its `mc:Fallback`, as mammoth
 * did. The namespaces' prefixes are the root element's.
 */
function wordHandler(out: TextBudget): XmlHandler {
  let names: { text: string; run: string; paragraph: string; tab: string; br: string; cr: string; choice: string } | undefined;
  let runs = 0;
  let inText = false;
  let skipping = 0;
  /** A paragraph's self-closing tag was just opened: an empty `<w:p/>` adds no blank line. */
  let emptyParagraph = false;
  return {
    open(name, attributes, selfClosing) {
      if (!names) {
        const w = prefixOf(attributes, WORD_NS, "w:");
        const mc = prefixOf(attributes, [COMPAT_NS], "mc:");
        names = { text: `${w}t`, run: `${w}r`, paragraph: `${w}p`, tab: `${w}tab`, br: `${w}br`, cr: `${w}cr`, choice: `${mc}Choice` };
      }
      // A self-closing tag is closed right after (XmlStream): what it opens here, its close undoes.
      if (name === names.choice) skipping++;
      else if (skipping) return;
      else if (name === names.text) inText = !selfClosing;
      else if (name === names.run) runs++;
      else if (name === names.paragraph) emptyParagraph = selfClosing;
      else if (runs > 0 && name === names.tab) out.add("\t");
      else if (runs > 0 && (name === names.br || name === names.cr)) out.add("\n");
    },
    close(name) {
      if (!names) return;
      if (name === names.choice) skipping = Math.max(0, skipping - 1);
      else if (skipping) return;
      else if (name === names.text) inText = false;
      else if (name === names.run) runs = Math.max(0, runs - 1);
      else if (name === names.paragraph) {
        if (!emptyParagraph) out.add("\n\n");
        emptyParagraph = false;
      }
    },
    text(text) {
      if (inText && !skipping) out.add(text);
    },
  };
}

/** The text of a WordprocessingML document fed in pieces (the main part of a DOCX), up to MAX_TEXT_CHARS. */
export class WordText {
  private readonly out = new TextBudget();
  readonly handler = wordHandler(this.out);
  private readonly stream = new XmlStream(this.handler);

  get full(): boolean {
    return this.out.full;
  }

  text(): string {
    return this.out.text();
  }

  /** `last` when no more follows: nothing is carried. */
  feed(chunk: string, last = false): void {
    this.stream.feed(chunk, last);
  }
}

export async function docxText(bytes: Uint8Array): Promise<Extracted> {
  const zip = new ZipReader(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const main = await mainPart(zip);
  const text = new WordText();
  // Stopping once the text is full stops the inflation too.
  if (!(await streamPart(zip, main, text.handler, () => text.full))) throw new Error("no main document in the DOCX");
  return { text: text.text(), title: await coreTitle(zip) };
}
