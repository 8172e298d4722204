// PDF text through unpdf (pdf.js), bounded: before pdf.js sees the file, its compressed streams
// (but images, which text extraction never decodes) are inflated under MAX_EXPANDED_BYTES, so
// that a small file that inflates to gigabytes is skipped; then pages are read one at a time,
// at most MAX_PDF_PAGES, each page's text streamed and the reading stopped once MAX_TEXT_CHARS
// are kept. (An encrypted file's streams cannot be checked before pdf.js decrypts them: for
// those the streamed text and the page bound are what limits the work.)
import { inflateSync } from "node:zlib";
import type { Extracted } from "./extract";
import { EXPANDS_TOO_FAR, FileSkipped, MAX_EXPANDED_BYTES, MAX_PDF_PAGES, TextBudget } from "./limits";

/** How far back from `stream` its dictionary is looked for. */
const DICT_WINDOW = 16 * 1024;

const STREAM = Buffer.from("stream");
const OBJ = Buffer.from("obj");

/** Whether the dictionary before a stream asks for FlateDecode first, for a stream that is not an image. */
function isCheckedStream(dict: string): boolean {
  if (/\/Subtype\s*\/Image\b/.test(dict)) return false;
  return /\/Filter\s*(\[\s*)?\/FlateDecode\b/.test(dict);
}

/**
 * Inflates every checked stream, all together at most MAX_EXPANDED_BYTES; FileSkipped beyond.
 * Linear in the file: a stream's dictionary is looked for between the keyword before it and
 * the stream, at most DICT_WINDOW bytes back, so no byte is looked at for two streams. (Looking
 * back for `obj` from the stream, through the whole file when there was none, made 300,000
 * `stream` lines of 2 MB cost 19-22 s.) `onLookedAt` counts the bytes looked at, for tests.
 */
export function checkPdfStreams(buf: Buffer, onLookedAt: (bytes: number) => void = () => {}): void {
  if (buf.includes("/Encrypt")) return;
  let spent = 0;
  /** Where the last `stream` keyword ended: no dictionary reaches back past it. */
  let previous = 0;
  for (let at = buf.indexOf(STREAM); at >= 0; at = buf.indexOf(STREAM, at + STREAM.length)) {
    const floor = Math.max(previous, at - DICT_WINDOW);
    previous = at + STREAM.length;
    if (at >= 3 && buf.toString("latin1", at - 3, at) === "end") continue;
    let start = at + STREAM.length;
    if (buf[start] === 0x0d) start++;
    if (buf[start] !== 0x0a && buf[start - 1] !== 0x0d) continue;
    if (buf[start] === 0x0a) start++;
    const window = buf.subarray(floor, at);
    onLookedAt(window.length);
    const obj = window.lastIndexOf(OBJ);
    if (!isCheckedStream(window.toString("latin1", Math.max(obj, 0)))) continue;
    const room = MAX_EXPANDED_BYTES - spent;
    try {
      spent += inflateSync(buf.subarray(start), { maxOutputLength: Math.max(1, room) }).length;
    } catch (error) {
      if (error instanceof RangeError || (error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE")
        throw new FileSkipped(EXPANDS_TOO_FAR);
      // Broken data: pdf.js copes with it or fails the file itself.
    }
    if (spent > MAX_EXPANDED_BYTES) throw new FileSkipped(EXPANDS_TOO_FAR);
  }
}

interface TextItem {
  str?: string;
  hasEOL?: boolean;
}

/** One page's text, read as pdf.js streams it; the stream is cancelled once `budget` is full. */
async function pageText(page: { streamTextContent(): ReadableStream<{ items: TextItem[] }> }, budget: TextBudget): Promise<void> {
  const reader = page.streamTextContent().getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      for (const item of value.items) {
        if (item.str == null) continue;
        budget.add(item.hasEOL ? `${item.str}\n` : item.str);
      }
      if (budget.full) return;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** Collapses spaces but keeps lines, at most one blank line (as unpdf's mergePages did). */
const normalize = (text: string) =>
  text
    .replace(/[^\S\n]+/g, " ")
    .replace(/ ?\n ?/g, "\n")
    .replace(/\n{3,}/g, "\n\n");

export async function pdfText(bytes: Uint8Array): Promise<Extracted> {
  checkPdfStreams(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const { getDocumentProxy, getMeta } = await import("unpdf");
  // pdf.js may take the array over: it gets a copy.
  const pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
  try {
    const budget = new TextBudget();
    const pages = Math.min(pdf.numPages, MAX_PDF_PAGES);
    for (let n = 1; n <= pages && !budget.full; n++) {
      const page = await pdf.getPage(n);
      await pageText(page as never, budget);
      if (n < pages) budget.add("\n");
      page.cleanup();
    }
    const meta = await getMeta(pdf).catch(() => undefined);
    const title = (meta?.info as { Title?: string } | undefined)?.Title?.trim();
    return { text: normalize(budget.text()), title: title || undefined, pages: pdf.numPages };
  } finally {
    await pdf.loadingTask.destroy().catch(() => {});
  }
}
