// Spreadsheets (XLSX, ODS) as records, a row each, and ODT and PPTX as documents (issue 38), read
// by the parsers the reading worker runs: files written by openpyxl and odfpy, and built with
// JSZip where no writer is at hand; the 1900 and 1904 date systems; and hostile files refused
// with a clear reason (a zip bomb, a billion laughs, a million empty rows, a 1 MB cell, a row
// repeated a billion times, a cut file), each in little time and memory.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { EXPANDS_TOO_FAR, MAX_RECORD_CHARS, MAX_SHEET_ROWS, MAX_ZIP_ENTRIES, TOO_MANY_ENTRIES } from "../../src/connectors/files/limits";
import { odtText, pptxText } from "../../src/connectors/files/office";
import {
  columnName,
  formatShown,
  MAX_COLUMNS,
  ROWS_PER_BUDGET,
  type SheetPlace,
  serialDate,
  sheetRecords,
} from "../../src/connectors/files/sheets";
import { DECLARES_ENTITIES } from "../../src/connectors/files/xml";
import { ZipError } from "../../src/connectors/files/zip";
import { SourceSkipped } from "../../src/connectors/types";
import { recordKind } from "../../src/documents/kinds";
import { amountsWithCurrency } from "../../src/retrieval/amounts";
import { answerTo } from "../support/answer";
import { zipOf } from "../support/bombs";
import {
  bigCellXlsx,
  emptyRowsXlsx,
  entitiesXlsx,
  OFFICE_FIXTURES,
  pptx,
  repeatedRowsOds,
  sharedStringsXlsx,
  wideXlsx,
  wordsXlsx,
  xlsxBomb,
} from "../support/office";

const placeOf = (file: string): SheetPlace => ({
  file: `sheets/${file}`,
  url: `file:///srv/sheets/${file}`,
  fileType: file.endsWith(".ods") ? "ods" : "xlsx",
  size: 1,
  modified: "2024-06-01T00:00:00.000Z",
});
const fixture = (name: string) => readFileSync(join(OFFICE_FIXTURES, name));
const rowsOf = async (name: string, bytes: Uint8Array = fixture(name)) =>
  (await sheetRecords(bytes, placeOf(name))).map((r) => ({ id: r.id, content: r.content }));

/** The reason a file is skipped with ("read" if it is not). */
async function skipped(bytes: Uint8Array, name = "hostile.xlsx"): Promise<string> {
  try {
    await sheetRecords(bytes, placeOf(name));
    return "read";
  } catch (error) {
    if (error instanceof SourceSkipped) return error.message;
    throw error;
  }
}

