// A books file that is a gzip bomb (D34) is skipped once it expands past the bound, never read
// whole. Integration: 80 MB of spaces built and gzipped, 64 MB expanded, a size-bound proof
// (out of the unit suite: a quarter of a second of CPU, most of it system time, issue 35).
import { expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { bookRecords } from "../../../src/connectors/books/records";
import { SourceSkipped } from "../../../src/connectors/types";

test("a gzip bomb past the bound is skipped", () => {
  const bomb = gzipSync(Buffer.alloc(80 * 1024 * 1024, 0x20));
  const place = { file: "books/bomb.gnucash", url: "file:///srv/books/bomb.gnucash", format: "gnucash" as const };
  expect(() => bookRecords(bomb, place)).toThrow(new SourceSkipped("expands beyond 64 MB"));
});
