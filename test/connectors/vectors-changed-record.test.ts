// Attack on a folder index's vectors (local-index/vectors.ts setVectors): a batch stores its
// vectors only into chunks "still of this index, of the same record and place, and owed". But a
// record and its chunks are numbers an INTEGER PRIMARY KEY gives (no AUTOINCREMENT): a file that
// changes while its batch is in the worker is removed and put again in one transaction
// (documents.ts putRecords), and when its record and chunks were the index's last, the new ones
// get the very same numbers. Same owner, doc and ord, owed: the old text's vector is written into
// the new text's chunk and marked embedded, for good (the file's meaning stays the old one).
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { EmbeddedIndex, indexKeysFor } from "../../src/connectors/local-index";
import { UserKeys } from "../../src/crypto/user-keys";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { MIGRATIONS } from "../../src/migrations";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";

const note = (content: string) => ({
  id: "n1",
  title: "Plan",
  content,
  source_url: "file:///n1",
  date: null,
  type: "file" as const,
  path: "n1",
  metadata: {},
});

test("attack: a file changed while its batch is in the worker gets the old text's vector", async () => {
  const dir = tempDir();
  const db = openDatabase(dir, MIGRATIONS);
  const keys = new UserKeys(db, randomBytes(32));
  const index = new EmbeddedIndex(db, "alice/notes", indexKeysFor(keys, "alice", "notes", true), (r) => [r.content]);
  await index.put({ source: "n1", size: 10, mtime: 1 }, [note("The launch is on Monday.")]);

  // The connector's embedding loop takes the owed chunk and sends its text to the worker...
  const batch = index.pendingChunks(64);
  expect(batch.map((b) => b.text)).toEqual(["The launch is on Monday."]);
  // ...meanwhile the file is saved again with other words, and the sync puts it again.
  await index.put({ source: "n1", size: 12, mtime: 2 }, [note("The launch is cancelled; the team moves to the harbour audit.")]);
  // The vector of the old text comes back.
  index.setVectors(batch, [new Float32Array(EMBEDDING_DIM).fill(0.1)]);

  // Was []: the new chunk, of the same numbers, marked embedded with the old text's
  // vector; nothing is owed any more, so the new words are never embedded.
  expect(index.pendingChunks(64).map((b) => b.text)).toEqual(["The launch is cancelled; the team moves to the harbour audit."]);
  db.close();
});
