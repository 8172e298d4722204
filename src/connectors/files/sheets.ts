// Spreadsheets (XLSX and ODS) as records, read in the reading worker (D31): each sheet's first
// non-empty row names its columns, and each later non-empty row is one record, read as the SQL
// kind reads a table's row ("Header: value" lines, the cells in its metadata by their header
// names), its address the file, the sheet and the row number (its citation ids take its cells
// instead, D36: sheetRowCited). A small reader over the package's
// XML (ZipReader bounds what inflates, XmlStream holds a chunk at a time): npm's readers
// (SheetJS) unzip with their own inflater and build the whole workbook in memory, out of reach
// of those bounds.
//
// XLSX cells are shared strings, inline strings, numbers (Excel's binary doubles shown with 15
// significant digits, as Excel shows them), booleans, errors and dates: a number whose style's
// format is a date or time is a serial day count from 1899-12-30 (with Excel's 1900 leap-year
// bug) or, in a workbook of the 1904 system, from 1904-01-01. ODS cells carry their typed value
// in attributes (office:value, office:date-value ...), repeated cells and rows as counts.
import type { SourceRecord } from "../types";
import type { SheetType } from "./extract";
import { FileSkipped, MAX_RECORD_CHARS, MAX_SHEET_CHARS, MAX_SHEET_ROWS } from "./limits";
import { mainPart, relationships, streamPart } from "./package";
import { attribute, localName, type XmlHandler } from "./xml";
import { ZipReader } from "./zip";

/** Where a spreadsheet's records are found: its path in the folder, its address, what the files kind says of it. */
export interface SheetPlace {
  file: string;
  url: string;
  fileType: SheetType;
  size: number;
  /** ISO 8601: the file's last change, each record's date (dates of the files kind are file times). */
  modified: string;
}

/**
 * Rows (row elements, empty or not; an ODS row repeated n times with something in it counts n)
 * read between two words to the reader: each word crosses to the serving thread, which then
 * reads the worker's CPU time. The budget of a record (D31) covers this many rows.
 */
export const ROWS_PER_BUDGET = 1024;
/** The columns of a sheet (Excel's and LibreOffice's most): a cell beyond is left out. */
export const MAX_COLUMNS = 16_384;

const TOO_MANY_ROWS = `holds more than ${MAX_SHEET_ROWS} rows`;
const ROW_TOO_LONG = `has a row longer than ${MAX_RECORD_CHARS} characters`;
const TOO_MUCH_TEXT = `holds more than ${MAX_SHEET_CHARS} characters of cells`;

