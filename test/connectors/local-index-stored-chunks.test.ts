// A result is cited from the texts its record's chunks were embedded as (documents.ts
// storedChunkTexts, D31): read and opened once per sealing of the record's row, not on every
// question that cites it (issue 36: 2.8 of the serving thread's ms a question of
// scripts/bench/query.ts read and opened every chunk of every returned record again). Counted:
// rows read and chunks opened; a record put again is read anew.
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { EmbeddedIndex, indexKeysFor, indexMigrations } from "../../src/connectors/local-index";
import { storedChunkReads } from "../../src/connectors/local-index/documents";
import type { SourceRecord } from "../../src/connectors/types";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";

const record = (id: string, content: string): SourceRecord => ({
  id,
  title: id,
  content,
  source_url: "",
  date: null,
  type: "file",
  path: id,
  metadata: {},
});

/** Two chunks a record: its two lines. */
const twoLines = (r: SourceRecord) => r.content.split("\n");

function index() {
  const db = openDatabase(tempDir(), [...cryptoMigrations, ...indexMigrations]);
  const keys = indexKeysFor(new UserKeys(db, randomBytes(32)), "alice", "docs", true);
  // Chunks opened (their rows are `chunk/<doc>/<ord>`), counted.
  const opened: string[] = [];
  const counted = {
    ...keys,
    open: (sealed: Uint8Array, row: string) => (row.startsWith("chunk/") && opened.push(row), keys.open(sealed, row)),
  };
  return { docs: new EmbeddedIndex(db, "alice/docs", counted, twoLines), opened };
}

const request = { terms: ["harbour"], phrases: [], limit: 5 };

test("attack: a record cited question after question has its stored chunks read and opened once", async () => {
  const { docs, opened } = index();
  await docs.put({ source: "a.txt", size: 1, mtime: 1 }, [record("a", "harbour audit first part\nharbour audit second part")]);
  const reads = storedChunkReads.count;
  for (let question = 0; question < 5; question++) {
    const [hit] = docs.rankHere(request);
    expect(hit!.storedChunks?.()).toEqual(["harbour audit first part", "harbour audit second part"]);
  }
  expect(storedChunkReads.count - reads).toBe(1);
  expect(opened).toHaveLength(2);
});

test("a record put again is cited from its new chunks: read anew, never the old version's", async () => {
  const { docs, opened } = index();
  await docs.put({ source: "a.txt", size: 1, mtime: 1 }, [record("a", "harbour audit old\nold second part")]);
  expect(docs.rankHere(request)[0]!.storedChunks?.()).toEqual(["harbour audit old", "old second part"]);
  await docs.put({ source: "a.txt", size: 2, mtime: 2 }, [record("a", "harbour audit new\nnew second part")]);
  expect(docs.rankHere(request)[0]!.storedChunks?.()).toEqual(["harbour audit new", "new second part"]);
  expect(opened).toHaveLength(4);
});
