// Nothing of a deleted user left in the shared PostgreSQL (D33, D25, D13): two users fill every
// shared room a deletion erases, through the rooms' real stores and the sealing above them (the
// tokens, OAuth, MCP sessions, accounts, conversations, archive, webhooks, connectors and data
// keys rooms). A pg_dump spells none of their words, names or paths, while every room's tables
// hold rows naming them (counted per table, by every form of their identifier: the id itself and
// the keyed tag the tokens room keeps). The user deleted, no table holds a row of theirs but the
// tokens room's "not before" stamp (their keyed tag: what refuses their old tokens on every node);
// the other user's rows are all there. Then the dead rows: PostgreSQL keeps a deleted row's bytes
// in its table's file until the page is reused (a plain VACUUM does not overwrite them); the
// destroyed data key's (which the master key opens, and which opens all the rest) are rewritten
// out of every file of the database (PostgresUserKeyRecords.compact), by the deletion itself, or,
// while a transaction begun before it still sees the row, by the sweep after it ends. Read on
// disk, in the test PostgreSQL's data directory, before and after.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Accounts } from "../../src/accounts/store";
import { PostgresAccountRecords } from "../../src/accounts/store-postgres";
import { PostgresArchiveRows } from "../../src/archive/rows-postgres";
import { Archive } from "../../src/archive/store";
import { AuthService } from "../../src/auth/service";
import { UserTags } from "../../src/auth/store";
import { ConnectorRegistry } from "../../src/connectors/registry";
import { ConnectorRows } from "../../src/connectors/rows";
import { PostgresConnectorRecords } from "../../src/connectors/rows-postgres";
import { Conversations } from "../../src/conversations/store";
import { PostgresConversationRecords } from "../../src/conversations/store-postgres";
import { loadMasterKey } from "../../src/crypto/master-key";
import { UserKeys } from "../../src/crypto/user-keys";
import { PostgresUserKeyRecords, USER_KEYS_TABLE } from "../../src/crypto/user-keys-postgres";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { IdempotencyStore } from "../../src/limits/idempotency";
import { PostgresIdempotencyRecords } from "../../src/limits/idempotency-postgres";
import { limitsFrom } from "../../src/limits/rate-limit";
import { PostgresRateLimiter } from "../../src/limits/rate-limit-postgres";
import { PostgresMcpSessions } from "../../src/mcp/sessions-postgres";
import { OAuthServer } from "../../src/oauth/service";
import { PostgresOAuthStore } from "../../src/oauth/store-postgres";
import { deleteUser } from "../../src/users/deletion";
import { PostgresWebhookStore } from "../../src/webhooks/store-postgres";
import { testApp } from "../helpers";
import { type SharedDatabase, sharedDatabase } from "../support/shared-database";

setDefaultTimeout(120_000);

/**
 * The deleted user and the one kept: the words, names and paths of their content, none of which
 * PostgreSQL may spell; and what the rooms keep in plain as the embedded store does (the
 * display name of a sign-in account, a webhook's URL, a connector's label), gone with the user.
 */
const USERS = {
  ursula7: {
    words: ["wisteria", "quartzite"],
    name: "Ursula Kowalczyk",
    path: "/srv/papers-of-marrowfield",
    plain: { displayName: "Ulla K.", hook: "https://hooks.example.com/ulla", label: "Ulla's papers" },
  },
  viktor3: {
    words: ["tamarind", "obsidianite"],
    name: "Viktor Ashgrove",
    path: "/srv/ledgers-of-pellucid",
    plain: { displayName: "Vik A.", hook: "https://hooks.example.com/vik", label: "Vik's ledgers" },
  },
} as const;
type User = keyof typeof USERS;
const GONE: User = "ursula7";
const KEPT: User = "viktor3";

