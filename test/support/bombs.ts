// Hostile documents, built in a few milliseconds: a deflate stream is one block compressed
// once and repeated (each ends on a full flush, byte-aligned and referring to nothing before
// it), so a 1.5 MB file inflates to hundreds of megabytes without ever being built whole.
import { constants, deflateRawSync } from "node:zlib";

const FINAL_EMPTY_BLOCK = Buffer.from([0x03, 0x00]);

/** Raw deflate that inflates to `head`, then `unit` × `perBlock` × `blocks`, then `tail`. */
export function deflateBomb(head: string, unit: string, perBlock: number, blocks: number, tail = ""): { data: Buffer; size: number } {
  const flush = { finishFlush: constants.Z_FULL_FLUSH };
  const block = deflateRawSync(Buffer.from(unit.repeat(perBlock)), flush);
  const parts = [
    deflateRawSync(Buffer.from(head), flush),
    ...Array<Buffer>(blocks).fill(block),
    deflateRawSync(Buffer.from(tail), flush),
    FINAL_EMPTY_BLOCK,
  ];
  return { data: Buffer.concat(parts), size: head.length + unit.length * perBlock * blocks + tail.length };
}

export interface ZipPart {
  name: string;
  /** Raw deflate (method 8), or the bytes as they are (method 0). */
  data: Buffer;
  method: 0 | 8;
  /** The uncompressed size the archive declares (which a hostile archive may understate). */
  size: number;
}

/** The fields a local header (from byte 4) and a central header (from byte 6) share, in the same order. */
function writeEntryFields(header: Buffer, at: number, p: ZipPart, nameLength: number): void {
  header.writeUInt16LE(20, at); // version needed to extract
  header.writeUInt16LE(p.method, at + 4);
  header.writeUInt32LE(p.data.length, at + 14);
  header.writeUInt32LE(p.size, at + 18);
  header.writeUInt16LE(nameLength, at + 22);
}

/** A ZIP archive of `parts` (CRCs left 0: readers of DOCX do not check them). */
export function zipOf(parts: ZipPart[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const p of parts) {
    const name = Buffer.from(p.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    writeEntryFields(local, 4, p, name.length);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // version made by
    writeEntryFields(central, 6, p, name.length);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, p.data);
    centrals.push(central, name);
    offset += local.length + name.length + p.data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const stored = (name: string, text: string): ZipPart => ({ name, data: Buffer.from(text), method: 0, size: Buffer.byteLength(text) });

const CONTENT_TYPES = `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`;
const RELS = `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`;
const DOCUMENT_HEAD = `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`;
const PARAGRAPH = "<w:p><w:r><w:t>aaaa</w:t></w:r></w:p>";
/** A paragraph without text: markup only, so no bound on text is reached first. */
const EMPTY_PARAGRAPH = "<w:p><w:r><w:rPr><w:b/></w:rPr></w:r></w:p>";

/**
 * The attack report's DOCX: word/document.xml inflates to `megabytes` of short paragraphs
 * (with "aaaa" each, or none). `declared` is the size its directory gives: the true one, or a lie.
 */
export function docxBomb(
  megabytes: number,
  declared: "true size" | "understated" = "true size",
  text = true,
): { file: Buffer; size: number } {
  const perBlock = 10_000;
  const unit = text ? PARAGRAPH : EMPTY_PARAGRAPH;
  const blocks = Math.ceil((megabytes * 1024 * 1024) / (unit.length * perBlock));
  const { data, size } = deflateBomb(DOCUMENT_HEAD, unit, perBlock, blocks, "</w:body></w:document>");
  const document: ZipPart = { name: "word/document.xml", data, method: 8, size: declared === "true size" ? size : 4096 };
  return { file: zipOf([stored("[Content_Types].xml", CONTENT_TYPES), stored("_rels/.rels", RELS), document]), size };
}

/** A one-page PDF whose content stream (FlateDecode) inflates to `megabytes` of text operators. */
export function pdfBomb(megabytes: number): Buffer {
  const unit = "BT /F1 12 Tf 10 10 Td (aaaa) Tj ET\n";
  const perBlock = 10_000;
  const blocks = Math.ceil((megabytes * 1024 * 1024) / (unit.length * perBlock));
  const raw = deflateBomb("", unit, perBlock, blocks).data;
  // zlib's wrapping around the raw deflate (its checksum is never reached).
  const stream = Buffer.concat([Buffer.from([0x78, 0x9c]), raw, Buffer.alloc(4)]);
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    null,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  const chunks: Buffer[] = [Buffer.from("%PDF-1.4\n")];
  const offsets: number[] = [];
  let length = chunks[0]!.length;
  objects.forEach((body, i) => {
    offsets.push(length);
    const part =
      body === null
        ? Buffer.concat([
            Buffer.from(`${i + 1} 0 obj\n<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`),
            stream,
            Buffer.from("\nendstream\nendobj\n"),
          ])
        : Buffer.from(`${i + 1} 0 obj\n${body}\nendobj\n`);
    chunks.push(part);
    length += part.length;
  });
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`;
  chunks.push(Buffer.from(xref));
  return Buffer.concat(chunks);
}

/** The outside review's PDF: a header, then `stream` lines and nothing else (300,000 of them: 2.1 MB). */
export const pdfStreamFlood = (streams: number): Buffer => Buffer.from(`%PDF-1.4\n${"stream\n".repeat(streams)}`);
