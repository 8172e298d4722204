import type { ArchiveInput } from "../../src/archive/store";

/** An answer's chunk as the archive stores it, with the text its vector is made of. */
export const archivedChunk = (id: string, title: string, content: string): Omit<ArchiveInput, "owner"> => ({
  chunk: { chunk_id: id, connector: "docs", title, content, source_url: "file:///x", type: "file", path: "x", date: null },
  embedText: `${title}\n${content}`,
});
