// The files connector over each store of its index (D33: one suite, two stores).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { cpSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import JSZip from "jszip";
import { createFilesConnector } from "../../src/connectors/files/connector";
import { extractText } from "../../src/connectors/files/extract";
import { tempDir } from "../helpers";
import { fingerprint } from "../support/fixtures";
import { ask, folderIndexStores } from "../support/local-index";
import { SHARED_DATA } from "../support/servers";
import { storeSuite } from "../support/shared-database";

// Servers, builds and the model take longer than 5 s on a busy two-core machine.
setDefaultTimeout(60_000);

const invoices = join(SHARED_DATA, "invoices");
const before = fingerprint(invoices);

afterAll(() => expect(fingerprint(invoices)).toEqual(before));

async function docx(paragraphs: string[]): Promise<Buffer> {
  const zip = new JSZip();
  zip.file(
    "[Content_Types].xml",
    `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
  );
  zip.file(
    "_rels/.rels",
    `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
  );
  zip.file(
    "word/document.xml",
    `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${paragraphs.map((p) => `<w:p><w:r><w:t>${p}</w:t></w:r></w:p>`).join("")}</w:body></w:document>`,
  );
  return zip.generateAsync({ type: "nodebuffer" });
}

for (const [name, open] of folderIndexStores())
  storeSuite(`files connector, its index ${name}`, open, (store) => {
    const indexFor = (key: string) => store().indexFor(key);
    describe("files connector: the invoices folder", () => {
      let c: ReturnType<typeof createFilesConnector>;
      beforeAll(() => {
        c = createFilesConnector(invoices, indexFor("t/invoices"));
      });

      test("indexes the PDF, text and JSON files", async () => {
        await c.sync();
        // 11 PDF, 12 TXT, 12 JSON, 2 Markdown; the PNGs are not documents.
        expect(await c.health()).toEqual({ status: "ok", records: 37 });
      });

      test("PDF text is extracted and found for a realistic question", async () => {
        const records = await c.search(ask(["amazon", "web", "services", "invoice"]));
        const pdf = records.find((r) => r.path === "AmazonWebServices.pdf")!;
        expect(pdf).toBeDefined();
        expect(pdf.type).toBe("file");
        expect(pdf.content).toContain("Amazon Web Services");
        expect(pdf.metadata).toMatchObject({ file_type: "pdf", pages: expect.any(Number) });
        expect(pdf.source_url).toBe(`file://${join(invoices, "AmazonWebServices.pdf")}`);
      });

      test("the expected fields of an invoice are in its extracted text", async () => {
        const expected = JSON.parse(readFileSync(join(invoices, "saeco.json"), "utf8"));
        const [saeco] = (await c.search(ask(["saeco"], { limit: 20 }))).filter((r) => r.path === "saeco.pdf");
        expect(saeco).toBeDefined();
        expect(saeco!.content.replace(/\s+/g, " ")).toContain(String(expected.invoice_number ?? expected.invoice ?? "").trim());
      });
    });

    describe("files connector: every document kind, and change", () => {
      test("Markdown, HTML, DOCX, CSV and JSON are read; an edited file is found on the next search", async () => {
        const dir = tempDir();
        writeFileSync(join(dir, "notes.md"), "# Offsite plan\n\nThe team offsite is on Friday in Lisbon.\n");
        writeFileSync(
          join(dir, "page.html"),
          "<html><head><title>Price list</title></head><body><h1>Widgets</h1><p>Blue widget: <b>12 EUR</b></p><script>x()</script></body></html>",
        );
        writeFileSync(join(dir, "contract.docx"), await docx(["Service agreement between Acme Corp and Initech.", "Term: 24 months."]));
        writeFileSync(join(dir, "orders.csv"), "order,customer,total\n1042,Acme Corp,1250.00\n1043,Initech,99.50\n");
        writeFileSync(
          join(dir, "export.json"),
          JSON.stringify({ invoice: { number: "INV-77", customer: { name: "Globex" }, total: 310.5 } }),
        );
        writeFileSync(join(dir, "image.png"), "not a document");
        const c = createFilesConnector(dir, indexFor("t/kinds"));
        await c.sync();
        expect((await c.health()).records).toBe(5);

        const by = async (term: string) => (await c.search(ask([term])))[0];
        expect((await by("lisbon"))!).toMatchObject({ title: "Offsite plan", path: "notes.md" });
        const html = (await by("widget"))!;
        expect(html.title).toBe("Price list");
        expect(html.content).toContain("12 EUR");
        expect(html.content).not.toContain("x()");
        expect((await by("initech"))!.content).toContain("Service agreement between Acme Corp and Initech.");
        expect((await c.search(ask(["1042"])))[0]!.content).toContain("order: 1042; customer: Acme Corp; total: 1250.00");
        expect((await by("globex"))!.content).toContain("invoice.customer.name: Globex");

        writeFileSync(join(dir, "notes.md"), "# Offsite plan\n\nMoved to Porto.\n");
        utimesSync(join(dir, "notes.md"), new Date(), new Date(Date.now() + 5000));
        await c.sync();
        expect(await c.search(ask(["lisbon"]))).toEqual([]);
        expect((await by("porto"))!.path).toBe("notes.md");
      });

      test("a broken PDF is skipped with its reason in the status (issue 35: it was counted with no reason), the rest is read", async () => {
        const dir = tempDir();
        writeFileSync(join(dir, "broken.pdf"), "%PDF-1.4 this is not really a pdf");
        cpSync(join(invoices, "Orlen.txt"), join(dir, "Orlen.txt"));
        const c = createFilesConnector(dir, indexFor("t/broken"));
        await c.sync();
        expect(await c.health()).toEqual({ status: "ok", records: 1, reason: "skipped 1 file: broken.pdf is not a readable PDF file" });
        await expect(extractText(new TextEncoder().encode("{nope"), "json")).rejects.toThrow("JSON Parse error");
      });

      test("a skipped file's name is shown with its control characters escaped (a line break or a terminal escape in a name)", async () => {
        const dir = tempDir();
        writeFileSync(join(dir, "evil\nname\u001b[31m.pdf"), "%PDF-1.4 not a pdf");
        const c = createFilesConnector(dir, indexFor("t/names"));
        await c.sync();
        expect((await c.health()).reason).toBe("skipped 1 file: evil\\u000aname\\u001b[31m.pdf is not a readable PDF file");
      });
    });
  });
