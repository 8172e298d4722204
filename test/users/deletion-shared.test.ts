// A user's deletion as one PostgreSQL transaction (D33, users/deletion.ts): the shared rooms (the OAuth, MCP sessions, conversations, webhooks,
// tokens, accounts, archive, connectors, data keys, rate limits and idempotency rooms here) erase and count inside it, the
// node's own rooms in the embedded database's transaction inside that. A room that leaves rows, in either database, undoes the
// whole deletion in both: nothing committed to PostgreSQL (no stamp, the token records kept, the
// token still accepted by another node, the data key and an idempotency record kept), nothing in SQLite (a cached vector kept). Once every room
// erases, the deletion commits: another node refuses the user's token at its next request.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Accounts } from "../../src/accounts/store";
import { PostgresAccountRecords } from "../../src/accounts/store-postgres";
import { PostgresArchiveRows } from "../../src/archive/rows-postgres";
import { Archive } from "../../src/archive/store";
import { AuthFailure, AuthService } from "../../src/auth/service";
import { UserTags } from "../../src/auth/store";
import { NOT_BEFORE_TABLE, PostgresAuthStore } from "../../src/auth/store-postgres";
import { ConnectorRegistry } from "../../src/connectors/registry";
import { ConnectorRows } from "../../src/connectors/rows";
import { PostgresConnectorRecords } from "../../src/connectors/rows-postgres";
import { Conversations } from "../../src/conversations/store";
import { PostgresConversationRecords } from "../../src/conversations/store-postgres";
import { loadMasterKey } from "../../src/crypto/master-key";
import { UserKeys } from "../../src/crypto/user-keys";
import { PostgresUserKeyRecords } from "../../src/crypto/user-keys-postgres";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { IdempotencyStore } from "../../src/limits/idempotency";
import { PostgresIdempotencyRecords } from "../../src/limits/idempotency-postgres";
import { limitsFrom } from "../../src/limits/rate-limit";
import { PostgresRateLimiter } from "../../src/limits/rate-limit-postgres";
import { PostgresMcpSessions } from "../../src/mcp/sessions-postgres";
import { OAuthServer } from "../../src/oauth/service";
import { PostgresOAuthStore } from "../../src/oauth/store-postgres";
import { DeletionIncomplete, deleteUser } from "../../src/users/deletion";
import { PostgresWebhookStore } from "../../src/webhooks/store-postgres";
import { testApp } from "../helpers";
import { archivedChunk } from "../support/archived-chunk";
import { type SharedDatabase, sharedDatabase } from "../support/shared-database";

setDefaultTimeout(60_000);

const USER = "frank";

