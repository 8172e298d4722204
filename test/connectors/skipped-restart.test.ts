// A file skipped for taking longer than its reading budget (D31) stays skipped across a restart:
// before, the skip list was kept in memory, and after each restart every hostile file was read
// again, burning its 5 s budget again, until it failed again. A changed file (a touch) is read
// again; the status names the file as it did; no name of it is readable in the data folder.

import type { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { filesSource } from "../../src/connectors/files/connector";
import { IndexedFolderConnector } from "../../src/connectors/indexed-source";
import { EmbeddedIndex, indexKeysFor, indexMigrations } from "../../src/connectors/local-index";
import { dropIndex } from "../../src/connectors/local-index/maintenance";
import { SourceReader, TOOK_TOO_LONG } from "../../src/connectors/reading/reader";
import { type ConnectorStatus, SourceSkipped } from "../../src/connectors/types";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";

const HOSTILE = "hostile-quarterly.pdf";
const folder = tempDir("corpus-skipped-restart-");
writeFileSync(join(folder, "minutes.txt"), "The harbour audit is due on Friday.");
writeFileSync(join(folder, HOSTILE), "%PDF-1.4 crafted to take longer than any budget");
const dataDir = tempDir("corpus-skipped-restart-data-");
const masterKey = randomBytes(32);

/** Reads asked of the reader, by what they held: the worker's budget is what a hostile file burns. */
const reads: string[] = [];
/** The reader of the worker, as it answers a record over its budget (reader.ts checkBudget). */
function budgetedReader(): SourceReader {
  const reader = new SourceReader();
  reader.file = async (bytes) => {
    const text = new TextDecoder().decode(bytes);
    reads.push(text);
    if (text.startsWith("%PDF")) throw new SourceSkipped(TOOK_TOO_LONG);
    return { text };
  };
  return reader;
}

const open: Database[] = [];
afterAll(() => {
  for (const db of open) db.close();
});

/** The server started (again) on the same data folder: the files connector's first sync done. */
async function start(): Promise<{ db: Database; userKeys: UserKeys; connector: IndexedFolderConnector }> {
  const db = openDatabase(dataDir, [...cryptoMigrations, ...indexMigrations]);
  open.push(db);
  const userKeys = new UserKeys(db, masterKey);
  const index = new EmbeddedIndex(db, "alice/docs", indexKeysFor(userKeys, "alice", "docs", true));
  const connector = new IndexedFolderConnector("files", folder, index, filesSource(folder, undefined, budgetedReader()));
  await connector.sync();
  return { db, userKeys, connector };
}

async function restart(before: { db: Database; connector: IndexedFolderConnector }) {
  await before.connector.close();
  before.db.close();
  open.splice(open.indexOf(before.db), 1);
  return start();
}

const hostileReads = () => reads.filter((r) => r.startsWith("%PDF")).length;
const SKIPPED: ConnectorStatus = { status: "ok", records: 1, reason: `skipped 1 file: ${HOSTILE} ${TOOK_TOO_LONG}` };

test("a file over its reading budget is not read again after a restart; touched, it is; the status names it meanwhile", async () => {
  let server = await start();
  expect({ reads: hostileReads(), health: await server.connector.health() }).toEqual({ reads: 1, health: SKIPPED });

  server = await restart(server);
  expect({ reads: hostileReads(), health: await server.connector.health() }).toEqual({ reads: 1, health: SKIPPED });

  // Changed (a touch: another mtime): read again, and skipped again.
  const later = new Date(Date.now() + 60_000);
  utimesSync(join(folder, HOSTILE), later, later);
  server = await restart(server);
  expect({ reads: hostileReads(), health: await server.connector.health() }).toEqual({ reads: 2, health: SKIPPED });
  await server.connector.close();
});

test("the skipped file's name is sealed in the data folder (D3), opened by its owner's key only; dropping the connector's index drops its skips", async () => {
  const server = await start();
  server.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const stored = readdirSync(dataDir).map((f) => readFileSync(join(dataDir, f)).toString("latin1"));
  expect(stored.filter((bytes) => bytes.includes("hostile-quarterly")).length).toBe(0);
  expect(server.db.query("SELECT count(*) AS n FROM connector_skipped").get()).toEqual({ n: 1 });
  // The owner's key destroyed (a deletion under way): the status opens nothing, and says nothing of it.
  server.userKeys.destroy("alice");
  expect((await server.connector.health()).reason).toBeUndefined();
  await server.connector.close();
  dropIndex(server.db, "alice/docs");
  expect(server.db.query("SELECT count(*) AS n FROM connector_skipped").get()).toEqual({ n: 0 });
});
