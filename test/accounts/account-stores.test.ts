// One suite, two stores (D33): password accounts, operators and upstream (OIDC) links kept by the
// embedded database and by the shared PostgreSQL (a real server on loopback), through the one
// Accounts that hashes and checks. Then, PostgreSQL alone: two nodes (Accounts with connections
// of their own to one database): an account added through A signs in through B; removed on A, it
// is refused on B at once; an operator made on A is one on B; and `corpus user` with
// CORPUS_DATABASE_URL writes the shared database.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { userCommand } from "../../src/accounts/cli";
import { AccountError, Accounts, accountMigrations, SqliteAccountRecords } from "../../src/accounts/store";
import { ACCOUNTS_TABLE, PostgresAccountRecords } from "../../src/accounts/store-postgres";
import { migrate } from "../../src/store/migrations";
import { testConfig } from "../helpers";
import { type SharedDatabase, sharedDatabase, storeSuite } from "../support/shared-database";

// Each password is an argon2id hash (19 MiB, ~30 ms quiet): slower on a loaded machine.
setDefaultTimeout(30_000);

const T0 = Date.UTC(2026, 10, 28, 10, 0, 0);
const ISSUER = "https://id.example.com";

interface Store {
  accounts: Accounts;
  /** Erases and counts `user`'s upstream link as a deletion does (in the shared store, inside one transaction). */
  erase(user: string): Promise<{ forgotten: boolean; left: number }>;
  close(): Promise<void>;
}

function suite(name: string, open: () => Promise<Store>) {
  storeSuite(name, open, (store) => {
    test("a password account is added, verified, listed, its password changed; refusals say why", async () => {
      const a = store().accounts;
      await a.add("ann", "ann's long password");
      expect(await a.exists("ann")).toBe(true);
      expect(await a.isExternal("ann")).toBe(false);
      expect(await a.verify("ann", "ann's long password")).toBe(true);
      expect(await a.verify("ann", "not ann's password")).toBe(false);
      expect(await a.verify("nobody", "ann's long password")).toBe(false);
      const [ann] = (await a.list()).filter((x) => x.id === "ann");
      expect(ann).toEqual({ id: "ann", createdAt: T0 / 1000, passwordChangedAt: T0 / 1000 });
      await expect(a.add("ann", "another long password")).rejects.toThrow("user ann already exists");
      await expect(a.add("bea", "short")).rejects.toThrow("at least 10 characters");
      await expect(a.add("../etc", "a long enough password")).rejects.toBeInstanceOf(AccountError);
      await a.setPassword("ann", "a brand new password");
      expect(await a.verify("ann", "ann's long password")).toBe(false);
      expect(await a.verify("ann", "a brand new password")).toBe(true);
      await expect(a.setPassword("nobody", "a long enough password")).rejects.toThrow("no user nobody");
    });

    test("an operator is one while their account stands (D35); a user is none", async () => {
      const a = store().accounts;
      await a.add("olga", "olga's long password", { operator: true });
      await a.add("uli", "uli's long password");
      expect(await a.isOperator("olga")).toBe(true);
      expect(await a.isOperator("uli")).toBe(false);
      expect(await a.isOperator("nobody")).toBe(false);
      expect((await a.list()).find((x) => x.id === "olga")?.operator).toBe(true);
      expect((await a.list()).find((x) => x.id === "uli")?.operator).toBeUndefined();
      expect(await a.remove("olga")).toBe(true);
      expect(await a.isOperator("olga")).toBe(false);
      expect(await a.remove("olga")).toBe(false);
    });

    test("upstream people: linked, listed, not a password account, removed", async () => {
      const accounts = store().accounts;
      await accounts.add("bob", "bob's long password");
      await accounts.linkExternal("oidc-12345678-alice", ISSUER, "alice", "Alice A.");
      // A second sign-in updates the name, the same person.
      await accounts.linkExternal("oidc-12345678-alice", ISSUER, "alice", "Alice");
      expect(await accounts.exists("oidc-12345678-alice")).toBe(true);
      expect(await accounts.isExternal("oidc-12345678-alice")).toBe(true);
      expect(await accounts.isExternal("bob")).toBe(false);
      const listed = (await accounts.list()).filter((a) => a.id === "bob" || a.id.startsWith("oidc-"));
      expect(listed.map((a) => a.id)).toEqual(["bob", "oidc-12345678-alice"]);
      expect(listed[1]!.upstream).toMatchObject({ issuer: ISSUER, subject: "alice", name: "Alice" });
      expect(listed[1]!.passwordChangedAt).toBeUndefined();
      // No password here: none can be set, none verifies, and the id cannot be taken by a password account.
      await expect(accounts.setPassword("oidc-12345678-alice", "a new long password")).rejects.toBeInstanceOf(AccountError);
      expect(await accounts.verify("oidc-12345678-alice", "anything at all")).toBe(false);
      await expect(accounts.add("oidc-12345678-alice", "a long password!")).rejects.toThrow("already exists");
      // A password account's id, another subject, or an unsafe id is never linked.
      await expect(Promise.resolve().then(() => accounts.linkExternal("bob", ISSUER, "bob", null))).rejects.toThrow("password account");
      await expect(Promise.resolve().then(() => accounts.linkExternal("oidc-12345678-alice", ISSUER, "mallory", null))).rejects.toThrow(
        "another",
      );
      await expect(Promise.resolve().then(() => accounts.linkExternal("../etc", ISSUER, "x", null))).rejects.toBeInstanceOf(AccountError);
      expect((await accounts.list()).find((a) => a.id === "oidc-12345678-alice")?.upstream?.subject).toBe("alice");
      expect(await accounts.remove("oidc-12345678-alice")).toBe(true);
      expect(await accounts.exists("oidc-12345678-alice")).toBe(false);
      expect(await accounts.exists("bob")).toBe(true);
    });

    test("a deletion erases the upstream link and counts none left; a password account stays", async () => {
      const accounts = store().accounts;
      await accounts.linkExternal("oidc-12345678-erin", ISSUER, "erin", "Erin");
      await accounts.add("dana", "dana's long password");
      expect(await accounts.externalLinks.rowsOf("oidc-12345678-erin")).toBe(1);
      expect(await store().erase("oidc-12345678-erin")).toEqual({ forgotten: true, left: 0 });
      expect(await accounts.exists("oidc-12345678-erin")).toBe(false);
      expect(await store().erase("dana")).toEqual({ forgotten: false, left: 0 });
      expect(await accounts.exists("dana")).toBe(true);
    });
  });
}

