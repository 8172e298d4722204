// `corpus user add|passwd|remove|list` (D27) in a child process against a real data folder:
// passwords come from standard input, are kept as argon2id hashes, and a removed user or a
// changed password ends what was granted before.
import { Database } from "bun:sqlite";
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { open } from "../../src/crypto/aead";
import { bearer, connectorsSettled, postJson, req, TEST_MIN_FREE_BYTES, tempDir, testApp, tokenFor } from "../helpers";
import { SHARED_DATA } from "../support/servers";
import { until } from "../support/wait";

/** The data key of `user` as the data folder keeps it (unwrapped with the master key). */
function keyOf(dir: string, masterKey: string, user: string): Buffer {
  const db = new Database(join(dir, "corpus.db"), { readonly: true });
  try {
    const row = db.query<{ wrapped_key: Uint8Array }, [string]>("SELECT wrapped_key FROM crypto_user_keys WHERE user_id = ?").get(user)!;
    return open(Buffer.from(masterKey, "base64"), row.wrapped_key, `corpus/user-key/${user}`);
  } finally {
    db.close();
  }
}

setDefaultTimeout(60_000);

function cli(args: string[], dataDir: string, stdin = "", env: Record<string, string> = {}) {
  const proc = Bun.spawnSync([process.execPath, join(import.meta.dir, "../../src/cli.ts"), ...args, "--data-dir", dataDir], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...env },
    stdin: Buffer.from(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: proc.exitCode, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
}

describe("corpus user", () => {
  test("add, list, passwd, remove; the password never stored as given", async () => {
    const dir = join(tempDir("corpus-users-"), "data");
    expect(cli(["user", "add", "--user", "alice"], dir, "alice's long password\n").code).toBe(0);
    expect(cli(["user", "add", "--user", "bob"], dir, "bob's long password\n").code).toBe(0);
    const list = cli(["user", "list"], dir);
    expect(list.stdout).toContain("alice");
    expect(list.stdout).toContain("bob");
    const db = new Database(join(dir, "corpus.db"), { readonly: true });
    const row = db.query<{ password_hash: string }, []>("SELECT password_hash FROM accounts WHERE id = 'alice'").get()!;
    db.close();
    expect(row.password_hash).toStartWith("$argon2id$");
    expect(row.password_hash).not.toContain("alice's long password");
    expect(await Bun.password.verify("alice's long password", row.password_hash)).toBe(true);

    expect(cli(["user", "passwd", "--user", "alice"], dir, "a brand new password\n").code).toBe(0);
    expect(cli(["user", "remove", "--user", "bob"], dir).code).toBe(0);
    expect(cli(["user", "list"], dir).stdout).not.toContain("bob");
  });

  test("user add --operator gives the account the operator's role (D35); a user is none; list shows it; a removed operator is none", async () => {
    const dir = join(tempDir("corpus-users-"), "data");
    const added = cli(["user", "add", "--user", "olga", "--operator"], dir, "olga's long password\n");
    expect(added).toEqual({ code: 0, stdout: "added operator olga\n", stderr: "" });
    expect(cli(["user", "add", "--user", "ulrich"], dir, "ulrich's long password\n").stdout).toBe("added user ulrich\n");
    const lines = cli(["user", "list"], dir).stdout.trim().split("\n");
    expect(lines.find((l) => l.startsWith("olga\t"))).toEndWith("\toperator");
    expect(lines.find((l) => l.startsWith("ulrich\t"))).not.toContain("operator");
    expect(cli(["user", "add", "--user", "x", "--operator=yes"], dir, "a long enough password\n").stderr).toContain(
      "--operator takes no value",
    );
    const { Accounts, SqliteAccountRecords } = await import("../../src/accounts/store");
    const db = new Database(join(dir, "corpus.db"));
    try {
      const accounts = new Accounts(new SqliteAccountRecords(db));
      expect(accounts.isOperator("olga")).toBe(true);
      expect(accounts.isOperator("ulrich")).toBe(false);
      expect(accounts.isOperator("nobody")).toBe(false);
      expect(cli(["user", "remove", "--user", "olga"], dir).code).toBe(0);
      expect(accounts.isOperator("olga")).toBe(false);
    } finally {
      db.close();
    }
  });

  test("refusals: short password, duplicate, reserved or unsafe ids, no password, unknown user", () => {
    const dir = join(tempDir("corpus-users-"), "data");
    const short = cli(["user", "add", "--user", "carol"], dir, "short\n");
    expect(short.code).toBe(2);
    expect(short.stderr).toContain("at least 10 characters");
    expect(cli(["user", "add", "--user", "carol"], dir, "carol's long password\n").code).toBe(0);
    expect(cli(["user", "add", "--user", "carol"], dir, "carol's long password\n").stderr).toContain("already exists");
    for (const id of ["local", "../etc", "*"]) expect(cli(["user", "add", "--user", id], dir, "a long enough password\n").code).toBe(2);
    expect(cli(["user", "add", "--user", "dave"], dir, "").stderr).toContain("no password");
    expect(cli(["user", "remove", "--user", "nobody"], dir).stderr).toContain("no user nobody");
    expect(cli(["user", "add"], dir).code).toBe(2);
  });

  test("a command that fails leaves nothing behind: no data folder, no master key; revoke, list, passwd and remove never make a folder", () => {
    const root = tempDir("corpus-users-nothing-");
    const dir = join(root, "new", "data");
    const unreachable = { CORPUS_DATABASE_URL: "postgres://corpus:s3cret-pw@127.0.0.1:1/corpus" };
    const commands = [
      ["token", "create", "--user", "alice", "--scopes", "corpus:search"],
      ["token", "revoke", "--user", "alice"],
      ["user", "add", "--user", "alice"],
      ["user", "passwd", "--user", "alice"],
      ["user", "remove", "--user", "alice"],
      ["user", "list"],
    ];
    for (const args of commands) {
      const r = cli(args, dir, "alice's long password\n", unreachable);
      expect(r.code).toBe(1);
      expect(r.stderr).toStartWith("corpus: ");
      expect(r.stderr).not.toContain("s3cret-pw");
      expect(readdirSync(root)).toEqual([]);
    }
    // Nothing to read in a folder that is not there: refused, not made.
    for (const args of commands.slice(1).filter((a) => a[1] !== "add")) {
      const r = cli(args, dir, "alice's long password\n");
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`no data folder at ${dir}`);
      expect(readdirSync(root)).toEqual([]);
    }
    // An addition refused for its value makes nothing either.
    expect(cli(["token", "create", "--user", "alice", "--scopes", "corpus:everything"], dir).code).toBe(2);
    expect(cli(["user", "add", "--user", "alice"], dir, "").stderr).toContain("no password");
    expect(readdirSync(root)).toEqual([]);
    // An existing (empty) folder: the shared database is reached before anything is written in it.
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    for (const args of commands) {
      const r = cli(args, dir, "alice's long password\n", unreachable);
      expect(r.stderr).toContain("the PostgreSQL of CORPUS_DATABASE_URL cannot be reached: connect ECONNREFUSED");
      expect(readdirSync(dir)).toEqual([]);
      expect(readdirSync(join(root, "new"))).toEqual(["data"]);
    }
    // What a first step before `corpus serve` does still works: a token or a person made with the folder.
    rmSync(join(root, "new"), { recursive: true });
    expect(cli(["user", "add", "--user", "alice"], dir, "alice's long password\n").code).toBe(0);
    expect(cli(["user", "list"], dir).stdout).toContain("alice\tcreated ");
  });

  test("attack: an existing empty data folder (the package's, a container's volume) is a folder without data: a failed first command leaves nothing in it, and revoke, list, passwd and remove make no database there", () => {
    const root = tempDir("corpus-users-empty-");
    const dir = join(root, "data");
    mkdirSync(dir, { mode: 0o700 });
    // A first step that fails (no password given) makes no database, signing key or master key: the
    // next try with the install's own master key would find them sealed under another.
    expect(cli(["user", "add", "--user", "alice"], dir, "").stderr).toContain("no password");
    expect(readdirSync(dir)).toEqual([]);
    expect(readdirSync(root)).toEqual(["data"]);
    for (const args of [
      ["token", "revoke", "--user", "alice"],
      ["user", "passwd", "--user", "alice"],
      ["user", "remove", "--user", "alice"],
      ["user", "list"],
    ]) {
      const r = cli(args, dir, "alice's long password\n");
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`no corpus database in ${dir}`);
      expect(readdirSync(dir)).toEqual([]);
      expect(readdirSync(root)).toEqual(["data"]);
    }
    // The first step itself, done right, works in it.
    const key = join(root, "master.key");
    writeFileSync(key, randomBytes(32).toString("base64"), { mode: 0o600 });
    expect(cli(["user", "add", "--user", "alice"], dir, "alice's long password\n", { CORPUS_MASTER_KEY_FILE: key }).code).toBe(0);
    expect(cli(["user", "list"], dir, "", { CORPUS_MASTER_KEY_FILE: key }).stdout).toContain("alice\tcreated ");
  });
});

