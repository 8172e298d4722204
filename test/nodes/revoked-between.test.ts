// A revocation on another node between a request's check and its write (D25, D33): node A (the
// app on the shared PostgreSQL) answers a question while node B (another `postgres.Sql` to the
// same database) holds a deletion's transaction open with the user's revocation stamped. A's
// check before the write reads only what committed, so it finds the token standing; the write
// itself must wait for B's transaction and then be refused, leaving nothing archived.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import type postgres from "postgres";
import type { PostgresAuthStore } from "../../src/auth/store-postgres";
import type { SourceRecord } from "../../src/connectors/types";
import { AskRefused, ask } from "../../src/questions/ask";
import { newMasterKey } from "../backup/support";
import { tempDir, testApp } from "../helpers";
import { askedToo, heldSource } from "../support/held-source";
import { type SharedDatabase, sharedDatabase } from "../support/shared-database";
import { until } from "../support/wait";

setDefaultTimeout(120_000);

const USER = "asker-5521";
const record: SourceRecord = {
  id: "r1",
  title: "Dabhol",
  content: "A record about the Dabhol plant and its power purchase agreement.",
  source_url: "https://x.example/r1",
  date: null,
  type: "file",
  path: "r1",
  metadata: {},
};

let db: SharedDatabase;
let b: postgres.Sql;
beforeAll(async () => {
  db = await sharedDatabase();
  b = db.client();
});
afterAll(() => db?.drop());

/** Transactions of the shared database waiting for an advisory lock (a user's, held by B). */
const waitingOnLocks = async () =>
  Number((await b<{ n: string }[]>`SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)[0]!.n);

test("a user's deletion begun on B while A answers: A's archive write waits for it and is refused, nothing archived", async () => {
  const t = await testApp({
    CORPUS_DATABASE_URL: db.database.url,
    CORPUS_MASTER_KEY: newMasterKey(),
    CORPUS_DATA_DIR: join(tempDir(), "data"),
  });
  try {
    const { token } = await t.services.auth.issuer.issue(USER, ["corpus:search"]);
    const principal = await t.services.auth.authenticate(`Bearer ${token}`, "corpus:search");
    // What the guard does before a question (D33: the key made present on this node).
    await t.services.userKeys.ready(USER, { create: true });
    const held = heldSource([record]);
    askedToo(t, "held", "Held", "user", held.connector);
    const pending = ask(t.services, { user: USER, question: "Dabhol plant", perConnector: 5, limit: 5, principal }).then(
      () => undefined,
      (error: unknown) => error,
    );
    await held.asked;

    // B: the deletion's first step (the user's revocation, users/deletion.ts), its transaction held open.
    const store = t.services.auth.store as PostgresAuthStore;
    let commit!: () => void;
    const committing = new Promise<void>((r) => (commit = r));
    let stamped!: () => void;
    const begun = new Promise<void>((r) => (stamped = r));
    const deletion = b.begin(async (tx) => {
      await store.within(tx).revokeUser(USER, Date.now() + 1000);
      stamped();
      await committing;
    });
    await begun;

    held.release();
    let settled = false;
    void pending.then(() => (settled = true));
    // A reaches its write (and waits for B's transaction), or, without the check where it writes, is done.
    await until("A's write to wait for B's deletion or to end", async () => (settled || (await waitingOnLocks()) > 0 ? true : undefined));
    commit();
    await deletion;

    const refused = await pending;
    expect(refused instanceof AskRefused ? refused.reason : refused).toBe("revoked");
    expect(await t.services.archive.rowsOf(USER)).toBe(0);
  } finally {
    await t.services.close();
  }
});
