// `corpus migrate --to postgres://…` (D33), on a real data folder (a user, a folder connector
// indexed and embedded, answers archived, a conversation, an OAuth client and tokens, webhooks
// and a queued delivery) into a real PostgreSQL with pgvector: every table's rows on both sides,
// a sample opened with the key on both sides; the index found by its words and by meaning
// through the PostgreSQL store as through the embedded one; a copy killed with SIGKILL midway is
// finished by a second run with nothing doubled; a target holding corpus rows is refused; a
// `pg_dump` of the target spells none of the folder's words, names or paths.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { PostgresAccountRecords } from "../../src/accounts/store-postgres";
import { SIGNING_KEY_FILE } from "../../src/auth/signing-key";
import { candidates } from "../../src/connectors/local-index/candidates";
import { indexKeysFor } from "../../src/connectors/local-index/context";
import { PostgresIndexRows } from "../../src/connectors/local-index/store-postgres";
import { defaultMasterKeyFile, existingMasterKey } from "../../src/crypto/master-key";
import { UserKeys } from "../../src/crypto/user-keys";
import { PostgresUserKeyRecords } from "../../src/crypto/user-keys-postgres";
import { MIGRATE_MESSAGES } from "../../src/migrate/errors";
import { PROGRESS_TABLE } from "../../src/migrate/run";
import { PG_MIGRATIONS } from "../../src/migrations";
import { DATABASE_FILE, loadSqliteVec } from "../../src/store/database";
import { openSharedDatabase } from "../../src/store/shared";
import { baseEnv, CLI, cli } from "../backup/support";
import { bearer, connectorsSettled, postJson, tempDir, testApp } from "../helpers";
import { migratedDataDir } from "../support/migrated";
import { type VectorDatabase, vectorDatabase } from "../support/pg-vectors";
import { treeDigest } from "../support/tree-digest";
import { until } from "../support/wait";

setDefaultTimeout(300_000);

const USER = "u-migrate-4711";
const LEAVER = "u-leaver-0815";
/** Words, a file name and a folder name of the folder indexed: none may be spelt in PostgreSQL. */
const SECRET_WORDS = ["quokkaharbour", "zanzibarledger"];
const SECRET_FILE = "hafenkran-vertrag.txt";
const SECRET_FOLDER = "geheime-akten";

let dataDir: string;
let env: Record<string, string>;
/** The question and its vector (the model's), for the search by meaning on both stores. */
const QUESTION = "who signed the crane lease at the harbour";
let questionVector: Float32Array;
/** The roots the folder connector reads (a node after the copy is given the same). */
let roots: string;
/** The top chunk the folder's server cited for QUESTION. */
let folderAnswer: { content: string; metadata: Record<string, unknown> };

/** The first chunk cited for QUESTION by `app`'s /v1/query. */
async function topChunk(app: { handle(r: Request): Promise<Response> }, token: string) {
  const r = await app.handle(postJson("/v1/query", { query: QUESTION }, bearer(token)));
  expect(r.status).toBe(200);
  const body = (await r.json()) as {
    results: Array<{ connector: string; chunks: Array<{ content: string; metadata: Record<string, unknown> }> }>;
  };
  return body.results.find((g) => g.connector === "docs")!.chunks[0]!;
}

