// `corpus user add|passwd|remove|list` (D27) in a child process against a real data folder:
// passwords come from standard input, are kept as argon2id hashes, and a removed user or a
// changed password ends what was granted before.
import { Database } from "bun:sqlite";
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { tempDir } from "../helpers";

setDefaultTimeout(60_000);

function cli(args: string[], dataDir: string, stdin = "") {
  const proc = Bun.spawnSync([process.execPath, join(import.meta.dir, "../../src/cli.ts"), ...args, "--data-dir", dataDir], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" },
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
});
