// Extracts one file in a process of its own and prints what it cost: the memory tests of
// file-bounds.test.ts measure RSS, which in the test runner's process also counts every other
// test's workers and background indexing (a CI run saw 510 MB added there, none of it the file's).
//   bun test/support/extract-probe.ts <file> docx|pdf
import { readFileSync } from "node:fs";
import { extractText } from "../../src/connectors/files/extract";
import { FileSkipped } from "../../src/connectors/files/limits";
import { turnsWhile, watchingTheLoop } from "./event-loop";

/** What the probe prints, one JSON line. */
export interface ExtractProbe {
  skipped?: string;
  failed?: string;
  textLength?: number;
  textStart?: string;
  grewMb: number;
  /** How long the extraction took, the share of looks the loop was seen at, the longest it waited (event-loop.ts turnsWhile). */
  ms: number;
  share: number;
  longestMs: number;
}

const MB = 1024 * 1024;
const rss = () => process.memoryUsage().rss;

const [file, kind] = process.argv.slice(2);
const type = kind === "pdf" ? "pdf" : "docx";
const bytes = new Uint8Array(readFileSync(file!));
Bun.gc(true);
const before = rss();
let peak = before;
const { value, ms, share, longestMs } = await turnsWhile(async () => {
  const { value } = await watchingTheLoop(
    () =>
      extractText(bytes, type).then(
        (r): Partial<ExtractProbe> => ({ textLength: r.text.length, textStart: r.text.slice(0, 64) }),
        (error: unknown): Partial<ExtractProbe> =>
          error instanceof FileSkipped ? { skipped: error.message } : { failed: error instanceof Error ? error.name : "error" },
      ),
    () => {
      peak = Math.max(peak, rss());
    },
  );
  return value;
});
peak = Math.max(peak, rss());
const out: ExtractProbe = { ...value, grewMb: (peak - before) / MB, ms, share, longestMs };
console.log(JSON.stringify(out));