beforeAll(async () => {
  roots = tempDir("corpus-migrate-roots-");
  const folder = join(roots, SECRET_FOLDER);
  mkdirSync(folder);
  writeFileSync(
    join(folder, SECRET_FILE),
    `Crane lease agreement\n\nThe ${SECRET_WORDS[0]} terminal lease for the harbour crane was signed by Marta Olsen on 3 March 2024. The ${SECRET_WORDS[1]} shows the first payment of 12,400 EUR.\n`,
  );
  writeFileSync(join(folder, "menu.txt"), "Lunch menu\n\nSoup of the day, bread and cheese; coffee after twelve.\n");
  writeFileSync(join(folder, "trip.txt"), "Train tickets\n\nTickets to Utrecht for the team visit on Friday, seats reserved in coach 5.\n");
  dataDir = migratedDataDir();
  const t = await testApp({
    CORPUS_DATA_DIR: dataDir,
    CORPUS_CONNECTOR_ROOTS: roots,
    CORPUS_WEBHOOK_ALLOW_PRIVATE: "true",
    CORPUS_WEBHOOK_URL: "http://127.0.0.1:9/operator",
    CORPUS_WEBHOOK_SECRET: "operator-secret-0123456789",
  });
  try {
    const scopes = ["corpus:search", "corpus:read", "connectors:read", "connectors:write"] as never;
    const token = (await t.services.auth.issuer.issue(USER, scopes)).token;
    await t.services.auth.issuer.issue(USER, ["corpus:read"]);
    const leaver = (await t.services.auth.issuer.issue(LEAVER, scopes)).token;
    const added = await t.app.handle(postJson("/v1/connectors", { id: "docs", kind: "files", config: { path: folder } }, bearer(token)));
    expect(added.status).toBe(200);
    await connectorsSettled(t.services, USER);
    folderAnswer = await topChunk(t.app, token);
    expect((await t.app.handle(postJson("/v1/query", { query: "lunch menu soup", conversation_id: null }, bearer(token)))).status).toBe(
      200,
    );
    expect((await t.app.handle(postJson("/v1/webhooks", { url: "http://127.0.0.1:9/hook" }, bearer(token)))).status).toBe(200);
    // A client registered with the authorization server (RFC 7591) and a password account.
    const registered = await t.app.handle(
      postJson("/oauth/register", { client_name: "Migrated app", redirect_uris: ["http://127.0.0.1:7777/callback"] }),
    );
    expect(registered.status).toBe(201);
    await t.services.accounts.add("marta", "a long enough password");
    // A user who leaves: the operator's webhook is owed a delivery (the worker is not started).
    expect(
      (await t.app.handle(new Request("http://localhost/v1/delete_my_data", { method: "DELETE", headers: bearer(leaver) }))).status,
    ).toBe(200);
    questionVector = (await t.services.embeddings.embed(USER, [QUESTION]))[0]!;
  } finally {
    await t.services.close();
  }
  env = { CORPUS_DATA_DIR: dataDir };
});

/** Rows of each copied table in the folder, counted directly (the oracle the command's own counts must match). */
function folderCounts(): Record<string, number> {
  const db = new Database(join(dataDir, DATABASE_FILE), { readonly: true });
  try {
    const n = (sql: string) => db.query<{ n: number }, []>(sql).get()!.n;
    return {
      connector_docs: n("SELECT count(*) AS n FROM connector_docs"),
      connector_chunks: n("SELECT count(*) AS n FROM connector_chunks"),
      archive_chunks: n("SELECT count(*) AS n FROM archive_chunks"),
      oauth_clients: n("SELECT count(*) AS n FROM oauth_clients"),
      auth_tokens: n("SELECT count(*) AS n FROM auth_tokens"),
      webhooks: n("SELECT count(*) AS n FROM webhooks"),
      webhook_outbox: n("SELECT count(*) AS n FROM webhook_outbox"),
      conversations: n("SELECT count(*) AS n FROM conversations"),
      accounts: n("SELECT count(*) AS n FROM accounts"),
    };
  } finally {
    db.close();
  }
}

interface Report {
  copied: Array<{ table: string; rows: number }>;
  verified: {
    tables: Array<{ room: string; table: string; embedded: number; postgres: number; equal: boolean }>;
    samples: Array<{ room: string; opened: number; differ: string[] }>;
  };
  ok: boolean;
}

const migrate = (url: string, ...more: string[]) => cli(["migrate", "--to", url, ...more], env);

