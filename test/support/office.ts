// Office files for the files kind's tests: the ones written by openpyxl and odfpy
// (connectors/fixtures/office, made by its make-office-files.py), the ones no Debian writer
// makes here (a PPTX; an XLSX of shared strings with rich text and phonetic guides) built with
// JSZip, and hostile ones built in milliseconds (a zip bomb, a document type of entities, a
// million empty rows, a 1 MB cell, a cut file).
import { join } from "node:path";
import JSZip from "jszip";
import { deflateBomb, type ZipPart, zipOf } from "./bombs";

export const OFFICE_FIXTURES = join(import.meta.dir, "../connectors/fixtures/office");

const XML_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const SHEET_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";

const rels = (items: Array<[id: string, type: string, target: string]>) =>
  `${XML_HEAD}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${items
    .map(([id, type, target]) => `<Relationship Id="${id}" Type="${REL}/${type}" Target="${target}"/>`)
    .join("")}</Relationships>`;

const deflated = (zip: JSZip) => zip.generateAsync({ type: "nodebuffer", compression: "DEFLATE" });

/**
 * A workbook as Excel writes it: shared strings (one rich text of two runs with a phonetic guide),
 * a custom date format with quoted text, cells without a reference, a float Excel shows rounded,
 * an error, a chart sheet (no rows), and a sheet given by an absolute target.
 */
export async function sharedStringsXlsx(): Promise<Buffer> {
  const zip = new JSZip();
  zip.file("_rels/.rels", rels([["rId1", "officeDocument", "xl/workbook.xml"]]));
  zip.file(
    "xl/workbook.xml",
    `${XML_HEAD}<workbook xmlns="${SHEET_NS}" xmlns:r="${REL}"><workbookPr/><sheets><sheet name="Orders &amp; returns" sheetId="1" r:id="rId1"/><sheet name="Chart" sheetId="2" r:id="rId2"/><sheet name="Totals" sheetId="3" r:id="rId5"/></sheets></workbook>`,
  );
  zip.file(
    "xl/_rels/workbook.xml.rels",
    rels([
      ["rId1", "worksheet", "worksheets/sheet1.xml"],
      ["rId2", "chartsheet", "chartsheets/sheet1.xml"],
      ["rId3", "sharedStrings", "sharedStrings.xml"],
      ["rId4", "styles", "styles.xml"],
      ["rId5", "worksheet", "/xl/worksheets/sheet2.xml"],
    ]),
  );
  zip.file(
    "xl/sharedStrings.xml",
    `${XML_HEAD}<sst xmlns="${SHEET_NS}" count="6" uniqueCount="6"><si><t>Order</t></si><si><t>Customer</t></si><si><t>Shipped</t></si><si><t>Total</t></si><si><r><rPr><b/></rPr><t>Kyoto </t></r><r><t xml:space="preserve">Tea House</t></r><rPh sb="0" eb="2"><t>キョウト</t></rPh></si><si><t>Lisbon Bakery</t></si></sst>`,
  );
  zip.file(
    "xl/styles.xml",
    `${XML_HEAD}<styleSheet xmlns="${SHEET_NS}"><numFmts count="1"><numFmt numFmtId="164" formatCode="&quot;shipped&quot;\\ d&quot;/&quot;m&quot;/&quot;yyyy"/></numFmts><cellStyleXfs count="1"><xf numFmtId="14"/></cellStyleXfs><cellXfs count="3"><xf numFmtId="0"/><xf numFmtId="164"/><xf numFmtId="10"/></cellXfs></styleSheet>`,
  );
  zip.file(
    "xl/worksheets/sheet1.xml",
    `${XML_HEAD}<worksheet xmlns="${SHEET_NS}"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c><c r="D1" t="s"><v>3</v></c></row><row r="3"><c t="str"><f>"A-"&amp;1</f><v>A-1</v></c><c t="s"><v>4</v></c><c s="1"><v>45366</v></c><c><v>0.30000000000000004</v></c></row><row><c r="A4"><v>2</v></c><c r="B4" t="s"><v>5</v></c><c r="D4" t="e"><v>#DIV/0!</v></c><c r="E4" s="2"><v>0.25</v></c></row></sheetData></worksheet>`,
  );
  zip.file(
    "xl/worksheets/sheet2.xml",
    `${XML_HEAD}<worksheet xmlns="${SHEET_NS}"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Sum</t></is></c></row><row r="2"><c r="A2"><f>SUM(1,2)</f><v>3</v></c></row></sheetData></worksheet>`,
  );
  zip.file("xl/chartsheets/sheet1.xml", `${XML_HEAD}<chartsheet xmlns="${SHEET_NS}"/>`);
  return deflated(zip);
}

