// Text from the document kinds of D18, with well-kept libraries and no shelling out:
// text and Markdown as they are, HTML through html-to-text, PDF through unpdf (pdf.js),
// DOCX through mammoth, CSV through csv-parse, JSON flattened to "path: value" lines.
// The libraries load on first use, so start-up does not pay for them.
import { extname } from "node:path";

export const FILE_TYPES = {
  ".txt": "text",
  ".text": "text",
  ".md": "markdown",
  ".markdown": "markdown",
  ".html": "html",
  ".htm": "html",
  ".pdf": "pdf",
  ".docx": "docx",
  ".csv": "csv",
  ".json": "json",
} as const;

export type FileType = (typeof FILE_TYPES)[keyof typeof FILE_TYPES];

export const fileTypeOf = (path: string): FileType | undefined => FILE_TYPES[extname(path).toLowerCase() as keyof typeof FILE_TYPES];

export interface Extracted {
  text: string;
  title?: string;
  pages?: number;
}

function jsonLines(value: unknown, prefix = "", out: string[] = []): string[] {
  if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) jsonLines(v, prefix ? `${prefix}.${k}` : k, out);
  } else if (value !== null && value !== undefined) out.push(prefix ? `${prefix}: ${String(value)}` : String(value));
  return out;
}

export async function extractText(bytes: Uint8Array, type: FileType): Promise<Extracted> {
  switch (type) {
    case "text":
      return { text: new TextDecoder().decode(bytes) };
    case "markdown": {
      const text = new TextDecoder().decode(bytes);
      return { text, title: /^#\s+(.+)$/m.exec(text)?.[1]?.trim() };
    }
    case "html": {
      const { convert: htmlToText } = await import("html-to-text");
      const html = new TextDecoder().decode(bytes);
      return { text: htmlToText(html, { wordwrap: false, selectors: [{ selector: "a", options: { ignoreHref: true } }, { selector: "img", format: "skip" }] }), title: /<title>([^<]*)<\/title>/i.exec(html)?.[1]?.trim() };
    }
    case "pdf": {
      const { getDocumentProxy, extractText: pdfText, getMeta } = await import("unpdf");
      const pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
      const { text, totalPages } = await pdfText(pdf, { mergePages: true });
      const meta = await getMeta(pdf).catch(() => undefined);
      const title = (meta?.info as { Title?: string } | undefined)?.Title?.trim();
      await (pdf as unknown as { cleanup?: () => Promise<void> }).cleanup?.();
      return { text, title: title || undefined, pages: totalPages };
    }
    case "docx": {
      const mammoth = await import("mammoth");
      const { value } = await mammoth.extractRawText({ buffer: Buffer.from(bytes) });
      return { text: value };
    }
    case "csv": {
      const { parse: parseCsv } = await import("csv-parse/sync");
      const rows = parseCsv(Buffer.from(bytes), { columns: true, skip_empty_lines: true, relax_column_count: true, bom: true }) as Array<Record<string, string>>;
      return { text: rows.map((r) => Object.entries(r).map(([k, v]) => `${k}: ${v}`).join("; ")).join("\n") };
    }
    case "json":
      return { text: jsonLines(JSON.parse(new TextDecoder().decode(bytes))).join("\n") };
  }
}