describe("a folder copied into an empty database", () => {
  let target: VectorDatabase;
  let report: Report;
  let folderBefore: string;
  beforeAll(async () => {
    target = await vectorDatabase();
    folderBefore = treeDigest(dataDir);
    const run = await migrate(target.url);
    expect(run.stderr).toContain("the archive: archive_chunks:");
    expect(run.code).toBe(0);
    report = JSON.parse(run.stdout) as Report;
  });
  afterAll(() => target.drop());

  test("the folder read is not changed: the same files, modes and bytes (no SQLite side file, no library copied into it)", () => {
    expect(treeDigest(dataDir)).toBe(folderBefore);
  });

  test("every table's rows are there, the same number on both sides; a sample of each room opens alike with the key", () => {
    expect(report.ok).toBe(true);
    const counted = Object.fromEntries(report.verified.tables.map((t) => [t.table, t]));
    for (const [table, n] of Object.entries(folderCounts())) {
      expect([table, n > 0]).toEqual([table, true]);
      expect([table, counted[table]!.embedded, counted[table]!.postgres]).toEqual([table, n, n]);
    }
    for (const t of report.verified.tables) expect([t.table, t.equal]).toEqual([t.table, true]);
    for (const s of report.verified.samples) {
      expect([s.room, s.differ]).toEqual([s.room, []]);
      expect([s.room, s.opened > 0]).toEqual([s.room, true]);
    }
    // Word places and vectors copied: some of each.
    expect(counted.connector_terms!.postgres).toBeGreaterThan(20);
    expect(counted.connector_vec!.postgres).toBe(counted.connector_chunks!.postgres);
    expect(counted.archive_vec!.postgres).toBeGreaterThan(0);
  });

  test("the index is found on PostgreSQL by its words and by meaning, as on the folder", async () => {
    const key = existingMasterKey({ dataDir })!;
    const sql = postgres(target.url, { max: 2, onnotice: () => {} });
    const folder = new Database(join(dataDir, DATABASE_FILE), { readonly: true });
    loadSqliteVec(folder, dataDir);
    try {
      const keys = new UserKeys(new PostgresUserKeyRecords(sql), key);
      await keys.ready(USER);
      const index = indexKeysFor(keys, USER, "docs", false);
      const rows = new PostgresIndexRows(sql);
      const asked = {
        parts: index.blinder.matchParts(["crane", "lease", "harbour"]),
        words: 10,
        nearest: 10,
        vector: index.rotation().apply(questionVector),
      };
      const found = await rows.candidates(USER, "docs", asked);
      const titles = (
        c: { found: Map<number, { lexical?: number; dense?: number }>; sealed: Map<number, Uint8Array> },
        kind: "lexical" | "dense",
      ) =>
        [...c.found]
          .filter(([, s]) => s[kind] !== undefined)
          .sort((a, b) => b[1][kind]! - a[1][kind]!)
          .map(([doc]) => (JSON.parse(index.open(c.sealed.get(doc)!, `doc/${doc}`)) as { title: string }).title);
      expect(titles(found, "lexical")[0]).toBe(SECRET_FILE);
      expect(titles(found, "dense")[0]).toBe(SECRET_FILE);
      // The folder's own index, with the folder's keys, ranks the same records first by either.
      const own = candidates({ db: folder, owner: `${USER}/docs` }, asked);
      expect(titles(own, "lexical")).toEqual(titles(found, "lexical"));
      expect(titles(own, "dense")[0]).toBe(titles(found, "dense")[0]);
    } finally {
      folder.close();
      await sql.end();
    }
  });

  test("a pg_dump of the target spells none of the folder's words, names or paths", () => {
    const out = spawnSync("pg_dump", ["--data-only", "--no-owner", target.url], { encoding: "utf8", maxBuffer: 256 << 20 });
    expect(out.status).toBe(0);
    for (const table of ["corpus_index_docs", "corpus_index_terms", "corpus_vectors", "corpus_archive_chunks", "corpus_connectors"])
      expect(out.stdout).toContain(`COPY public.${table} `);
    const dump = out.stdout.toLowerCase();
    for (const spelt of [...SECRET_WORDS, SECRET_FILE, SECRET_FOLDER, "marta olsen", "crane lease", "utrecht"])
      for (const form of [spelt, Buffer.from(spelt).toString("hex")]) expect([spelt, dump.includes(form)]).toEqual([spelt, false]);
  });

  test("backed up as the README says (pg_dump -Fc, then pg_restore into a new database): the restored rows open with the key file, which the dump never holds", async () => {
    const file = join(tempDir("corpus-pgdump-"), "corpus.pgdump");
    const dump = spawnSync("pg_dump", ["--format=custom", "--no-owner", "--no-privileges", "--no-comments", `--file=${file}`, target.url], {
      encoding: "utf8",
    });
    expect(dump.stderr).toBe("");
    expect(dump.status).toBe(0);
    const key = readFileSync(defaultMasterKeyFile(dataDir), "utf8").trim();
    const bytes = readFileSync(file);
    for (const form of [Buffer.from(key), Buffer.from(key, "base64")]) expect(bytes.includes(form)).toBe(false);
    // A new database made as for a first node (its role, CREATE EXTENSION vector by a superuser), restored into by that role.
    const restored = await vectorDatabase();
    try {
      const restore = spawnSync(
        "pg_restore",
        ["--no-owner", "--no-privileges", "--single-transaction", "--exit-on-error", `--dbname=${restored.url}`, file],
        { encoding: "utf8" },
      );
      expect(restore.stderr).toBe("");
      expect(restore.status).toBe(0);
      // The restored database, checked against the folder it came from: the same rows, opened alike with the key.
      const check = await migrate(restored.url);
      expect(check.code).toBe(0);
      const again = JSON.parse(check.stdout) as Report & { finished_before?: string };
      expect(again.finished_before).toBeString();
      expect(again.verified.tables).toEqual(report.verified.tables);
      for (const s of again.verified.samples) expect([s.room, s.differ, s.opened > 0]).toEqual([s.room, [], true]);
    } finally {
      await restored.drop();
    }
  });

  test("the same database again: already copied from this folder, verified again, nothing copied twice", async () => {
    const again = await migrate(target.url);
    expect(again.code).toBe(0);
    const second = JSON.parse(again.stdout) as Report & { finished_before?: string };
    expect(second.finished_before).toBeString();
    expect(second.copied).toEqual([]);
    expect(second.verified.tables).toEqual(report.verified.tables);
  });

  // Last: the node writes to the copy (its operator key, the token, the answer archived), so it no longer equals the folder.
  test("a node started on the copy (the folder's key and signing key, a data folder of its own) answers the question with the same citation", async () => {
    const own = join(tempDir("corpus-migrated-node-"), "data");
    mkdirSync(own, { recursive: true, mode: 0o700 });
    copyFileSync(join(dataDir, SIGNING_KEY_FILE), join(own, SIGNING_KEY_FILE));
    const node = await testApp({
      CORPUS_DATABASE_URL: target.url,
      CORPUS_MASTER_KEY_FILE: defaultMasterKeyFile(dataDir),
      CORPUS_DATA_DIR: own,
      CORPUS_CONNECTOR_ROOTS: roots,
    });
    try {
      const token = (await node.services.auth.issuer.issue(USER, ["corpus:search", "corpus:read"] as never)).token;
      const top = await topChunk(node.app, token);
      expect(top.content).toBe(folderAnswer.content);
      expect(top.content).toContain("Marta Olsen");
      expect(top.metadata.citation_url).toBe(folderAnswer.metadata.citation_url);
      expect(top.metadata.sha256).toBe(folderAnswer.metadata.sha256);
      // Nothing of the index was read again into the node's own folder: the answer came from PostgreSQL.
      expect(node.db.query<{ n: number }, []>("SELECT count(*) AS n FROM connector_docs").get()!.n).toBe(0);
    } finally {
      await node.services.close();
    }
  });
});

