// A record's value is read once per version of its text (record-memo.ts); a local index's frozen
// record met again is not read and hashed again (issue 36), any other record is.
import { expect, test } from "bun:test";
import type { SourceRecord } from "../../src/connectors/types";
import { RecordMemo, recordKey } from "../../src/retrieval/record-memo";

const record = (content: string): SourceRecord => ({
  id: "r1",
  title: "r1.txt",
  content,
  source_url: "file:///r1.txt",
  date: null,
  type: "file",
  path: "r1.txt",
  metadata: {},
});
const frozen = (r: SourceRecord) => {
  Object.freeze(r.metadata);
  return Object.freeze(r);
};

test("a frozen record met again is neither read nor hashed again, and its value is the same", () => {
  let computed = 0;
  let read = 0;
  const memo = new RecordMemo<number>(
    1_000,
    () => 1,
    (text) => (computed++, text.length),
  );
  const textOf = (r: SourceRecord) => (read++, `${r.title} ${r.content}`);
  const key = recordKey("alice", "docs", "r1");
  const r = frozen(record("twelve words"));
  for (let i = 0; i < 5; i++) expect(memo.getOfRecord(key, r, textOf)).toBe("r1.txt twelve words".length);
  expect({ computed, read, hashed: memo.hashed }).toEqual({ computed: 1, read: 1, hashed: 1 });
  // Another object of the same text (opened again): read and hashed, not computed.
  expect(memo.getOfRecord(key, frozen(record("twelve words")), textOf)).toBe(19);
  expect({ computed, read, hashed: memo.hashed }).toEqual({ computed: 1, read: 2, hashed: 2 });
  // Another version: computed again.
  expect(memo.getOfRecord(key, frozen(record("a longer text now")), textOf)).toBe(24);
  expect(computed).toBe(2);
});

test("a record that can change (not frozen, or its metadata not) is read and hashed every time, and a change is seen", () => {
  let computed = 0;
  const memo = new RecordMemo<string>(
    1_000,
    () => 1,
    (text) => (computed++, text),
  );
  const key = recordKey("alice", "sql", "r1");
  const r = record("first");
  expect(memo.getOfRecord(key, r, (x) => x.content)).toBe("first");
  r.content = "second";
  expect(memo.getOfRecord(key, r, (x) => x.content)).toBe("second");
  const half = Object.freeze(record("metadata open"));
  memo.getOfRecord(key, half, (x) => x.content);
  memo.getOfRecord(key, half, (x) => x.content);
  expect({ computed, hashed: memo.hashed }).toEqual({ computed: 3, hashed: 4 });
});

test("a value read from the record itself (computeOf) is remembered as any: a frozen record met again is neither read nor hashed", () => {
  let computed = 0;
  let read = 0;
  const memo = new RecordMemo<number>(1_000, () => 1);
  const key = recordKey("alice", "shop", "r1");
  const r = frozen(record("Total 12.50 EUR"));
  const textOf = (x: SourceRecord) => (read++, x.content);
  for (let i = 0; i < 4; i++) expect(memo.getOfRecord(key, r, textOf, () => (computed++, r.content.length))).toBe(15);
  expect({ computed, read, hashed: memo.hashed }).toEqual({ computed: 1, read: 1, hashed: 1 });
});
