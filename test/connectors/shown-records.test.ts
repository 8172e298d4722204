// A record as users are shown it (source-url.ts shownRecord): a local index's frozen record, met
// again by every question it is a candidate of, is copied and cited once (issue 36), its copy
// frozen as it is; a record that can change is cited anew each time, and its change is seen.
import { expect, test } from "bun:test";
import { shownRecord } from "../../src/connectors/source-url";
import type { SourceRecord } from "../../src/connectors/types";
import { RecordMemo, recordKey } from "../../src/retrieval/record-memo";

const record = (path: string): SourceRecord => ({
  id: path,
  title: "Invoice 7",
  content: "Total 120.00 EUR",
  source_url: `file:///srv/private/${path}`,
  date: null,
  type: "file",
  path,
  metadata: { size: 16 },
});
const frozen = (r: SourceRecord) => {
  Object.freeze(r.metadata);
  return Object.freeze(r);
};
const operator = { id: "invoices", owner: "operator" as const };

test("a frozen record of an operator's connector is copied and cited once, its copy frozen and the same each time", () => {
  const r = frozen(record("2024/inv 7.pdf"));
  const first = shownRecord(operator, r);
  expect(first.source_url).toBe("corpus://invoices/2024/inv%207.pdf");
  expect(Object.isFrozen(first)).toBe(true);
  for (let i = 0; i < 3; i++) expect(shownRecord(operator, r)).toBe(first);
  // The copy is what a record memo knows it met again: read and hashed once for every question.
  let read = 0;
  const memo = new RecordMemo<number>(
    1_000,
    () => 1,
    (text) => text.length,
  );
  for (let i = 0; i < 5; i++) memo.getOfRecord(recordKey("alice", "invoices", r.id), shownRecord(operator, r), (x) => (read++, x.content));
  expect({ read, hashed: memo.hashed }).toEqual({ read: 1, hashed: 1 });
});

test("the same frozen record shown for another connector or owner is cited for that one", () => {
  const r = frozen(record("a.pdf"));
  expect(shownRecord(operator, r).source_url).toBe("corpus://invoices/a.pdf");
  expect(shownRecord({ id: "other", owner: "operator" }, r).source_url).toBe("corpus://other/a.pdf");
  // A user's own connector shows its own URL: the record itself.
  expect(shownRecord({ id: "other", owner: "user" }, r)).toBe(r);
  expect(shownRecord(operator, r).source_url).toBe("corpus://invoices/a.pdf");
});

test("a record that can change is cited anew each time: a new path is seen", () => {
  const r = record("a.pdf");
  const first = shownRecord(operator, r);
  expect(Object.isFrozen(first)).toBe(false);
  r.path = "b.pdf";
  expect(shownRecord(operator, r).source_url).toBe("corpus://invoices/b.pdf");
  // Frozen without its metadata: its copy could not be told to be the same.
  const half = Object.freeze(record("c.pdf"));
  expect(shownRecord(operator, half)).not.toBe(shownRecord(operator, half));
});