describe("XLSX written by openpyxl", () => {
  test("each row below the header is a record of `Header: value` lines: dates, a date and time, numbers, booleans, empty cells left out", async () => {
    expect(await rowsOf("invoices.xlsx")).toEqual([
      {
        id: "sheets/invoices.xlsx#Invoices/2",
        content: "Invoice: INV-1001\nCustomer: Acme Corp\nIssued: 2024-03-15\nAmount: 1250.5\nPaid: TRUE\nNotes: Consulting, March",
      },
      {
        id: "sheets/invoices.xlsx#Invoices/3",
        content: "Invoice: INV-1002\nCustomer: Initech\nIssued: 2024-04-02\nAmount: 0.3\nPaid: FALSE",
      },
      // Serial 1: Excel's first day.
      {
        id: "sheets/invoices.xlsx#Invoices/4",
        content: "Invoice: INV-1003\nCustomer: Globex Ltd\nIssued: 1900-01-01\nAmount: 99\nPaid: TRUE\nNotes: Oldest date Excel has",
      },
      {
        id: "sheets/invoices.xlsx#Invoices/5",
        content:
          "Invoice: INV-1004\nCustomer: Umbrella Pharma\nIssued: 2024-05-31T17:45:00\nAmount: 18000\nPaid: FALSE\nNotes: Due on delivery",
      },
      // The second sheet; its empty row 3 is no record, and rows keep their numbers.
      { id: "sheets/invoices.xlsx#Expenses/2", content: "Date: 2024-01-09\nVendor: Verizon\nCategory: Phone\nAmount: 89.99" },
      { id: "sheets/invoices.xlsx#Expenses/4", content: "Date: 2024-02-09\nVendor: Verizon\nCategory: Phone\nAmount: 91.25" },
    ]);
  });

  test("a record is cited at its sheet and row, its title names it, its cells are its metadata (numbers as numbers)", async () => {
    const [first] = await sheetRecords(fixture("invoices.xlsx"), placeOf("invoices.xlsx"));
    expect(first).toMatchObject({
      title: "INV-1001 · Invoices, row 2",
      source_url: "file:///srv/sheets/invoices.xlsx#Invoices/2",
      path: "sheets/invoices.xlsx#Invoices/2",
      date: "2024-06-01T00:00:00.000Z",
      type: "file",
      metadata: { Invoice: "INV-1001", Amount: 1250.5, Issued: "2024-03-15", file_type: "xlsx", sheet: "Invoices", row: 2 },
    });
  });

  test("a spreadsheet's row is a table's row (kind row): its answer is the column asked with the cells saying which row; its place is no amount", async () => {
    // Headers as people write them ("Amount (EUR)", "Due date?"): read as a document's sentences,
    // the row was answered whole, or by a sentence of it, and the `kinds: ["row"]` filter missed it.
    const bytes = wordsXlsx([
      ["Supplier", "Invoice no.", "Amount (EUR)", "Due date?"],
      ["Netpresse", "F-2024-118", "9.34", "2024-05-01"],
      ["Coolblue", "CB-77120", "124.61", "2024-06-15"],
    ]);
    const records = await sheetRecords(bytes, { ...placeOf("bills.xlsx"), size: 4096 });
    expect(records.map((r) => recordKind(r))).toEqual(["row", "row"]);
    const sources = records.map((r) => ({ text: r.content, metadata: r.metadata, type: r.type }));
    expect(answerTo("When is the Coolblue invoice due?", [], sources)).toBe(
      "Supplier: Coolblue; Invoice no.: CB-77120; Due date?: 2024-06-15. [2]",
    );
    // Its row number and its file's size are where it is, not amounts of it.
    expect(amountsWithCurrency(records[1]!).map((a) => a.value)).not.toContain(4096);
    expect(amountsWithCurrency(records[1]!).map((a) => a.value)).not.toContain(3);
  });

  test("the 1904 date system: the same dates from other serials", async () => {
    expect(await rowsOf("payments-1904.xlsx")).toEqual([
      { id: "sheets/payments-1904.xlsx#Payments/2", content: "Paid on: 2024-03-15\nPayee: Acme Corp\nAmount: 1250.5" },
      { id: "sheets/payments-1904.xlsx#Payments/3", content: "Paid on: 1904-01-02\nPayee: First day\nAmount: 1" },
    ]);
  });
});

describe("XLSX as Excel writes it (shared strings)", () => {
  test("rich text without its phonetic guide, a quoted date format, cells without references, Excel's rounding, an error, a percentage; a chart sheet has no rows", async () => {
    expect(await rowsOf("orders.xlsx", await sharedStringsXlsx())).toEqual([
      {
        id: "sheets/orders.xlsx#Orders & returns/3",
        content: "Order: A-1\nCustomer: Kyoto Tea House\nShipped: 2024-03-15\nTotal: 0.3",
      },
      { id: "sheets/orders.xlsx#Orders & returns/4", content: "Order: 2\nCustomer: Lisbon Bakery\nTotal: #DIV/0!\nE: 25%" },
      { id: "sheets/orders.xlsx#Totals/2", content: "Sum: 3" },
    ]);
  });

  test("serial dates: Excel's 1900 leap-year bug, times of day, the 1904 system; date formats told from number formats", () => {
    expect(serialDate(59, false, "date")).toBe("1900-02-28");
    expect(serialDate(61, false, "date")).toBe("1900-03-01");
    expect(serialDate(45366.5, false, "datetime")).toBe("2024-03-15T12:00:00");
    expect(serialDate(0.75, false, "time")).toBe("18:00:00");
    expect(serialDate(43904, true, "date")).toBe("2024-03-15");
    expect(serialDate(-1, false, "date")).toBeUndefined();
    expect(
      ["yyyy-mm-dd", "[$-409]mmmm d, yyyy", "d/m/yy h:mm", "h:mm:ss", "[h]:mm", "#,##0.00", '0.0 "days"', "General", "mmm"].map(
        formatShown,
      ),
    ).toEqual(["date", "date", "datetime", "time", "time", "number", "number", "number", "date"]);
    expect([0, 25, 26, 701, 702, 16_383].map(columnName)).toEqual(["A", "Z", "AA", "ZZ", "AAA", "XFD"]);
  });
});

describe("ODS written by odfpy", () => {
  test("typed cells (currency, percentage, date, time, boolean), repeated cells, a note left out, LibreOffice's million empty rows costing nothing", async () => {
    let budgets = 0;
    const records = await sheetRecords(fixture("stock.ods"), placeOf("stock.ods"), () => budgets++);
    expect(records.map((r) => ({ id: r.id, content: r.content }))).toEqual([
      {
        id: "sheets/stock.ods#Stock/2",
        content:
          "Item: Espresso beans 1 kg\nSupplier: Porto Roasters\nPrice: 24.90 EUR\nDiscount: 15%\nRestocked: 2024-03-15\nIn stock: TRUE",
      },
      { id: "sheets/stock.ods#Stock/3", content: "Item: Milk frother\nPrice: 89.5\nIn stock: FALSE" },
      // After three empty rows repeated.
      { id: "sheets/stock.ods#Stock/7", content: "Item: Paper cups\nSupplier: Cup & Co\nPrice: 0.05\nDiscount: 10:30:00" },
    ]);
    // 1,048,000 empty rows of 1,024 empty cells each count as the one element they are: no budget is begun for them.
    expect(budgets).toBe(0);
  });
});