/** A presentation of three slides, listed in another order than their part names, with a title. */
export async function pptx(): Promise<Buffer> {
  const zip = new JSZip();
  const A = "http://schemas.openxmlformats.org/drawingml/2006/main";
  const P = "http://schemas.openxmlformats.org/presentationml/2006/main";
  zip.file("_rels/.rels", rels([["rId1", "officeDocument", "ppt/presentation.xml"]]));
  zip.file(
    "docProps/core.xml",
    `${XML_HEAD}<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Quarterly review</dc:title></cp:coreProperties>`,
  );
  zip.file(
    "ppt/presentation.xml",
    `${XML_HEAD}<p:presentation xmlns:p="${P}" xmlns:r="${REL}"><p:sldIdLst><p:sldId id="256" r:id="rId3"/><p:sldId id="257" r:id="rId1"/><p:sldId id="258" r:id="rId2"/></p:sldIdLst></p:presentation>`,
  );
  zip.file(
    "ppt/_rels/presentation.xml.rels",
    rels([
      ["rId1", "slide", "slides/slide1.xml"],
      ["rId2", "slide", "slides/slide2.xml"],
      ["rId3", "slide", "slides/slide3.xml"],
      ["rId4", "slideMaster", "slideMasters/slideMaster1.xml"],
    ]),
  );
  const slide = (...paragraphs: string[]) =>
    `${XML_HEAD}<p:sld xmlns:a="${A}" xmlns:p="${P}"><p:cSld><p:spTree><p:sp><p:txBody>${paragraphs
      .map((p) => `<a:p>${p}</a:p>`)
      .join("")}</p:txBody></p:sp></p:spTree></p:cSld></p:sld>`;
  zip.file("ppt/slides/slide3.xml", slide("<a:r><a:t>Q3 review</a:t></a:r>", "<a:r><a:t>Revenue up 12 %</a:t></a:r>"));
  zip.file(
    "ppt/slides/slide1.xml",
    slide("<a:r><a:t>Customers</a:t></a:r>", "<a:r><a:t>Acme</a:t></a:r><a:br/><a:r><a:t>Initech</a:t></a:r>"),
  );
  zip.file("ppt/slides/slide2.xml", slide("<a:r><a:t>Next steps: </a:t></a:r><a:r><a:t>hire in Porto</a:t></a:r>"));
  zip.file("ppt/slideMasters/slideMaster1.xml", slide("<a:r><a:t>Click to edit the master title</a:t></a:r>"));
  return deflated(zip);
}

const stored = (name: string, text: string): ZipPart => ({ name, data: Buffer.from(text), method: 0, size: Buffer.byteLength(text) });

const WORKBOOK_PARTS = [
  stored("_rels/.rels", rels([["rId1", "officeDocument", "xl/workbook.xml"]])),
  stored(
    "xl/workbook.xml",
    `<workbook xmlns="${SHEET_NS}" xmlns:r="${REL}"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>`,
  ),
  stored("xl/_rels/workbook.xml.rels", rels([["rId1", "worksheet", "worksheets/sheet1.xml"]])),
];

/** An XLSX whose one sheet is `sheet` (stored) or a given part (a bomb). */
function xlsxOf(sheet: string | ZipPart): Buffer {
  return zipOf([...WORKBOOK_PARTS, typeof sheet === "string" ? stored("xl/worksheets/sheet1.xml", sheet) : sheet]);
}

