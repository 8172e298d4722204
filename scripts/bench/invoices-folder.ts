// The invoices of shared/data as a business user keeps them: the invoices themselves (the PDFs and
// the one plain-text invoice) without the fixtures' expected-field JSON, the pdftotext copies, the
// scans, the licence or the provenance note. An evaluation that indexed the JSON would read its own
// labels back as answers.
import { copyFileSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** An invoice is a PDF, or a text file that is not a derived copy of a PDF (`<name>.pdftotext.txt`). */
export const isInvoiceFile = (name: string) => name.endsWith(".pdf") || (name.endsWith(".txt") && !name.endsWith(".pdftotext.txt"));

export function invoicesFolder(data: string, work: string): string {
  const dir = join(work, "invoices");
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(join(data, "invoices")).filter(isInvoiceFile)) {
    const to = join(dir, name);
    if (!existsSync(to)) copyFileSync(join(data, "invoices", name), to);
  }
  return dir;
}