suite("embedded (SQLite)", async () => {
  const db = new Database(":memory:");
  migrate(db, accountMigrations);
  const accounts = new Accounts(new SqliteAccountRecords(db), () => T0);
  return {
    accounts,
    erase: async (user) => ({ forgotten: await accounts.forgetExternal(user), left: await accounts.externalLinks.rowsOf(user) }),
    close: async () => db.close(),
  };
});

let shared: SharedDatabase;
suite("shared (PostgreSQL)", async () => {
  shared = await sharedDatabase();
  const accounts = new Accounts(new PostgresAccountRecords(shared.client()), () => T0);
  return {
    accounts,
    // Inside a transaction of the shared database, as users/deletion.ts runs it.
    erase: (user) =>
      shared.sql.begin(async (tx) => ({
        forgotten: await accounts.within(tx).forgetExternal(user),
        left: await accounts.within(tx).externalLinks.rowsOf(user),
      })),
    close: () => shared.drop(),
  };
});

describe("PostgreSQL alone: two nodes on one database", () => {
  let db: SharedDatabase;
  let a: Accounts;
  let b: Accounts;
  beforeAll(async () => {
    db = await sharedDatabase();
    a = new Accounts(new PostgresAccountRecords(db.client()));
    b = new Accounts(new PostgresAccountRecords(db.client()));
  });
  afterAll(() => db.drop());

  test("an account added through A signs in through B; removed on A, it is refused on B at once", async () => {
    await a.add("ivy", "ivy's long password");
    expect(await b.exists("ivy")).toBe(true);
    expect(await b.verify("ivy", "ivy's long password")).toBe(true);
    await b.setPassword("ivy", "ivy's second password");
    expect(await a.verify("ivy", "ivy's long password")).toBe(false);
    expect(await a.verify("ivy", "ivy's second password")).toBe(true);
    expect(await a.remove("ivy")).toBe(true);
    expect(await b.exists("ivy")).toBe(false);
    expect(await b.verify("ivy", "ivy's second password")).toBe(false);
    // What PostgreSQL holds is the argon2id hash, never the password.
    await b.add("ivy", "ivy's third password");
    const [row] = await db.sql<{ password_hash: string }[]>`SELECT password_hash FROM ${db.sql(ACCOUNTS_TABLE)} WHERE id = 'ivy'`;
    expect(row!.password_hash).toStartWith("$argon2id$");
    expect(row!.password_hash).not.toContain("third");
  });

  test("an operator made on A is one on B; removed on B, none on A; one id taken on two nodes at once is added once", async () => {
    await a.add("olga", "olga's long password", { operator: true });
    expect(await b.isOperator("olga")).toBe(true);
    expect(await b.remove("olga")).toBe(true);
    expect(await a.isOperator("olga")).toBe(false);
    const both = await Promise.allSettled([a.add("kim", "kim's long password"), b.add("kim", "kim's other password")]);
    expect(both.filter((r) => r.status === "fulfilled").length).toBe(1);
    const refused = both.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(AccountError);
    expect(refused.reason.message).toBe("user kim already exists");
  });

  test("an upstream person linked through A is one on B and cannot become B's password account", async () => {
    await a.linkExternal("oidc-12345678-max", ISSUER, "max", "Max");
    expect(await b.isExternal("oidc-12345678-max")).toBe(true);
    await expect(b.add("oidc-12345678-max", "a long password!")).rejects.toThrow("already exists");
    await b.add("lou", "lou's long password");
    await expect(Promise.resolve(a.linkExternal("lou", ISSUER, "lou", null))).rejects.toThrow("password account");
  });

  test("`corpus user add/list/remove` with CORPUS_DATABASE_URL write the shared database: a node sees it at once", async () => {
    const config = testConfig({ CORPUS_DATABASE_URL: db.database.url });
    const password = async () => "pat's long password";
    expect(await userCommand("user add", { user: "pat", operator: "true" }, config, password)).toBe("added operator pat");
    expect(await b.verify("pat", "pat's long password")).toBe(true);
    expect(await b.isOperator("pat")).toBe(true);
    expect(await userCommand("user list", {}, config)).toContain("pat\tcreated ");
    expect(await userCommand("user remove", { user: "pat" }, config)).toStartWith("removed user pat");
    expect(await b.exists("pat")).toBe(false);
    // The embedded database of the data folder was never written.
    const local = new Database(`${config.CORPUS_DATA_DIR}/corpus.db`, { readonly: true });
    try {
      expect(local.query("SELECT count(*) AS n FROM accounts").get()).toEqual({ n: 0 });
    } finally {
      local.close();
    }
  });
});
