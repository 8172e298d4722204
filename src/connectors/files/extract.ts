// Text from the document kinds of D18, with no shelling out: text and Markdown as they are,
// HTML through html-to-text, PDF through unpdf (pdf.js, pdf.ts), DOCX from its document's XML
// (docx.ts), ODT and PPTX likewise (office.ts; spreadsheets are rows: sheets.ts), CSV through
// csv-parse, JSON flattened to "path: value" lines. Every kind works within the bounds of
// limits.ts: a file past one is skipped (FileSkipped) or its text cut.
// The libraries load on first use, so start-up does not pay for them.
import { extname } from "node:path";
import { docxText } from "./docx";
import { boundedText, FileSkipped, MAX_HTML_DEPTH, MAX_JSON_VALUES, MAX_MARKUP_CHARS, MAX_RECORD_CHARS, TextBudget } from "./limits";
import { odtText, pptxText } from "./office";
import { pdfText } from "./pdf";

/** Spreadsheets: a record per row (sheets.ts), not one per file. */
export const SHEET_TYPES = { ".xlsx": "xlsx", ".ods": "ods" } as const;

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
  ".odt": "odt",
  ".pptx": "pptx",
  ...SHEET_TYPES,
} as const;

export type FileType = (typeof FILE_TYPES)[keyof typeof FILE_TYPES];
export type SheetType = (typeof SHEET_TYPES)[keyof typeof SHEET_TYPES];
/** A type read as one document (one record per file). */
export type DocumentType = Exclude<FileType, SheetType>;

export const isSheetType = (type: FileType): type is SheetType => Object.values(SHEET_TYPES).includes(type as SheetType);

export const fileTypeOf = (path: string): FileType | undefined => FILE_TYPES[extname(path).toLowerCase() as keyof typeof FILE_TYPES];

export interface Extracted {
  text: string;
  title?: string;
  pages?: number;
}

/** A document's record's title and text: its own title, else `name` (its file's). Where it is chunked and where it is stored alike. */
export const fileTexts = (extracted: Extracted, name: string) => ({ title: extracted.title || name, content: extracted.text.trim() });

function jsonLines(value: unknown, prefix: string, out: TextBudget): void {
  if (out.full) return;
  if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      jsonLines(v, prefix ? `${prefix}.${k}` : k, out);
      if (out.full) return;
    }
  } else if (value !== null && value !== undefined) out.add(`${prefix ? `${prefix}: ${String(value)}` : String(value)}\n`);
}

/** Values in a JSON text, counted by their separators (an overestimate: those in strings count too). */
function jsonValues(bytes: Uint8Array): number {
  let n = 0;
  for (const b of bytes) if (b === 0x2c || b === 0x7b || b === 0x5b) n++;
  return n;
}

/** Elements that hold nothing, and those the parser closes when a sibling opens (p after p): neither nests. */
const NOT_NESTING = new Set(
  "area base br col embed hr img input link meta param source track wbr p li dt dd option optgroup tr td th thead tbody tfoot rt rp".split(
    " ",
  ),
);

/** A letter, digit, '-', ':' or '_': part of a tag's name. */
const isNameChar = (c: number) =>
  (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x3a) || c === 0x2d || c === 0x5f;

/**
 * Whether `html` nests elements deeper than `max`, in one pass, as htmlparser2 builds them: a
 * start tag opens one, an end tag closes down to the nearest open one of its name (mailparser
 * refuses such HTML in a mail the same way).
 */