test("a database holding corpus rows is refused, nothing written to it", async () => {
  const target = await vectorDatabase();
  try {
    // The schema as a node makes it at start, and an account added through it.
    const sql = await openSharedDatabase(target.url, PG_MIGRATIONS);
    expect(await new PostgresAccountRecords(sql).insert("someone", "$argon2id$v=19$…", 1, false)).toBe(true);
    const refused = await migrate(target.url);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(`corpus: ${MIGRATE_MESSAGES.notEmpty(["corpus_accounts"])}`);
    expect((await sql`SELECT 1 FROM ${sql(PROGRESS_TABLE)}`).length).toBe(0);
    await sql.end();
  } finally {
    await target.drop();
  }
});

test("a folder whose server left writes in its WAL is refused, not read without them, and not changed", async () => {
  const folder = tempDir("corpus-migrate-wal-");
  for (const name of readdirSync(dataDir).filter((n) => n.startsWith(DATABASE_FILE) || n === SIGNING_KEY_FILE))
    copyFileSync(join(dataDir, name), join(folder, name));
  // A server that stopped without closing the database: a write left in the WAL.
  const writer = Bun.spawnSync([
    process.execPath,
    "-e",
    `const { Database } = require("bun:sqlite"); const db = new Database(${JSON.stringify(join(folder, DATABASE_FILE))});
     db.exec("PRAGMA wal_autocheckpoint = 0"); db.exec("INSERT INTO meta (key, value) VALUES ('left-in-wal', '1')");
     process.kill(process.pid, "SIGKILL");`,
  ]);
  expect(writer.signalCode).toBe("SIGKILL");
  expect(statSync(join(folder, `${DATABASE_FILE}-wal`)).size).toBeGreaterThan(0);
  const before = treeDigest(folder);
  const target = await vectorDatabase();
  try {
    const refused = await cli(["migrate", "--to", target.url], {
      ...env,
      CORPUS_DATA_DIR: folder,
      CORPUS_MASTER_KEY_FILE: defaultMasterKeyFile(dataDir),
    });
    expect(refused.stderr.trim()).toBe(`corpus: ${MIGRATE_MESSAGES.unclosedWal(folder, DATABASE_FILE)}`);
    expect(refused.code).toBe(1);
    expect(treeDigest(folder)).toBe(before);
  } finally {
    await target.drop();
  }
});

