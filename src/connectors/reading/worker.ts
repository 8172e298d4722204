// The reading worker (a Bun Worker, started by reader.ts): parses what sources send (PDF, DOCX,
// ODT, PPTX, HTML, CSV, JSON, spreadsheets, mail, journals) off the thread that serves requests (D31),
// and cuts the records an index asked for into their chunks. A job that runs past its
// budget is not stopped from here: the reader ends this thread and starts another.
import { readFileSync } from "node:fs";
import { shippedTokenizer, type WordPieceTokenizer } from "../../embedding/tokenizer";
import { collectIfOverBudget } from "../../limits/memory";
import { embeddedChunks } from "../../retrieval/chunk";
import { bookRecords } from "../books/records";
import { extractText, fileTexts } from "../files/extract";
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

let tokenizer: WordPieceTokenizer | undefined;

/**
 * Each record's texts to embed (retrieval/chunk.ts embeddedChunks), cut here for its index (D31):
 * each record's cut within a budget of its own, as its reading was.
 */
function chunksOf(records: Array<{ title: string; content: string }>, seq: number): string[][] {
  tokenizer ??= shippedTokenizer();
  return records.map((r) => {
    const chunks = embeddedChunks(r, tokenizer!);
    post({ type: "record", seq });
    return chunks;
  });
}

async function run(m: ToReader): Promise<void> {
  try {
    const onRecord = () => post({ type: "record", seq: m.seq });
    if (m.type === "chunks") {
      post({ type: "chunks", seq: m.seq, chunks: chunksOf(m.records, m.seq) });
      return;
    }
    if (m.type === "file") {
      const extracted = await extractText(m.bytes, m.fileType);
      const chunks = m.chunkTitle === undefined ? undefined : chunksOf([fileTexts(extracted, m.chunkTitle)], m.seq)[0];
      post({ type: "file", seq: m.seq, extracted, ...(chunks ? { chunks } : {}) });
      return;
    }
    const records =
      m.type === "sheet"
        ? await sheetRecords(m.bytes, m.place, onRecord)
        : m.type === "books"
          ? bookRecords(m.bytes, m.place, onRecord)
          : await mailRecords(Buffer.from(m.raw.buffer, m.raw.byteOffset, m.raw.byteLength), m.place, onRecord);
    const chunks = m.chunk ? { chunks: chunksOf(records, m.seq) } : {};
    post({ type: m.type, seq: m.seq, records, ...chunks });
  } catch (error) {
    if (error instanceof SourceSkipped) post({ type: "skipped", seq: m.seq, reason: error.message });
    else post({ type: "failed", seq: m.seq, message: error instanceof Error ? error.message : String(error) });
  }
}

// A parse's garbage is collected here, on this thread, when the process is over its budget (the serving thread no longer collects for it).
self.onmessage = (event: MessageEvent<ToReader>) => void run(event.data).then(collectIfOverBudget);
post({ type: "ready", thread: threadId() });
