// A process that puts a source's records into a local index (test/connectors/staged-put-crash.test.ts):
// `old` puts OLD_RECORDS and exits; `new` puts NEW_RECORDS over them and SIGKILLs itself at the
// first turn of the event loop that finds some of them written (between two of the put's transactions).
//   bun test/support/staged-put-child.ts <data folder> <master key, hex> old|new
import { EmbeddedIndex, indexKeysFor, indexMigrations } from "../../src/connectors/local-index";
import type { SourceRecord } from "../../src/connectors/types";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { openDatabase } from "../../src/store/database";

export const OWNER = "alice/mail";
export const ENTRY = { source: "mbox", size: 1, mtime: 1 };
export const OLD_RECORDS = 5;
export const NEW_RECORDS = 3_000;

export const mail = (id: string): SourceRecord => ({
  id,
  title: `Subject ${id}`,
  content: `harbour audit ${id}`,
  source_url: `mbox/${id}`,
  date: null,
  type: "email",
  path: `mbox/${id}`,
  metadata: {},
});
export const generation = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => mail(`${prefix}-${i}`));

export function openIndex(dir: string, masterKey: Buffer) {
  const db = openDatabase(dir, [...cryptoMigrations, ...indexMigrations]);
  const keys = new UserKeys(db, masterKey);
  return { db, index: new EmbeddedIndex(db, OWNER, indexKeysFor(keys, "alice", "mail", true), (r) => [r.content]) };
}

if (import.meta.main) {
  const [dir, key, mode] = process.argv.slice(2);
  const { db, index } = openIndex(dir!, Buffer.from(key!, "hex"));
  if (mode === "old") {
    await index.put(ENTRY, generation("old", OLD_RECORDS));
    db.close();
  } else {
    const rows = db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM connector_docs WHERE owner = ?");
    const look = () => {
      if (rows.get(OWNER)!.n > OLD_RECORDS) process.kill(process.pid, "SIGKILL");
      setImmediate(look);
    };
    setImmediate(look);
    await index.put({ ...ENTRY, mtime: 2 }, generation("new", NEW_RECORDS));
    console.log("switched in before the kill");
  }
}