const HEADER_ROW = '<row r="1"><c r="A1" t="inlineStr"><is><t>Note</t></is></c></row>';

/** A sheet that inflates to `megabytes` of rows with text (a zip bomb), its size declared truly. */
export function xlsxBomb(megabytes: number): Buffer {
  const unit = '<row><c t="inlineStr"><is><t>aaaa</t></is></c></row>';
  const perBlock = 10_000;
  const blocks = Math.ceil((megabytes * 1024 * 1024) / (unit.length * perBlock));
  const { data, size } = deflateBomb(
    `<worksheet xmlns="${SHEET_NS}"><sheetData>${HEADER_ROW}`,
    unit,
    perBlock,
    blocks,
    "</sheetData></worksheet>",
  );
  return xlsxOf({ name: "xl/worksheets/sheet1.xml", data, method: 8, size });
}

/** A sheet of `rows` empty row elements (6 bytes each, compressed to almost nothing). */
export function emptyRowsXlsx(rows: number): Buffer {
  const { data, size } = deflateBomb(
    `<worksheet xmlns="${SHEET_NS}"><sheetData>${HEADER_ROW}`,
    "<row/>",
    10_000,
    Math.ceil(rows / 10_000),
    "</sheetData></worksheet>",
  );
  return xlsxOf({ name: "xl/worksheets/sheet1.xml", data, method: 8, size });
}

/** The billion laughs: ten entities of ten, a billion "lol"s if they were expanded. */
export function entitiesXlsx(): Buffer {
  const entities = Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join("");
  return xlsxOf(
    `<?xml version="1.0"?><!DOCTYPE worksheet [<!ENTITY lol0 "lol">${entities}]><worksheet xmlns="${SHEET_NS}"><sheetData>${HEADER_ROW}<row r="2"><c r="A2" t="inlineStr"><is><t>&lol9;</t></is></c></row></sheetData></worksheet>`,
  );
}

/** A sheet with one cell of `chars` characters. */
export function bigCellXlsx(chars: number): Buffer {
  return xlsxOf(
    `<worksheet xmlns="${SHEET_NS}"><sheetData>${HEADER_ROW}<row r="2"><c r="A2" t="inlineStr"><is><t>${"x".repeat(chars)}</t></is></c></row></sheetData></worksheet>`,
  );
}

/** An ODS whose one row, with a word in it, is repeated `times` times. */
export function repeatedRowsOds(times: number): Buffer {
  const content = `<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:spreadsheet><table:table table:name="T"><table:table-row><table:table-cell><text:p>Note</text:p></table:table-cell></table:table-row><table:table-row table:number-rows-repeated="${times}"><table:table-cell><text:p>again</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet></office:body></office:document-content>`;
  return zipOf([stored("mimetype", "application/vnd.oasis.opendocument.spreadsheet"), stored("content.xml", content)]);
}

/** A header of MAX_COLUMNS names of `nameChars` characters, and a row of one letter under each. */
export function wideXlsx(columns: number, nameChars: number): Buffer {
  const cell = (text: string) => `<c t="inlineStr"><is><t>${text}</t></is></c>`;
  const names = Array.from({ length: columns }, (_, i) => cell(`${"h".repeat(nameChars - 5)}${String(i).padStart(5, "0")}`)).join("");
  return xlsxOf(
    `<worksheet xmlns="${SHEET_NS}"><sheetData><row>${names}</row><row>${cell("x").repeat(columns)}</row></sheetData></worksheet>`,
  );
}

/** A sheet of rows of words (the first its header), each in a cell of inline text. */
export function wordsXlsx(rows: string[][]): Buffer {
  const cell = (text: string) => `<c t="inlineStr"><is><t>${text}</t></is></c>`;
  return xlsxOf(
    `<worksheet xmlns="${SHEET_NS}"><sheetData>${rows.map((r) => `<row>${r.map(cell).join("")}</row>`).join("")}</sheetData></worksheet>`,
  );
}