describe("corpus user remove and a name added again (D13, D3)", () => {
  const ALL = ["corpus:search", "corpus:read", "connectors:read", "connectors:write"];

  test("remove refuses while data is kept and says what stays; --delete-data deletes it all; alice added again sees nothing of the earlier alice", async () => {
    const root = tempDir("corpus-users-data-");
    mkdirSync(join(root, "docs"));
    copyFileSync(join(SHARED_DATA, "invoices", "Orlen.txt"), join(root, "docs", "Orlen.txt"));
    mkdirSync(join(root, "other"));
    copyFileSync(join(SHARED_DATA, "invoices", "AmazonWebServices.pdf"), join(root, "other", "AmazonWebServices.pdf"));
    const env = { CORPUS_MASTER_KEY: randomBytes(32).toString("base64"), CORPUS_MIN_FREE_BYTES: TEST_MIN_FREE_BYTES };
    const t = await testApp({ ...env, CORPUS_CONNECTOR_ROOTS: root });
    const dir = t.config.CORPUS_DATA_DIR;
    const run = (args: string[], stdin = "") => cli(args, dir, stdin, env);
    try {
      expect(run(["user", "add", "--user", "alice"], "alice's long password\n").code).toBe(0);
      const first = await tokenFor(t.services, "alice", ALL);
      const added = await t.app.handle(
        postJson("/v1/connectors", { id: "docs", kind: "files", config: { path: join(root, "docs") } }, bearer(first)),
      );
      expect(added.status).toBe(200);
      await connectorsSettled(t.services, "alice");
      const asked = await t.app.handle(postJson("/v1/query", { query: "Orlen fuel invoice" }, bearer(first)));
      expect(((await asked.json()) as { results: unknown[] }).results.length).toBeGreaterThan(0);
      const before = await t.app.handle(postJson("/v1/deep_search", { query: "Orlen fuel invoice" }, bearer(first)));
      expect(((await before.json()) as { archive_results: unknown[] }).archive_results.length).toBeGreaterThan(0);

      // Without --delete-data: refused, nothing changed, the message names what stays.
      const refused = run(["user", "remove", "--user", "alice"]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("user alice still has data");
      expect(refused.stderr).toContain("connectors 1");
      expect(refused.stderr).toContain("archive");
      expect(refused.stderr).toContain("--delete-data");
      expect(run(["user", "list"]).stdout).toContain("alice");
      expect((await t.app.handle(req("/v1/connectors", { headers: bearer(first) }))).status).toBe(200);

      const removed = run(["user", "remove", "--user", "alice", "--delete-data"]);
      expect(removed.stderr).toBe("");
      expect(removed.code).toBe(0);
      expect(removed.stdout).toContain("removed user alice");
      expect(removed.stdout).toContain("deleted their data");
      expect(run(["user", "list"]).stdout).not.toContain("alice");
      // The server reads a revocation another process made within its refresh (auth/store.ts).
      await until("the earlier token refused", async () =>
        (await t.app.handle(req("/v1/connectors", { headers: bearer(first) }))).status === 401 ? true : undefined,
      );

      // The name added again is a new person: none of the earlier alice's connectors, archive or answers.
      expect(run(["user", "add", "--user", "alice"], "the new alice's password\n").code).toBe(0);
      // A token signed after the deletion works at once, in its second too (auth/store.ts revokedByStamp).
      const again = await tokenFor(t.services, "alice", ALL);
      expect((await t.app.handle(req("/v1/connectors", { headers: bearer(again) }))).status).toBe(200);
      const listed = (await (await t.app.handle(req("/v1/connectors", { headers: bearer(again) }))).json()) as {
        connectors: Array<{ id: string }>;
      };
      expect(listed.connectors.map((c) => c.id)).toEqual([]);
      const archived = await t.app.handle(postJson("/v1/deep_search", { query: "Orlen fuel invoice" }, bearer(again)));
      expect(archived.status).toBe(200);
      expect(((await archived.json()) as { archive_results: unknown[] }).archive_results).toEqual([]);
      const unasked = await t.app.handle(postJson("/v1/query", { query: "Orlen fuel invoice" }, bearer(again)));
      expect(((await unasked.json()) as { results: unknown[] }).results).toEqual([]);
      // The same connector id, on another folder: read from that folder, under the new alice's key
      // (the server that served the earlier alice keeps nothing of hers running or in memory).
      const readd = await t.app.handle(
        postJson("/v1/connectors", { id: "docs", kind: "files", config: { path: join(root, "other") } }, bearer(again)),
      );
      expect(readd.status).toBe(200);
      await connectorsSettled(t.services, "alice");
      const own = (await (await t.app.handle(postJson("/v1/query", { query: "Amazon Web Services invoice" }, bearer(again)))).json()) as {
        results: Array<{ title: string }>;
      };
      expect(JSON.stringify(own.results)).toContain("AmazonWebServices.pdf");
      const old = (await (await t.app.handle(postJson("/v1/query", { query: "Orlen fuel invoice" }, bearer(again)))).json()) as {
        results: Array<{ title: string }>;
      };
      expect(JSON.stringify(old.results)).not.toContain("Orlen.txt");
      expect(t.services.userKeys.keyFor("alice", false).equals(keyOf(dir, env.CORPUS_MASTER_KEY, "alice"))).toBe(true);
    } finally {
      await t.services.close();
    }
  });

  test("a name whose data outlived its account (a token-only user, an earlier removal) is not given to a new account", async () => {
    const root = tempDir("corpus-users-data-");
    mkdirSync(join(root, "docs"));
    copyFileSync(join(SHARED_DATA, "invoices", "Orlen.txt"), join(root, "docs", "Orlen.txt"));
    const env = { CORPUS_MASTER_KEY: randomBytes(32).toString("base64"), CORPUS_MIN_FREE_BYTES: TEST_MIN_FREE_BYTES };
    const t = await testApp({ ...env, CORPUS_CONNECTOR_ROOTS: root });
    const dir = t.config.CORPUS_DATA_DIR;
    const run = (args: string[], stdin = "") => cli(args, dir, stdin, env);
    try {
      const token = await tokenFor(t.services, "bob", ALL);
      const added = await t.app.handle(
        postJson("/v1/connectors", { id: "docs", kind: "files", config: { path: join(root, "docs") } }, bearer(token)),
      );
      expect(added.status).toBe(200);
      const refused = run(["user", "add", "--user", "bob"], "bob's long password\n");
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("data of an earlier user bob is still kept");
      expect(run(["user", "list"]).stdout).not.toContain("bob");
      // No account, but data: --delete-data deletes it, and the name is free.
      expect(run(["user", "remove", "--user", "bob"]).stderr).toContain("no user bob");
      const deleted = run(["user", "remove", "--user", "bob", "--delete-data"]);
      expect(deleted.code).toBe(0);
      expect(deleted.stdout).toContain("no account bob");
      expect(run(["user", "add", "--user", "bob"], "bob's long password\n").code).toBe(0);
      const again = await tokenFor(t.services, "bob", ALL);
      expect((await t.app.handle(req("/v1/connectors", { headers: bearer(again) }))).status).toBe(200);
      const listed = (await (await t.app.handle(req("/v1/connectors", { headers: bearer(again) }))).json()) as {
        connectors: Array<{ id: string }>;
      };
      expect(listed.connectors).toEqual([]);
    } finally {
      await t.services.close();
    }
  });
});
