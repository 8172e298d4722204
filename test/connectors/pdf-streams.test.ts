// The outside review's PDF (issue 35): `%PDF-1.4` and 300,000 `stream` lines froze every route for
// 19-22 s, each stream's dictionary looked for from the start of the file. The bytes looked at
// are counted here: at most the file, once, whatever the number of streams.
import { describe, expect, test } from "bun:test";
import { checkPdfStreams } from "../../src/connectors/files/pdf";
import { pdfBomb, pdfStreamFlood } from "../support/bombs";

const lookedAt = (buf: Buffer) => {
  let bytes = 0;
  checkPdfStreams(buf, (n) => (bytes += n));
  return bytes;
};

describe("checkPdfStreams", () => {
  test("300,000 streams without a dictionary: no byte is looked at twice", () => {
    const file = pdfStreamFlood(300_000);
    expect(file.length).toBeGreaterThan(2_000_000);
    const bytes = lookedAt(file);
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(file.length);
  });

  test("twice the streams, twice the work at most (it was four times)", () => {
    const n = lookedAt(pdfStreamFlood(20_000));
    const twice = lookedAt(pdfStreamFlood(40_000));
    expect(n).toBeGreaterThan(0);
    expect(twice).toBeLessThanOrEqual(2 * n + 16);
  });

  test("a stream's dictionary is still found, and a bomb still skipped", () => {
    expect(() => checkPdfStreams(pdfBomb(100))).toThrow("expands beyond 64 MB");
    expect(() => checkPdfStreams(pdfBomb(0.01))).not.toThrow();
  });
});
