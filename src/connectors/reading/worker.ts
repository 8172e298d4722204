// The reading worker (a Bun Worker, started by reader.ts): parses what sources send (PDF, DOCX,
// ODT, PPTX, HTML, CSV, JSON, spreadsheets, mail, journals) off the thread that serves requests (D31). A job that runs past its
// budget is not stopped from here: the reader ends this thread and starts another.
import { readFileSync } from "node:fs";
import { collectIfOverBudget } from "../../limits/memory";
import { bookRecords } from "../books/records";
import { extractText } from "../files/extract";
import { sheetRecords } from "../files/sheets";
import { mailRecords } from "../maildir/message";
import { SourceSkipped } from "../types";
import type { FromReader, ToReader } from "./protocol";

declare const self: Worker;

const post = (message: FromReader) => self.postMessage(message);

/** This thread's id (Linux): the reader reads its CPU time from /proc; 0 elsewhere. */
function threadId(): number {
  try {
    return Number(readFileSync("/proc/thread-self/stat", "latin1").split(" ", 1)[0]) || 0;
  } catch {
    return 0;
  }
}

async function run(m: ToReader): Promise<void> {
  try {
    if (m.type === "file") post({ type: "file", seq: m.seq, extracted: await extractText(m.bytes, m.fileType) });
    else if (m.type === "sheet")
      post({ type: "sheet", seq: m.seq, records: await sheetRecords(m.bytes, m.place, () => post({ type: "record", seq: m.seq })) });
    else if (m.type === "books")
      post({ type: "books", seq: m.seq, records: bookRecords(m.bytes, m.place, () => post({ type: "record", seq: m.seq })) });
    else {
      const raw = Buffer.from(m.raw.buffer, m.raw.byteOffset, m.raw.byteLength);
      post({ type: "mail", seq: m.seq, records: await mailRecords(raw, m.place, () => post({ type: "record", seq: m.seq })) });
    }
  } catch (error) {
    if (error instanceof SourceSkipped) post({ type: "skipped", seq: m.seq, reason: error.message });
    else post({ type: "failed", seq: m.seq, message: error instanceof Error ? error.message : String(error) });
  }
}

// A parse's garbage is collected here, on this thread, when the process is over its budget (the serving thread no longer collects for it).
self.onmessage = (event: MessageEvent<ToReader>) => void run(event.data).then(collectIfOverBudget);
post({ type: "ready", thread: threadId() });
