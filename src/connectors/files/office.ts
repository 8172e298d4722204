// ODT and PPTX text, read as DOCX's is (docx.ts): from the package's XML as it inflates, within
// the bounds of ZipReader and TextBudget, in the reading worker (D31). ODT: the paragraphs and
// headings of the body in document order (a blank line after each, as DOCX), without comments
// or deleted changes. PPTX: slide by slide in the presentation's order, each under "Slide n",
// its shapes' paragraphs in the order the slide lists them.
import type { Extracted } from "./extract";
import { TextBudget } from "./limits";
import { coreTitle, mainPart, relationships, streamPart } from "./package";
import { attribute, localName } from "./xml";
import { ZipReader } from "./zip";

const zipOf = (bytes: Uint8Array) => new ZipReader(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));

/** ODF elements whose text is not the document's: comments, deleted changes, a note's number. */
const ODF_HIDDEN = new Set(["office:annotation", "text:tracked-changes", "text:note-citation"]);

export async function odtText(bytes: Uint8Array): Promise<Extracted> {
  const zip = zipOf(bytes);
  const out = new TextBudget();
  let inBody = 0;
  let hidden = 0;
  let paragraphs = 0;
  const found = await streamPart(
    zip,
    "content.xml",
    {
      open(name, attributes, selfClosing) {
        if (name === "office:body") inBody++;
        else if (ODF_HIDDEN.has(name)) {
          if (!selfClosing) hidden++;
        } else if (!inBody || hidden) return;
        else if (name === "text:p" || name === "text:h") paragraphs++;
        else if (name === "text:s") out.add(" ".repeat(Math.min(Number(attribute(attributes, "text:c") ?? 1) || 1, 1024)));
        else if (name === "text:tab") out.add("\t");
        else if (name === "text:line-break") out.add("\n");
      },
      close(name) {
        if (name === "office:body") inBody = Math.max(0, inBody - 1);
        else if (ODF_HIDDEN.has(name)) hidden = Math.max(0, hidden - 1);
        else if (inBody && !hidden && (name === "text:p" || name === "text:h") && paragraphs) {
          paragraphs--;
          out.add("\n\n");
        }
      },
      text(text) {
        if (inBody && !hidden && paragraphs) out.add(text);
      },
    },
    () => out.full,
  );
  if (!found) throw new Error("no content.xml in the ODT");
  return { text: out.text().trim(), title: await coreTitle(zip, "meta.xml") };
}

export async function pptxText(bytes: Uint8Array): Promise<Extracted> {
  const zip = zipOf(bytes);
  const presentation = await mainPart(zip);
  const order: string[] = [];
  if (
    !(await streamPart(zip, presentation, {
      open(name, attributes) {
        if (localName(name) !== "sldId") return;
        const rel = /\s[\w.-]*:id\s*=\s*["']([^"']+)["']/.exec(attributes)?.[1];
        if (rel) order.push(rel);
      },
      close() {},
      text() {},
    }))
  )
    throw new Error("no presentation in the PPTX");
  const rels = await relationships(zip, presentation);
  const out = new TextBudget();
  let slides = 0;
  for (const id of order) {
    const rel = rels.get(id);
    if (!rel?.type.endsWith("/slide") || out.full) continue;
    slides++;
    out.add(`${slides > 1 ? "\n" : ""}Slide ${slides}\n`);
    let inText = false;
    await streamPart(
      zip,
      rel.target,
      {
        open(name) {
          const local = localName(name);
          if (local === "t") inText = true;
          else if (local === "br") out.add("\n");
        },
        close(name) {
          const local = localName(name);
          if (local === "t") inText = false;
          else if (local === "p") out.add("\n");
        },
        text(text) {
          if (inText) out.add(text);
        },
      },
      () => out.full,
    );
  }
  return {
    text: out
      .text()
      .replace(/\n{3,}/g, "\n\n")
      .trim(),
    title: await coreTitle(zip),
    pages: slides,
  };
}