describe("a user deleted from the shared PostgreSQL leaves nothing of theirs in it", () => {
  let db: SharedDatabase;
  let t: Awaited<ReturnType<typeof testApp>>;
  let masterKey: Buffer;
  let auth: AuthService;
  let keys: UserKeys;
  let accounts: Accounts;
  let archive: Archive;
  let connectors: ConnectorRegistry;
  let oauthStore: PostgresOAuthStore;
  let mcpSessions: PostgresMcpSessions;
  let conversations: Conversations;
  let webhooks: PostgresWebhookStore;
  let oauth: OAuthServer;
  let limiter: PostgresRateLimiter;
  let idempotency: IdempotencyStore;
  beforeAll(async () => {
    db = await sharedDatabase();
    t = await testApp();
    masterKey = loadMasterKey({ dataDir: t.config.CORPUS_DATA_DIR }).key;
    auth = await AuthService.create(t.config, t.db, masterKey, Date.now, db.sql);
    keys = new UserKeys(new PostgresUserKeyRecords(db.sql), masterKey);
    accounts = new Accounts(new PostgresAccountRecords(db.sql));
    archive = new Archive(new PostgresArchiveRows(db.sql), keys, t.services.embeddings);
    connectors = new ConnectorRegistry({ db: t.db, keys, config: t.config, log: t.log, records: new PostgresConnectorRecords(db.sql) });
    oauthStore = new PostgresOAuthStore(db.sql);
    oauth = new OAuthServer(t.config, auth, accounts, oauthStore);
    mcpSessions = new PostgresMcpSessions(db.sql);
    conversations = new Conversations(new PostgresConversationRecords(db.sql), keys);
    webhooks = new PostgresWebhookStore(db.sql, keys, masterKey);
    // The limits' rooms as a node on the shared database keeps them (services.ts): erased in the deletion's transaction too.
    limiter = new PostgresRateLimiter(db.sql, limitsFrom(t.config), Date.now, t.services.guard);
    idempotency = new IdempotencyStore(
      new PostgresIdempotencyRecords(db.sql),
      keys,
      (t.config.CORPUS_REQUEST_TIMEOUT + 30) * 1000,
      Date.now,
      t.services.guard,
    );
  });
  afterAll(async () => {
    await connectors.close();
    await t.services.close();
    await db.drop();
  });

  /** Every shared room a deletion erases, filled for `user` through its store (sealed where the store seals). */
  async function fill(user: User): Promise<void> {
    const { words, name, path, plain } = USERS[user];
    await auth.issuer.issue(user, ["corpus:search"]);
    await keys.ready(user, { create: true });
    await accounts.linkExternal(user, "https://id.example.com", `${user}-subject`, plain.displayName);
    await oauthStore.putSession(`session-of-${user}`, user, "csrf", Math.floor(Date.now() / 1000) + 3600);
    await mcpSessions.open(user, "2025-06-18");
    await conversations.append(user, undefined, { question: `where is the ${words[0]}?`, answer: `${name} keeps it in ${path}` });
    await archive.prepareRotation(user, true);
    await archive.store(
      user,
      `qry_${user}`,
      `the ${words[1]} contract`,
      [
        {
          chunk: {
            chunk_id: `c-${user}`,
            connector: "docs",
            title: `${words[0]} and ${words[1]}`,
            content: `signed by ${name}`,
            source_url: `file://${path}/contract.pdf`,
            type: "file",
            path: `${path}/contract.pdf`,
            date: null,
          },
          embedText: words.join(" "),
        },
      ],
      [new Float32Array(EMBEDDING_DIM).fill(0.05)],
    );
    expect(await webhooks.add(user, plain.hook, ["user.deleted"], 5)).toHaveProperty("id");
    const rows = new ConnectorRows(connectors.records, keys);
    await rows.insert({ owner: user, id: "docs", kind: "files", label: plain.label, config: { path }, created_at: "2026-01-01" }, 5);
    await rows.setGrant(user, "docs", { refresh_token: `refresh-${words[0]}` });
  }

  const dump = () => {
    const out = spawnSync("pg_dump", ["--data-only", "--no-owner", db.database.url], { encoding: "utf8", maxBuffer: 256 << 20 });
    expect(out.status).toBe(0);
    return out.stdout;
  };

  /** What a user's content is spelled as: the words, the name, the path, each also as hex (a bytea dumped). */
  const plaintext = (user: User) =>
    [...USERS[user].words, USERS[user].name, USERS[user].path].flatMap((s) => [s, Buffer.from(s).toString("hex")]);
  /** The forms of a user's identifier a row can hold: the id, and the keyed tag of the tokens room's stamps. */
  const forms = (user: User) => [user, new UserTags(masterKey).of(user)];

  /** Per table of the database: the rows naming `user` in any of its forms (in any column, as PostgreSQL prints the row). */
  async function rowsNaming(user: User): Promise<Record<string, number>> {
    const tables = await db.sql<{ name: string }[]>`
      SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`;
    const counts: Record<string, number> = {};
    for (const { name } of tables) {
      const [row] = await db.database.admin<{ n: number }[]>`
        SELECT count(*)::integer AS n FROM ${db.sql(name)} AS r
        WHERE ${db.sql.unsafe("r::text")} LIKE ANY(${forms(user).map((f) => `%${f}%`)}::text[])`;
      if (row!.n > 0) counts[name] = row!.n;
    }
    return counts;
  }

  /** The files of the database's tables, indexes and TOAST on disk (the test PostgreSQL's data directory), after a checkpoint wrote them. */
  async function databaseFiles(): Promise<string[]> {
    await db.database.admin`CHECKPOINT`;
    const [row] = await db.database.admin<{ dir: string }[]>`
      SELECT current_setting('data_directory') || '/base/' || oid AS dir FROM pg_database WHERE datname = current_database()`;
    return readdirSync(row!.dir).map((f) => join(row!.dir, f));
  }
  const filesHolding = (files: string[], bytes: Uint8Array) => files.filter((f) => readFileSync(f).includes(Buffer.from(bytes)));

  test("before: no word, name or path of either user in a pg_dump, yet every room holds rows of each; after: none of the deleted user's, all of the other's; the destroyed key in no file", async () => {
    for (const user of [GONE, KEPT]) await fill(user);

    const before = dump();
    for (const user of [GONE, KEPT]) {
      for (const s of plaintext(user)) expect(before).not.toContain(s);
      for (const s of Object.values(USERS[user].plain)) expect(before).toContain(s);
    }
    // Each room's tables, each holding rows of each user.
    const rooms = [
      "corpus_auth_tokens",
      USER_KEYS_TABLE,
      "corpus_external_accounts",
      "corpus_oauth_sessions",
      "corpus_mcp_sessions",
      "corpus_conversations",
      "corpus_conversation_turns",
      "corpus_archive_queries",
      "corpus_archive_chunks",
      "corpus_archive_vectors",
      "corpus_webhooks",
      "corpus_connectors",
      "corpus_connector_grants",
    ].sort();
    const gone = await rowsNaming(GONE);
    const kept = await rowsNaming(KEPT);
    expect(Object.keys(gone).sort()).toEqual(rooms);
    expect(Object.keys(kept).sort()).toEqual(rooms);

    const keyOf = async (user: User) =>
      (await db.database.admin<{ k: Uint8Array }[]>`SELECT wrapped_key AS k FROM ${db.sql(USER_KEYS_TABLE)} WHERE user_id = ${user}`)[0]!.k;
    const key = await keyOf(GONE);
    const otherKey = await keyOf(KEPT);
    expect(filesHolding(await databaseFiles(), key).length).toBeGreaterThan(0);

    // Another node's transaction, begun before the deletion, still sees the key's row: the
    // deletion's rewrite waits for it (it would copy the row into the new file).
    const other = db.client();
    let finish = () => {};
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    let began = () => {};
    const begun = new Promise<void>((resolve) => {
      began = resolve;
    });
    const older = other.begin("ISOLATION LEVEL REPEATABLE READ", async (tx) => {
      await tx`SELECT count(*) FROM ${tx(USER_KEYS_TABLE)}`;
      began();
      await finished;
    });
    await begun;

    const done = await deleteUser(
      {
        ...t.services,
        auth,
        accounts,
        archive,
        connectors,
        userKeys: keys,
        oauth,
        mcpSessions,
        conversations,
        webhooks,
        limiter,
        idempotency,
        shared: db.sql,
      },
      GONE,
    );
    expect(done.details.profile_deleted).toBe(true);
    expect(t.logs.records().map((l) => l.message)).toContain(
      "user data deleted; an open transaction still sees the destroyed key's row: rewritten at a later sweep",
    );
    expect(filesHolding(await databaseFiles(), key).length).toBeGreaterThan(0);
    finish();
    await older;

    // Only the stamp that refuses the user's old tokens, by their keyed tag; the other user's rows as they were.
    expect(await rowsNaming(GONE)).toEqual({ corpus_auth_user_not_before: 1 });
    expect(await rowsNaming(KEPT)).toEqual(kept);
    const after = dump();
    expect(after).not.toContain(GONE);
    for (const s of [...plaintext(GONE), ...Object.values(USERS[GONE].plain)]) expect(after).not.toContain(s);
    for (const s of Object.values(USERS[KEPT].plain)) expect(after).toContain(s);

    // That transaction over, the sweep's compaction takes the key's dead row out of every file of
    // the database (asked again while another test's transaction on the same server holds it, as the sweep would).
    for (let tries = 0; !(await keys.compactDestroyed()) && tries < 200; tries++) await Bun.sleep(50);
    const files = await databaseFiles();
    expect(filesHolding(files, key)).toEqual([]);
    expect(filesHolding(files, otherKey).length).toBeGreaterThan(0);
  });
});