/** Column 0 as "A", 26 as "AA". */
export function columnName(index: number): string {
  let name = "";
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

/** "BC12" as column 54 (0-based); undefined past MAX_COLUMNS or without letters. */
function columnOf(reference: string): number | undefined {
  let n = 0;
  let i = 0;
  for (; i < reference.length; i++) {
    const c = reference.charCodeAt(i) & ~0x20;
    if (c < 65 || c > 90) break;
    n = n * 26 + (c - 64);
    if (n > MAX_COLUMNS) return undefined;
  }
  return i ? n - 1 : undefined;
}

/** A cell: its column, its text, and its number when it is one (kept as a number in the metadata, as SQL keeps one). */
interface Cell {
  column: number;
  text: string;
  number?: number;
}

/**
 * Turns rows into records, sheet by sheet, within the file's bounds: the rows counted
 * (MAX_SHEET_ROWS), a row's characters (MAX_RECORD_CHARS: its cells', then its record's with
 * the header names) and all records' (MAX_SHEET_CHARS).
 */
class Rows {
  readonly records: SourceRecord[] = [];
  private rows = 0;
  private chars = 0;
  private sheet = "";
  private header?: Map<number, string>;
  private readonly seenIds = new Set<string>();
  /** The sheet's rows so far by a hash of their record's text: the n-th of the same cells is its copy n (COPY_FIELD). */
  private copies = new Map<bigint | number, number>();

  constructor(
    private readonly place: SheetPlace,
    private readonly onRecord: () => void,
  ) {}

  startSheet(name: string): void {
    this.sheet = name;
    this.header = undefined;
    this.copies = new Map();
  }

  /** One more row element (or `times` repeated ones), whatever it holds. */
  count(times = 1): void {
    const before = this.rows;
    this.rows += times;
    if (this.rows > MAX_SHEET_ROWS) throw new FileSkipped(TOO_MANY_ROWS);
    if (Math.floor(this.rows / ROWS_PER_BUDGET) > Math.floor(before / ROWS_PER_BUDGET)) this.onRecord();
  }

  /** Checks a cell's text as it grows: one past the row's bound refuses the file before it is built whole. */
  checkCell(chars: number): void {
    if (chars > MAX_RECORD_CHARS) throw new FileSkipped(ROW_TOO_LONG);
  }

  /** A row's cells (any order, empty ones left out), at `row` (1-based), maybe repeated. */
  add(row: number, cells: Cell[], repeated = 1): void {
    if (!cells.length) return;
    cells.sort((a, b) => a.column - b.column);
    let length = 0;
    for (const c of cells) length += c.text.length;
    if (length > MAX_RECORD_CHARS) throw new FileSkipped(ROW_TOO_LONG);
    if (!this.header) {
      this.header = new Map();
      const used = new Set<string>();
      for (const c of cells) {
        let name = c.text.replace(/\s+/g, " ").trim().slice(0, 200) || columnName(c.column);
        // Two columns of one name are told apart by their letters.
        if (used.has(name)) name = `${name} (${columnName(c.column)})`;
        used.add(name);
        this.header.set(c.column, name);
      }
      return;
    }
    const header = this.header;
    const named = cells.map((c) => ({ ...c, name: header.get(c.column) ?? columnName(c.column) }));
    // What the record holds, its header names with each cell (16,384 cells of one letter under long names are no small row).
    let size = 0;
    for (const c of named) size += c.name.length + c.text.length + 3;
    if (size > MAX_RECORD_CHARS) throw new FileSkipped(ROW_TOO_LONG);
    for (let n = 0; n < repeated; n++) {
      this.chars += size;
      if (this.chars > MAX_SHEET_CHARS) throw new FileSkipped(TOO_MUCH_TEXT);
      this.records.push(this.record(row + n, named));
    }
  }

  private record(row: number, named: Array<Cell & { name: string }>): SourceRecord {
    const { place, sheet } = this;
    const label = named
      .find((c) => c.number === undefined && /\p{L}/u.test(c.text))
      ?.text.replace(/\s+/g, " ")
      .trim();
    let id = `${place.file}#${sheet}/${row}`;
    // Two sheets of one name (ODS allows it): the second's rows are told apart.
    for (let n = 2; this.seenIds.has(id); n++) id = `${place.file}#${sheet} (${n})/${row}`;
    this.seenIds.add(id);
    const metadata: SourceRecord["metadata"] = {};
    for (const c of named) metadata[c.name] = c.number ?? c.text;
    // `table`: a row of a table, as a database's (documents/kinds.ts "row"), so that an answer
    // reads it cell by cell (the column asked and the cells saying which row) and `kinds` finds it.
    Object.assign(metadata, { file_type: place.fileType, sheet, table: sheet, row, size: place.size, modified: place.modified });
    const content = named.map((c) => `${c.name}: ${c.text}`).join("\n");
    const digest = Bun.hash(content);
    const copy = (this.copies.get(digest) ?? 0) + 1;
    this.copies.set(digest, copy);
    if (copy > 1) metadata[COPY_FIELD] = copy;
    return {
      id,
      title: `${label ? `${label.slice(0, 200)} · ` : ""}${sheet}${rowTitle(row)}`,
      content,
      source_url: `${place.url}#${encodeURIComponent(sheet)}/${row}`,
      date: place.modified,
      type: "file",
      path: id,
      metadata,
    };
  }
}

/** Where a row's title names its place: after its label and sheet. */
const rowTitle = (row: number) => `, row ${row}`;

/**
 * The metadata field of a row whose very cells (its record's text) an earlier row of its sheet
 * holds too: 2 for the second such row, 3 for the third (none for the first). Two rows of the
 * same cells are two records and keep two sets of ids (D36), as an ODS row repeated n times is n.
 */
const COPY_FIELD = "copy";

/** What a spreadsheet row's metadata holds besides its cells: where it is (its cells are the rest). */
export const SHEET_PLACE_FIELDS: ReadonlySet<string> = new Set(["file_type", "sheet", "table", "row", "size", "modified", COPY_FIELD]);

/**
 * What a spreadsheet row's citation ids are made of (D36: unchanged content, the same ids): its
 * file and sheet and its cells (the caller hashes them, with its title less its row), not its row
 * number, which a row inserted above changes (the record's id, path and source_url keep it for
 * the links). The n-th row of the same cells in a sheet is told apart by its copy number.
 * Undefined for any other record.
 */
export function sheetRowCited(
  record: Pick<SourceRecord, "id" | "type" | "title" | "metadata">,
): { table: string; copy: number; title: string } | undefined {
  const { file_type, sheet, row, copy } = record.metadata;
  if (record.type !== "file" || (file_type !== "xlsx" && file_type !== "ods") || typeof sheet !== "string" || typeof row !== "number")
    return undefined;
  const place = `/${row}`;
  if (!record.id.endsWith(place)) return undefined;
  const title = rowTitle(row);
  return {
    table: record.id.slice(0, -place.length),
    copy: typeof copy === "number" ? copy : 1,
    title: record.title.endsWith(title) ? record.title.slice(0, -title.length) : record.title,
  };
}

/** A number as Excel shows it: at most 15 significant digits (0.1 + 0.2 is 0.3). */
function shownNumber(value: number): string {
  return String(Number(value.toPrecision(15)));
}

/** What a number format shows a number as: a date (maybe with a time), a time of day, a percentage, or a number. */
type Shown = "date" | "datetime" | "time" | "percent" | "number";
type DateShown = Exclude<Shown, "percent" | "number">;

/** Excel's built-in formats that are dates and times (ECMA-376 Part 1, 18.8.30; 27-36 and 50-58 East Asian dates). */
function builtInShown(id: number): Shown {
  if (id === 14 || id === 15 || id === 16 || id === 17 || (id >= 27 && id <= 36) || (id >= 50 && id <= 58)) return "date";
  if (id === 22) return "datetime";
  if ((id >= 18 && id <= 21) || (id >= 45 && id <= 47)) return "time";
  if (id === 9 || id === 10) return "percent";
  return "number";
}

/** A custom format code's kind: its letters outside quotes, escapes and brackets ([h] elapsed hours is a time). */
export function formatShown(code: string): Shown {
  const bare = code.replace(/"[^"]*"|\\.|_.|\*./g, "").replace(/\[(?![hms]+\])[^\]]*\]/gi, "");
  const section = bare.split(";")[0]!.toLowerCase();
  const date = /[dy]/.test(section) || /(^|[^h:])m{3,}/.test(section);
  const time = /[hs]/.test(section);
  if (date) return time ? "datetime" : "date";
  if (time) return "time";
  // "m" alone is a month (a date) unless a time's minutes.
  if (/m/.test(section) && !/[#0?]/.test(section)) return "date";
  return section.includes("%") ? "percent" : "number";
}

const DAY_MS = 86_400_000;
const BASE_1900 = Date.UTC(1899, 11, 30);
const BASE_1904 = Date.UTC(1904, 0, 1);
/** 9999-12-31 in the 1900 system: a larger serial is no date Excel shows. */
const MAX_SERIAL = 2_958_465;

/** An Excel serial date as ISO 8601 ("2014-03-15", "2014-03-15T10:30:00", "10:30:00"). */
export function serialDate(serial: number, date1904: boolean, shown: DateShown): string | undefined {
  if (!Number.isFinite(serial) || serial < 0 || serial > MAX_SERIAL) return undefined;
  // Excel counts 1900-02-29, which never was: serials before it are a day later than the count says.
  const base = date1904 ? BASE_1904 : serial < 60 ? BASE_1900 + DAY_MS : BASE_1900;
  const iso = new Date(base + Math.round(serial * 86_400) * 1000).toISOString();
  if (shown === "time") return iso.slice(11, 19);
  if (shown === "date" || Number.isInteger(serial)) return iso.slice(0, 10);
  return iso.slice(0, 19);
}

/** The shared strings of a workbook: each `si`'s text runs, without phonetic guides (`rPh`). */
async function sharedStrings(zip: ZipReader, part: string | undefined, rows: Rows): Promise<string[]> {
  const strings: string[] = [];
  if (!part) return strings;
  let current: string[] | undefined;
  let length = 0;
  let inText = false;
  let phonetic = 0;
  await streamPart(zip, part, {
    open(name) {
      const local = localName(name);
      if (local === "si") {
        current = [];
        length = 0;
      } else if (local === "t") inText = true;
      else if (local === "rPh") phonetic++;
    },
    close(name) {
      const local = localName(name);
      if (local === "si" && current) {
        strings.push(current.join(""));
        current = undefined;
      } else if (local === "t") inText = false;
      else if (local === "rPh") phonetic = Math.max(0, phonetic - 1);
    },
    text(text) {
      if (!current || !inText || phonetic) return;
      length += text.length;
      rows.checkCell(length);
      current.push(text);
    },
  });
  return strings;
}

/** What each cell style (`s`, an index into cellXfs) shows a number as. */
async function cellStyles(zip: ZipReader, part: string | undefined): Promise<Shown[]> {
  const styles: Shown[] = [];
  if (!part) return styles;
  const custom = new Map<number, Shown>();
  let inCellXfs = false;
  await streamPart(zip, part, {
    open(name, attributes) {
      const local = localName(name);
      if (local === "numFmt") {
        const id = Number(attribute(attributes, "numFmtId"));
        custom.set(id, formatShown(attribute(attributes, "formatCode") ?? ""));
      } else if (local === "cellXfs") inCellXfs = true;
      else if (local === "xf" && inCellXfs) {
        const id = Number(attribute(attributes, "numFmtId") ?? 0);
        styles.push(custom.get(id) ?? builtInShown(id));
      }
    },
    close(name) {
      if (localName(name) === "cellXfs") inCellXfs = false;
    },
    text() {},
  });
  return styles;
}

/** One XLSX worksheet's rows, as they stream. */
function worksheetHandler(rows: Rows, strings: string[], styles: Shown[], date1904: boolean): XmlHandler {
  let row = 0;
  let column = -1;
  let cells: Cell[] = [];
  let cell: { column?: number; type: string; style: number } | undefined;
  let value: string[] = [];
  let length = 0;
  /** Inside the cell's value (`v`) or an inline string's text (`is`'s `t`, not a phonetic guide's). */
  let reading = false;
  let inline = false;
  let phonetic = 0;
  const endCell = () => {
    const c = cell!;
    cell = undefined;
    const raw = value.join("");
    value = [];
    if (c.column === undefined) return;
    let text = raw;
    let number: number | undefined;
    if (c.type === "s") text = strings[Number(raw)] ?? "";
    else if (c.type === "b") text = raw === "1" ? "TRUE" : raw === "0" ? "FALSE" : raw;
    else if (c.type === "n" && raw.trim()) {
      const n = Number(raw);
      const shown = styles[c.style] ?? "number";
      const date = shown !== "number" && shown !== "percent" ? serialDate(n, date1904, shown) : undefined;
      if (date) text = date;
      else if (Number.isFinite(n)) {
        number = n;
        // A percentage reads as one (0.25 is "25%"); its metadata keeps the number.
        text = shown === "percent" ? `${shownNumber(n * 100)}%` : shownNumber(n);
      }
    }
    if (text === "") return;
    rows.checkCell(text.length);
    cells.push({ column: c.column, text, ...(number !== undefined ? { number } : {}) });
  };
  return {
    open(name, attributes) {
      switch (localName(name)) {
        case "row": {
          const r = Number(attribute(attributes, "r"));
          row = Number.isInteger(r) && r > row ? r : row + 1;
          column = -1;
          cells = [];
          rows.count();
          break;
        }
        case "c": {
          const reference = attribute(attributes, "r");
          const at = reference ? columnOf(reference) : column + 1 < MAX_COLUMNS ? column + 1 : undefined;
          if (at !== undefined) column = at;
          cell = { column: at, type: attribute(attributes, "t") ?? "n", style: Number(attribute(attributes, "s") ?? 0) };
          value = [];
          length = 0;
          break;
        }
        case "v":
          reading = !!cell;
          break;
        case "is":
          inline = !!cell;
          break;
        case "t":
          if (inline) reading = true;
          break;
        case "rPh":
          phonetic++;
          break;
      }
    },
    close(name) {
      switch (localName(name)) {
        case "row":
          rows.add(row, cells);
          cells = [];
          break;
        case "c":
          if (cell) endCell();
          break;
        case "v":
        case "t":
          reading = false;
          break;
        case "is":
          inline = false;
          break;
        case "rPh":
          phonetic = Math.max(0, phonetic - 1);
          break;
      }
    },
    text(text) {
      if (!reading || phonetic || !cell) return;
      length += text.length;
      rows.checkCell(length);
      value.push(text);
    },
  };
}

const OOXML_REL = /\/(officeDocument|worksheet|sharedStrings|styles)$/;

async function xlsxRecords(zip: ZipReader, rows: Rows): Promise<void> {
  const workbook = await mainPart(zip);
  if (!zip.has(workbook)) throw new Error("no workbook in the XLSX");
  const sheets: Array<{ name: string; rel: string }> = [];
  let date1904 = false;
  await streamPart(zip, workbook, {
    open(name, attributes) {
      const local = localName(name);
      if (local === "sheet") {
        // The relationship id's prefix is the document's own (r:, or another).
        const rel = /\s[\w.-]*:?id\s*=\s*["']([^"']+)["']/.exec(attributes)?.[1];
        if (rel) sheets.push({ name: attribute(attributes, "name") ?? `Sheet${sheets.length + 1}`, rel });
      } else if (local === "workbookPr") {
        const value = attribute(attributes, "date1904");
        date1904 = value === "1" || value === "true";
      }
    },
    close() {},
    text() {},
  });
  const rels = await relationships(zip, workbook);
  const partOf = (kind: string) => [...rels.values()].find((r) => OOXML_REL.exec(r.type)?.[1] === kind)?.target;
  const strings = await sharedStrings(zip, partOf("sharedStrings"), rows);
  const styles = await cellStyles(zip, partOf("styles"));
  for (const sheet of sheets) {
    const rel = rels.get(sheet.rel);
    // A chart sheet or a dialog sheet has no rows.
    if (!rel || OOXML_REL.exec(rel.type)?.[1] !== "worksheet") continue;
    rows.startSheet(sheet.name);
    await streamPart(zip, rel.target, worksheetHandler(rows, strings, styles, date1904));
  }
}

/** "PT10H30M00S" (an ODS time) as "10:30:00". */
function odsTime(value: string): string {
  const m = /^-?PT(\d+)H(\d+)M(\d+(?:\.\d+)?)S$/.exec(value);
  if (!m) return value;
  const two = (s: string) => s.padStart(2, "0");
  return `${two(m[1]!)}:${two(m[2]!)}:${two(String(Math.floor(Number(m[3]))))}`;
}

/** A positive count from an attribute (a repetition), 1 when there is none. */
const countOf = (attributes: string, name: string) => {
  const n = Number(attribute(attributes, name) ?? 1);
  return Number.isSafeInteger(n) && n > 0 ? n : 1;
};

/** content.xml of an ODS file: each `table:table`'s rows, as they stream. */
function spreadsheetHandler(rows: Rows): XmlHandler {
  let row = 0;
  let rowRepeat = 1;
  let column = 0;
  let cells: Cell[] = [];
  let cell: { typed?: string; number?: number; repeat: number } | undefined;
  let paragraphs: string[][] = [];
  let length = 0;
  /** Inside a note (office:annotation) or another part of a cell that is not its text. */
  let hidden = 0;
  let inParagraph = 0;
  const add = (text: string) => {
    if (!cell || hidden || !inParagraph) return;
    length += text.length;
    rows.checkCell(length);
    paragraphs[paragraphs.length - 1]!.push(text);
  };
  return {
    open(name, attributes, selfClosing) {
      switch (name) {
        case "table:table":
          rows.startSheet(attribute(attributes, "table:name") ?? "Sheet");
          row = 0;
          break;
        case "table:table-row":
          rowRepeat = countOf(attributes, "table:number-rows-repeated");
          column = 0;
          cells = [];
          break;
        case "table:table-cell":
        case "table:covered-table-cell": {
          const repeat = countOf(attributes, "table:number-columns-repeated");
          if (name === "table:covered-table-cell") {
            cell = { repeat };
            break;
          }
          const type = attribute(attributes, "office:value-type") ?? attribute(attributes, "calcext:value-type");
          let typed: string | undefined;
          let number: number | undefined;
          if (type === "float" || type === "percentage" || type === "currency") {
            const value = attribute(attributes, "office:value");
            if (value !== undefined && Number.isFinite(Number(value))) {
              number = Number(value);
              const currency = type === "currency" ? attribute(attributes, "office:currency") : undefined;
              typed = type === "percentage" ? undefined : `${value}${currency ? ` ${currency}` : ""}`;
            }
          } else if (type === "date") typed = attribute(attributes, "office:date-value")?.replace(/T00:00:00$/, "");
          else if (type === "time") typed = odsTime(attribute(attributes, "office:time-value") ?? "");
          else if (type === "boolean") typed = attribute(attributes, "office:boolean-value") === "true" ? "TRUE" : "FALSE";
          cell = { typed, number, repeat };
          paragraphs = [];
          length = 0;
          break;
        }
        case "office:annotation":
          hidden++;
          break;
        case "text:p":
        case "text:h":
          if (cell && !hidden && !selfClosing) {
            inParagraph++;
            paragraphs.push([]);
          }
          break;
        case "text:s":
          add(" ".repeat(Math.min(countOf(attributes, "text:c"), 1024)));
          break;
        case "text:tab":
          add("\t");
          break;
        case "text:line-break":
          add("\n");
          break;
      }
    },
    close(name) {
      switch (name) {
        case "table:table-row": {
          // Empty rows repeated (LibreOffice ends a sheet with a million of them) cost a count, not a loop.
          const empty = cells.length === 0;
          rows.count(empty ? 1 : rowRepeat);
          rows.add(row + 1, cells, empty ? 1 : rowRepeat);
          row += rowRepeat;
          break;
        }
        case "table:table-cell":
        case "table:covered-table-cell": {
          const c = cell;
          cell = undefined;
          if (!c) break;
          const text = c.typed ?? paragraphs.map((p) => p.join("")).join("\n");
          if (text !== "" && name === "table:table-cell")
            for (let n = 0; n < c.repeat && column + n < MAX_COLUMNS; n++)
              cells.push({ column: column + n, text, ...(c.number !== undefined ? { number: c.number } : {}) });
          column = Math.min(column + c.repeat, MAX_COLUMNS);
          break;
        }
        case "office:annotation":
          hidden = Math.max(0, hidden - 1);
          break;
        case "text:p":
        case "text:h":
          if (inParagraph) inParagraph--;
          break;
      }
    },
    text: add,
  };
}

async function odsRecords(zip: ZipReader, rows: Rows): Promise<void> {
  if (!(await streamPart(zip, "content.xml", spreadsheetHandler(rows)))) throw new Error("no content.xml in the ODS");
}

/** The records of a spreadsheet, one per row below each sheet's header row; `onRecord` is told after each ROWS_PER_BUDGET rows. */
export async function sheetRecords(bytes: Uint8Array, place: SheetPlace, onRecord: () => void = () => {}): Promise<SourceRecord[]> {
  const zip = new ZipReader(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const rows = new Rows(place, onRecord);
  await (place.fileType === "xlsx" ? xlsxRecords(zip, rows) : odsRecords(zip, rows));
  return rows.records;
}
