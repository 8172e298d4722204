// What one file may cost (issue 13): the file on disk is bounded, and so is what is unpacked
// from it (a 1.6 MB DOCX can inflate to 570 MB), the text kept and the pages read. A file past
// a bound is skipped with a reason (FileSkipped), never a crash of the service, and text past
// its bound is cut. Extraction runs in the reading worker (reading/reader.ts, D31), which also
// bounds the CPU time of each file; these bound its memory.

/** Files larger than this on disk are not read at all. */
export const MAX_FILE_BYTES = 50 * 1024 * 1024;
/** Bytes inflated from one file: a DOCX's parts, a PDF's compressed streams. */
export const MAX_EXPANDED_BYTES = 64 * 1024 * 1024;
/** Characters of text kept from one file; the rest is cut. */
export const MAX_TEXT_CHARS = 4 * 1024 * 1024;
/** Pages of a PDF read; later ones are left out. */
export const MAX_PDF_PAGES = 2_000;
/** Characters of HTML parsed (its DOM costs many times its size); the rest is left out. */
export const MAX_MARKUP_CHARS = 8 * 1024 * 1024;
/** Elements nested in HTML, at most (html-to-text walks them recursively; 8 MB of `<b>` took 600 MB and 6 s). */
export const MAX_HTML_DEPTH = 1000;
/** Values in one JSON file (each costs tens of bytes in memory for its one or two in the file). */
export const MAX_JSON_VALUES = 2_000_000;
/** Characters of one CSV line (or field), or of one spreadsheet row: a file with a longer one is skipped. */
export const MAX_RECORD_CHARS = 1024 * 1024;
/**
 * Rows of one spreadsheet (all its sheets), at most: each is a record in the index. Counted as
 * the file holds them (an XLSX's row elements, empty or not; an ODS row repeated n times with
 * something in it, n), so that a million empty rows cost no more than this many.
 */
export const MAX_SHEET_ROWS = 200_000;
/** Characters of one spreadsheet's cells, at most: a shared string is stored once but may fill every row. */
export const MAX_SHEET_CHARS = 16 * 1024 * 1024;

/** Entries of one ZIP container (DOCX, XLSX, ODS, ODT, PPTX): office files hold tens to hundreds. */
export const MAX_ZIP_ENTRIES = 10_000;

const MB = 1024 * 1024;
export const EXPANDS_TOO_FAR = `expands beyond ${MAX_EXPANDED_BYTES / MB} MB`;
export const TOO_MANY_ENTRIES = `holds more than ${MAX_ZIP_ENTRIES} ZIP entries`;

/** A file left out on purpose (a bound), with the reason shown in the connector's status. */
export { SourceSkipped as FileSkipped } from "../types";

/** Text kept of a file: at most MAX_TEXT_CHARS. */
export const boundedText = (text: string): string => (text.length > MAX_TEXT_CHARS ? text.slice(0, MAX_TEXT_CHARS) : text);

/** Pieces joined into one string at a time: many small slices would each keep their whole source alive. */
const JOIN_EVERY = 1024;

/** Accumulates text up to MAX_TEXT_CHARS; `full` says when to stop reading. */
export class TextBudget {
  private readonly joined: string[] = [];
  private pieces: string[] = [];
  private length = 0;

  get full(): boolean {
    return this.length >= MAX_TEXT_CHARS;
  }

  add(text: string): void {
    if (this.full || !text) return;
    const room = MAX_TEXT_CHARS - this.length;
    const kept = text.length > room ? text.slice(0, room) : text;
    this.pieces.push(kept);
    this.length += kept.length;
    if (this.pieces.length >= JOIN_EVERY) this.flush();
  }

  private flush(): void {
    this.joined.push(this.pieces.join(""));
    this.pieces = [];
  }

  text(): string {
    this.flush();
    return this.joined.join("");
  }
}
