// The SROIE receipts of shared/data (one JSON line each) as a folder of text files, as a scanner
// would leave them, for the query benchmark and the business evaluation.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export function receiptsFolder(data: string, work: string): string {
  const dir = join(work, "receipts");
  mkdirSync(dir, { recursive: true });
  for (const line of readFileSync(join(data, "receipts", "receipts.jsonl"), "utf8")
    .trim()
    .split("\n")) {
    const r = JSON.parse(line) as { id: string; text: string };
    const file = join(dir, `${r.id}.txt`);
    if (!existsSync(file)) writeFileSync(file, `${r.text}\n`);
  }
  return dir;
}
