// A file is bounded by its size when it is read, not only at the scan (D31): one that grew since
// the scan (an outside attack truncated a scanned file to 1.9 GB: 7 GB of RSS and the serving
// thread held ~20 s) is skipped with its reason before any byte is read, by the files and the
// mail kinds alike.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { filesSource } from "../../src/connectors/files/connector";
import { MAX_FILE_BYTES } from "../../src/connectors/files/limits";
import { MAX_MAIL_FILE_BYTES, maildirSource } from "../../src/connectors/maildir/connector";
import { SourceReader } from "../../src/connectors/reading/reader";
import { SourceSkipped } from "../../src/connectors/types";

const root = mkdtempSync(join(tmpdir(), "corpus-read-bound-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A reader whose worker would only start if it were asked to read: counted. */
function countingReader(): { reader: SourceReader; asked: () => number } {
  const reader = new SourceReader();
  let asked = 0;
  reader.file = async () => {
    asked++;
    return { text: "" };
  };
  reader.mail = async () => {
    asked++;
    return [];
  };
  return { reader, asked: () => asked };
}

const skippedWith = async (read: Promise<unknown>) => {
  const error = await read.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SourceSkipped);
  return (error as Error).message;
};

test("a document that grew past MAX_FILE_BYTES since the scan is skipped, not read", async () => {
  const dir = join(root, "docs");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "z.txt"), "small at the scan");
  const { reader, asked } = countingReader();
  const source = filesSource(dir, undefined, reader);
  const [entry] = source.scan();
  expect(entry).toBeDefined();
  truncateSync(join(dir, "z.txt"), MAX_FILE_BYTES + 1);
  expect(await skippedWith(source.read(entry!))).toBe("is larger than 50 MB");
  expect(asked()).toBe(0);
});

test("a mail file past MAX_MAIL_FILE_BYTES is skipped, not read", async () => {
  const dir = join(root, "mail");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "big.mbox"), "From a@b Mon Jan 1 00:00:00 2001\nSubject: x\n\nhello\n");
  truncateSync(join(dir, "big.mbox"), MAX_MAIL_FILE_BYTES + 1);
  const { reader, asked } = countingReader();
  const source = maildirSource(dir, undefined, reader);
  const [entry] = source.scan();
  expect(await skippedWith(source.read(entry!))).toBe("is larger than 256 MB");
  expect(asked()).toBe(0);
});
