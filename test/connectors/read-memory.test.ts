// D31: a record whose reading fills the reading worker's memory is skipped with its reason and
// the worker started again. Bun's Worker takes no heap limit (resourceLimits is ignored), so the
// reader bounds how much the process's own memory grows while a job is read (READ_MEMORY_BYTES).
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { neededTooMuchMemory, READ_MEMORY_BYTES, SourceReader, tookTooLong } from "../../src/connectors/reading/reader";
import { SourceSkipped } from "../../src/connectors/types";
import { ownMemoryBytes } from "../../src/limits/memory";
import { HUNGRY } from "../support/memory-hungry-reader";

setDefaultTimeout(60_000);

const MEMORY_BYTES = 256 * 1024 * 1024;
const reader = new SourceReader({
  budgetMs: 2_000,
  memoryBytes: MEMORY_BYTES,
  entry: join(import.meta.dir, "../support/memory-hungry-reader.ts"),
});
afterAll(() => reader.close());
const encode = (s: string) => new TextEncoder().encode(s);

test("attack: a record that fills the reader's memory is skipped with its reason, and the next is read by a fresh worker", async () => {
  expect(READ_MEMORY_BYTES).toBeGreaterThan(MEMORY_BYTES);
  const before = ownMemoryBytes();
  const value = await reader.file(encode(`${HUNGRY} a crafted record`), "text").catch((e: Error) => e);
  // Was skipped only by its wall time (the thread waits, past 1.5 GB), as tookTooLong.
  expect(value).toBeInstanceOf(SourceSkipped);
  expect((value as Error).message).toBe(neededTooMuchMemory(MEMORY_BYTES));
  expect((value as Error).message).not.toBe(tookTooLong(2_000));
  expect(reader.restarts).toBe(1);
  expect(await reader.file(encode("The offsite is in Lisbon."), "text")).toEqual({ text: "The offsite is in Lisbon." });
  // The ended worker's memory is the process's no more (it grew by the bound and a check's worth).
  expect(ownMemoryBytes() - before).toBeLessThan(2 * MEMORY_BYTES);
});