describe("a deletion with a shared PostgreSQL is one transaction of it", () => {
  let db: SharedDatabase;
  let t: Awaited<ReturnType<typeof testApp>>;
  let a: AuthService;
  let b: AuthService;
  let masterKey: Buffer;
  let accounts: Accounts;
  let archive: Archive;
  let keys: UserKeys;
  let connectors: ConnectorRegistry;
  let sharedRooms: Pick<
    Parameters<typeof deleteUser>[0],
    "oauth" | "mcpSessions" | "conversations" | "webhooks" | "limiter" | "idempotency"
  >;
  beforeAll(async () => {
    db = await sharedDatabase();
    t = await testApp();
    // The app's master key: the signing key in its data folder is sealed with it.
    masterKey = loadMasterKey({ dataDir: t.config.CORPUS_DATA_DIR }).key;
    a = await AuthService.create(t.config, t.db, masterKey, Date.now, db.client());
    b = await AuthService.create(t.config, t.db, masterKey, Date.now, db.client());
    accounts = new Accounts(new PostgresAccountRecords(db.client()));
    keys = new UserKeys(new PostgresUserKeyRecords(db.sql), masterKey);
    archive = new Archive(new PostgresArchiveRows(db.sql), keys, t.services.embeddings);
    connectors = new ConnectorRegistry({
      db: t.db,
      keys,
      config: t.config,
      log: t.log,
      records: new PostgresConnectorRecords(db.client()),
    });
    // The other shared rooms in PostgreSQL too, as services.ts wires them: an embedded one cannot join the transaction.
    sharedRooms = {
      oauth: new OAuthServer(t.config, a, accounts, new PostgresOAuthStore(db.client())),
      mcpSessions: new PostgresMcpSessions(db.client()),
      conversations: new Conversations(new PostgresConversationRecords(db.client()), keys),
      webhooks: new PostgresWebhookStore(db.client(), keys, masterKey),
      limiter: new PostgresRateLimiter(db.client(), limitsFrom(t.config), Date.now, t.services.guard),
      idempotency: new IdempotencyStore(new PostgresIdempotencyRecords(db.client()), keys, 60_000, Date.now, t.services.guard),
    };
  });
  afterAll(async () => {
    await connectors.close();
    await t.services.close();
    await db.drop();
  });

  // Node A's services: the embedded rooms of the test app, the tokens, accounts, archive, connectors and keys rooms and the transaction in PostgreSQL.
  const onA = () => ({ ...t.services, ...sharedRooms, auth: a, accounts, archive, connectors, userKeys: keys, shared: db.sql });
  const stamps = async () =>
    (
      await db.sql<
        { n: string }[]
      >`SELECT count(*) AS n FROM ${db.sql(NOT_BEFORE_TABLE)} WHERE user_tag = ${new UserTags(masterKey).of(USER)}`
    )[0]!.n;
  const acceptedOnB = async (token: string) => (await b.authenticate(`Bearer ${token}`, "corpus:search")).user;

  test("an embedded room that leaves rows undoes the PostgreSQL part too; a shared room that does undoes the embedded part", async () => {
    const { token } = await a.issuer.issue(USER, ["corpus:search"]);
    await keys.ready(USER, { create: true });
    // A shared room's row: a request's idempotency record.
    await sharedRooms.idempotency.begin({ user: USER, endpoint: "POST /v1/query", key: "k-1" }, { query: "the lease" });
    // An embedded room's row (the node's own cache of questions' vectors): its sealed content does not matter here.
    t.db
      .query("INSERT INTO embedding_cache (owner, key, vector, stored_at) VALUES (?, ?, ?, 0)")
      .run(USER, Buffer.from("k-1"), Buffer.alloc(8));
    // The user signed in through an upstream provider: their link is in the shared accounts room.
    await accounts.linkExternal(USER, "https://id.example.com", "frank", "Frank");
    expect(await acceptedOnB(token)).toBe(USER);
    await archive.prepareRotation(USER, true);
    await archive.store(
      USER,
      "qry_frank",
      "the lease",
      [archivedChunk("c1", "Lease", "ends in May")],
      [new Float32Array(EMBEDDING_DIM).fill(0.05)],
    );
    expect(await archive.rowsOf(USER)).toBe(2);
    // A connector of the user's, its config and grant sealed in the shared connectors room.
    const rows = new ConnectorRows(connectors.records, keys);
    await rows.insert(
      { owner: USER, id: "docs", kind: "files", label: "Docs", config: { path: "/srv/frank" }, created_at: "2026-01-01" },
      5,
    );
    await rows.setGrant(USER, "docs", { refresh_token: "r" });
    expect(await connectors.rowsOf(USER)).toBe(2);

    // The embedded room of cached vectors misses its row.
    const deleteOwner = t.services.embeddings.deleteOwner.bind(t.services.embeddings);
    t.services.embeddings.deleteOwner = () => 0;
    const failed = await deleteUser(onA(), USER).catch((e: unknown) => e);
    t.services.embeddings.deleteOwner = deleteOwner;
    expect(failed).toBeInstanceOf(DeletionIncomplete);
    expect((failed as DeletionIncomplete).rooms).toEqual(["embeddings"]);
    expect(await sharedRooms.idempotency.rowsOf(USER)).toBe(1);
    expect(await keys.rowsOf(USER)).toBe(1);
    expect(await a.store.rowsOf(USER)).toBe(1);
    expect(await archive.rowsOf(USER)).toBe(2);
    expect(await stamps()).toBe("0");
    expect(await acceptedOnB(token)).toBe(USER);

    // The shared tokens room misses its rows (inside the transaction).
    const store = a.store as PostgresAuthStore;
    store.within = (tx) => {
      const bound = PostgresAuthStore.prototype.within.call(store, tx);
      bound.forgetIssued = async () => 0;
      return bound;
    };
    const failedToo = await deleteUser(onA(), USER).catch((e: unknown) => e);
    store.within = PostgresAuthStore.prototype.within;
    expect((failedToo as DeletionIncomplete).rooms).toEqual(["auth"]);
    expect(await keys.rowsOf(USER)).toBe(1);
    expect(await sharedRooms.idempotency.rowsOf(USER)).toBe(1);
    expect(t.services.embeddings.rowsOf(USER)).toBe(1);
    expect(await connectors.rowsOf(USER)).toBe(2);
    expect(await a.store.rowsOf(USER)).toBe(1);
    expect(await archive.rowsOf(USER)).toBe(2);
    expect(await stamps()).toBe("0");
    expect(await acceptedOnB(token)).toBe(USER);
    // Undone with the rest: the upstream link is still there.
    expect(await accounts.externalLinks.rowsOf(USER)).toBe(1);
    expect(t.logs.records().filter((l) => l.message === "deletion undone: a room left rows of the user")).toEqual([
      expect.objectContaining({ rooms: ["embeddings"] }),
      expect.objectContaining({ rooms: ["auth"] }),
    ]);

    // Every room erases: committed in both; node B refuses the token at once.
    const done = await deleteUser(onA(), USER);
    expect(done.details).toMatchObject({ oauth_tokens_revoked: 1, profile_deleted: true, archive_entries_removed: 1 });
    expect(await a.store.rowsOf(USER)).toBe(0);
    expect(await archive.rowsOf(USER)).toBe(0);
    expect(await connectors.rowsOf(USER)).toBe(0);
    expect(await stamps()).toBe("1");
    expect(await keys.rowsOf(USER)).toBe(0);
    expect(await sharedRooms.idempotency.rowsOf(USER)).toBe(0);
    expect(t.services.embeddings.rowsOf(USER)).toBe(0);
    expect(await accounts.externalLinks.rowsOf(USER)).toBe(0);
    expect(await accounts.exists(USER)).toBe(false);
    const refused = await Promise.resolve(b.authenticate(`Bearer ${token}`, "corpus:search")).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AuthFailure);
    expect((refused as AuthFailure).message).toMatch(/revoked/);
  });
});