export function nestsDeeperThan(html: string, max: number): boolean {
  const stack: string[] = [];
  const open = new Map<string, number>();
  for (let i = html.indexOf("<"); i >= 0; ) {
    if (html.startsWith("!--", i + 1)) {
      const end = html.indexOf("-->", i + 4);
      i = end < 0 ? -1 : html.indexOf("<", end + 3);
      continue;
    }
    const closing = html.charCodeAt(i + 1) === 0x2f;
    const from = i + (closing ? 2 : 1);
    let to = from;
    while (to < html.length && isNameChar(html.charCodeAt(to))) to++;
    const name = to > from ? html.slice(from, to).toLowerCase() : undefined;
    const end = name ? html.indexOf(">", to) : i;
    if (end < 0) break;
    if (name && !NOT_NESTING.has(name)) {
      if (!closing) {
        stack.push(name);
        open.set(name, (open.get(name) ?? 0) + 1);
        if (stack.length > max) return true;
      } else if (open.get(name)) {
        let popped: string | undefined;
        do {
          popped = stack.pop()!;
          open.set(popped, open.get(popped)! - 1);
        } while (popped !== name);
      }
    }
    i = html.indexOf("<", end + 1);
  }
  return false;
}

/** Thrown from csv-parse's record hook once the text is full: reading stops there. */
class Enough extends Error {}

function csvText(bytes: Uint8Array, parseCsv: typeof import("csv-parse/sync").parse): string {
  const out = new TextBudget();
  try {
    // Records are not kept: each becomes a line of text, until the text is full.
    parseCsv(Buffer.from(bytes), {
      columns: true,
      skip_empty_lines: true,
      relax_column_count: true,
      bom: true,
      max_record_size: MAX_RECORD_CHARS,
      on_record: (record: Record<string, string>) => {
        out.add(
          `${Object.entries(record)
            .map(([k, v]) => `${k}: ${v}`)
            .join("; ")}\n`,
        );
        if (out.full) throw new Enough();
        return undefined;
      },
    });
  } catch (error) {
    if (!(error instanceof Enough) && !((error as { cause?: unknown }).cause instanceof Enough)) {
      if ((error as { code?: string }).code === "CSV_MAX_RECORD_SIZE")
        throw new FileSkipped(`has a line longer than ${MAX_RECORD_CHARS} characters`);
      throw error;
    }
  }
  return out.text().replace(/\n$/, "");
}

export async function extractText(bytes: Uint8Array, type: DocumentType): Promise<Extracted> {
  switch (type) {
    case "text":
      return { text: boundedText(new TextDecoder().decode(bytes)) };
    case "markdown": {
      const text = boundedText(new TextDecoder().decode(bytes));
      return { text, title: /^#\s+(.+)$/m.exec(text)?.[1]?.trim() };
    }
    case "html": {
      const { convert: htmlToText } = await import("html-to-text");
      // The DOM costs many times the markup: beyond MAX_MARKUP_CHARS the rest is left out.
      const html = new TextDecoder().decode(bytes).slice(0, MAX_MARKUP_CHARS);
      if (nestsDeeperThan(html, MAX_HTML_DEPTH)) throw new FileSkipped(`nests elements deeper than ${MAX_HTML_DEPTH} levels`);
      const text = htmlToText(html, {
        wordwrap: false,
        limits: { maxInputLength: MAX_MARKUP_CHARS },
        selectors: [
          { selector: "a", options: { ignoreHref: true } },
          { selector: "img", format: "skip" },
        ],
      });
      return { text: boundedText(text), title: /<title>([^<]*)<\/title>/i.exec(html.slice(0, 64 * 1024))?.[1]?.trim() };
    }
    case "pdf":
      return pdfText(bytes);
    case "docx":
      return docxText(bytes);
    case "odt":
      return odtText(bytes);
    case "pptx":
      return pptxText(bytes);
    case "csv": {
      const { parse: parseCsv } = await import("csv-parse/sync");
      return { text: csvText(bytes, parseCsv) };
    }
    case "json": {
      if (jsonValues(bytes) > MAX_JSON_VALUES) throw new FileSkipped(`holds more than ${MAX_JSON_VALUES} values`);
      const out = new TextBudget();
      jsonLines(JSON.parse(new TextDecoder().decode(bytes)), "", out);
      return { text: out.text().replace(/\n$/, "") };
    }
  }
}