describe("documents", () => {
  test("ODT: headings and paragraphs in order, a tab, a line break, spaces; a comment is not the text; the title", async () => {
    expect(await odtText(fixture("agreement.odt"))).toEqual({
      text: "Service agreement\n\nBetween Acme Corp and Initech, for 24 months.\n\nFee:\tEUR 1,500 a month\nPayable within   30 days.",
      title: "Service agreement",
    });
  });

  test("PPTX: slide by slide in the presentation's order, each with its number; the master's placeholder text left out", async () => {
    expect(await pptxText(await pptx())).toEqual({
      text: "Slide 1\nQ3 review\nRevenue up 12 %\n\nSlide 2\nCustomers\nAcme\nInitech\n\nSlide 3\nNext steps: hire in Porto",
      title: "Quarterly review",
      pages: 3,
    });
  });
});

describe("hostile spreadsheets are refused with a clear reason", () => {
  test("a zip bomb: 4 MB that inflates to 600 MB stops at the bound", async () => {
    const bomb = xlsxBomb(600);
    expect(bomb.length).toBeLessThan(5 * 1024 * 1024);
    expect(await skipped(bomb)).toBe(EXPANDS_TOO_FAR);
  });

  test("a billion laughs: a document type declaring entities refuses the file, nothing is expanded", async () => {
    expect(await skipped(entitiesXlsx())).toBe(DECLARES_ENTITIES);
  });

  test("a million empty rows: past MAX_SHEET_ROWS, counted without building anything", async () => {
    expect(await skipped(emptyRowsXlsx(1_000_000))).toBe(`holds more than ${MAX_SHEET_ROWS} rows`);
    // Under the bound, empty rows are no records, and each ROWS_PER_BUDGET of them begins a new budget of CPU time (D31).
    let budgets = 0;
    expect(await sheetRecords(emptyRowsXlsx(100_000), placeOf("empty.xlsx"), () => budgets++)).toEqual([]);
    expect(budgets).toBe(Math.floor(100_001 / ROWS_PER_BUDGET));
  });

  test("a 1 MB cell: past MAX_RECORD_CHARS for one row", async () => {
    expect(await skipped(bigCellXlsx(MAX_RECORD_CHARS + 1))).toBe(`has a row longer than ${MAX_RECORD_CHARS} characters`);
    expect(await skipped(bigCellXlsx(1000))).toBe("read");
  });

  test("a row of 16,384 one-letter cells under long header names: its record, names and all, is past MAX_RECORD_CHARS", async () => {
    // The header itself is under the bound (999,424 characters); the record would be 1,064,960.
    expect(await skipped(wideXlsx(MAX_COLUMNS, 61))).toBe(`has a row longer than ${MAX_RECORD_CHARS} characters`);
    expect(await skipped(wideXlsx(1000, 61))).toBe("read");
  });

  test("an ODS row repeated a billion times is counted, not copied", async () => {
    // Refused at its count, before a record of it is made.
    expect(await skipped(repeatedRowsOds(1_000_000_000), "hostile.ods")).toBe(`holds more than ${MAX_SHEET_ROWS} rows`);
    const repeated = await sheetRecords(repeatedRowsOds(3), placeOf("r.ods"));
    expect(repeated.map((r) => r.id)).toEqual(["sheets/r.ods#T/2", "sheets/r.ods#T/3", "sheets/r.ods#T/4"]);
    // The same cells thrice: the second and third say which copy they are (their citation ids, D36).
    expect(repeated.map((r) => r.metadata.copy)).toEqual([undefined, 2, 3]);
  });

  test("a cut file and a ZIP of too many entries", async () => {
    const whole = fixture("invoices.xlsx");
    await expect(sheetRecords(whole.subarray(0, whole.length / 2), placeOf("cut.xlsx"))).rejects.toBeInstanceOf(ZipError);
    const many = zipOf(
      Array.from({ length: MAX_ZIP_ENTRIES + 1 }, (_, i) => ({ name: `p${i}`, data: Buffer.alloc(0), method: 0 as const, size: 0 })),
    );
    expect(await skipped(many)).toBe(TOO_MANY_ENTRIES);
  });
});