test("a copy killed with SIGKILL midway is finished by a second run, nothing doubled", async () => {
  const target = await vectorDatabase();
  const sql = postgres(target.url, { max: 1, onnotice: () => {} });
  try {
    // One row a transaction: many marks to stop between.
    const child = Bun.spawn([process.execPath, CLI, "migrate", "--to", target.url, "--batch", "1"], {
      env: baseEnv(env),
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    });
    // Killed once part of the index is copied (its records), before the copy ends.
    await until(
      "the first records copied",
      async () => {
        if (child.exitCode !== null) throw new Error(`the copy ended (${child.exitCode}) before it was killed`);
        const rows = await sql<{ n: string }[]>`SELECT count(*) AS n FROM corpus_index_docs`.catch(() => [{ n: "0" }]);
        return Number(rows[0]!.n) >= 1 || undefined;
      },
      120_000,
    );
    child.kill("SIGKILL");
    await child.exited;
    const progress = await sql<{ step: string; done: boolean }[]>`SELECT step, done FROM ${sql(PROGRESS_TABLE)}`;
    expect(progress.some((p) => p.step === "finished")).toBe(false);
    const resumed = await migrate(target.url);
    expect(resumed.code).toBe(0);
    const report = JSON.parse(resumed.stdout) as Report;
    expect(report.ok).toBe(true);
    // What the first run copied was not copied again: the second copied the rest only.
    const docs = report.verified.tables.find((t) => t.table === "connector_docs")!;
    expect(docs.postgres).toBe(folderCounts().connector_docs!);
    const again = report.copied.find((c) => c.table === "connector_docs")?.rows ?? 0;
    expect(again).toBeLessThan(docs.postgres);
    expect(report.copied.find((c) => c.table === "crypto_user_keys")).toBeUndefined();
  } finally {
    await sql.end();
    await target.drop();
  }
});
