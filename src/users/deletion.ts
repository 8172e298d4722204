// DELETE /v1/delete_my_data (D13; first document part 1 item 4): one transaction stamps "not
// before" on the user's tokens (the mark of a deleted user: a request that began earlier checks
// it before it writes), asks every room to erase the rows it keeps of the user (each with a
// method of its own store: no room's tables are written from here), then asks each that nothing
// is left (userRooms; a room that left rows undoes the whole deletion, which then fails, rather
// than a success being claimed for a part),
// destroys the user's data key (so copies of the database or its WAL open nothing of theirs),
// and queues the signed user.deleted event for their webhooks (read before they are removed)
// and the operator's. Only then are their connectors' connections closed: their background
// work, finding no key, writes nothing more (D25). The scrub (word index rewritten, WAL emptied)
// is owed in the same transaction and paid right after, or at the next start (D29).
// With a shared PostgreSQL (D33) the deletion is one PostgreSQL transaction: the shared rooms
// erase and count inside it (their stores' `within(tx)`), then the rooms not shared yet do as
// above in the embedded database's transaction, last inside it, so that rows left in either
// undo both (a failed commit of PostgreSQL after the embedded one is possible only while rooms
// are split between the two: the start is refused until none is, refuseUntilShared).
import type { Database } from "bun:sqlite";
import type postgres from "postgres";
import type { Archive } from "../archive/store";
import type { AuthService } from "../auth/service";
import type { ConnectorRegistry } from "../connectors/registry";
import { ConsoleSessions } from "../console/store";
import type { Conversations } from "../conversations/store";
import type { UserKeys } from "../crypto/user-keys";
import type { EmbeddingService } from "../embedding/service";
import { errorSummary } from "../jobs/guard";
import type { IdempotencyStore } from "../limits/idempotency";
import type { RateLimits } from "../limits/rate-limit";
import type { Logger } from "../log";
import type { DiskSpace } from "../store/disk-space";
import type { Scrub } from "../store/scrub";
import { type Awaitable, atOnce, inTransaction } from "../store/shared";
import { isStorageError } from "../store/storage-errors";
import type { WebhookStore, WebhookTarget } from "../webhooks/store";
import type { WebhookWorker } from "../webhooks/worker";

export interface DeletionResult {
  status: "deletion_confirmed";
  details: {
    oauth_tokens_revoked: number;
    query_history_deleted: boolean;
    archive_entries_removed: number;
    webhooks_unregistered: number;
    profile_deleted: boolean;
  };
  message: string;
}

export interface DeletionServices {
  db: Database;
  /** The shared PostgreSQL when CORPUS_DATABASE_URL names one (D33): the deletion is one transaction of it. */
  shared?: postgres.Sql;
  auth: AuthService;
  /** The built-in authorization server: the user's grants and sessions end too (no refresh mints a new token). */
  oauth?: { forgetUser(user: string): Awaitable<void>; store: UserRows };
  /** The sign-in accounts: an upstream provider's link to the user is erased; a password account is the operator's and stays. */
  accounts?: { forgetExternal(user: string): Awaitable<boolean>; externalLinks: UserRows };
  /** MCP sessions: a deleted user's end with them. */
  mcpSessions?: UserRows & { forget(user: string): Awaitable<number> };
  limiter: RateLimits;
  idempotency: IdempotencyStore;
  connectors: ConnectorRegistry;
  archive: Archive;
  conversations: Conversations;
  userKeys: UserKeys;
  embeddings: EmbeddingService;
  webhooks: WebhookStore;
  webhookWorker: WebhookWorker;
  scrub: Scrub;
  operatorWebhook?: { url: string; secret: string };
  log: Logger;
  disk?: DiskSpace;
}

/** A room that keeps rows naming a user, asked after a deletion how many it still holds. */
export interface UserRows {
  /** A shared store counts inside the deletion's PostgreSQL transaction through its `within(tx)` form. */
  rowsOf(user: string): Awaitable<number>;
}

/**
 * Every room that keeps rows of a user (D13): the one list the deletion erases and checks
 * (userRooms), what a removal reports as the user's data (`data`: what they put in or asked, not
 * the bookkeeping of tokens, limits, sessions and their data key, dataOf) and what a shared
 * PostgreSQL keeps (`shared`: erased and counted in its transaction, D33). A room added here must
 * be given to userRooms and, when shared, to the PostgreSQL transaction's count (both typed by it).
 */
export const USER_ROOMS = {
  auth: { data: false, shared: true },
  oauth: { data: false, shared: true },
  accounts: { data: false, shared: true },
  mcp_sessions: { data: false, shared: true },
  console_sessions: { data: false, shared: false },
  connectors: { data: true, shared: true },
  connector_indexes: { data: true, shared: true },
  archive: { data: true, shared: true },
  conversations: { data: true, shared: true },
  embeddings: { data: true, shared: false },
  webhooks: { data: true, shared: true },
  idempotency: { data: false, shared: true },
  limits: { data: false, shared: true },
  keys: { data: false, shared: true },
} as const satisfies Record<string, { data: boolean; shared: boolean }>;

export type UserRoom = keyof typeof USER_ROOMS;
type SharedUserRoom = { [R in UserRoom]: (typeof USER_ROOMS)[R]["shared"] extends true ? R : never }[UserRoom];

const roomsWhere = (wanted: (room: (typeof USER_ROOMS)[UserRoom]) => boolean) =>
  (Object.keys(USER_ROOMS) as UserRoom[]).filter((name) => wanted(USER_ROOMS[name]));
const DATA_ROOMS = roomsWhere((room) => room.data);
const SHARED_USER_ROOMS: readonly string[] = roomsWhere((room) => room.shared);

/** Each room of USER_ROOMS, asked through its own store (undefined: not kept by this node, as oauth without the authorization server). */
export function userRooms(s: DeletionServices): Record<UserRoom, UserRows | undefined> {
  return {
    auth: s.auth.store,
    oauth: s.oauth?.store,
    accounts: s.accounts?.externalLinks,
    mcp_sessions: s.mcpSessions,
    console_sessions: new ConsoleSessions(s.db),
    connectors: s.connectors.records,
    connector_indexes: s.connectors.indexes,
    archive: s.archive,
    conversations: s.conversations,
    embeddings: s.embeddings,
    webhooks: s.webhooks,
    idempotency: s.idempotency,
    limits: s.limiter,
    keys: s.userKeys,
  };
}

/** The rooms `s` keeps, by name (those it does not keep left out). */
export function keptUserRooms(s: DeletionServices): Array<[UserRoom, UserRows]> {
  return Object.entries(userRooms(s)).filter((e): e is [UserRoom, UserRows] => e[1] !== undefined);
}

/** What of `user`'s own data is kept, room by room (rooms holding none left out). */
export async function dataOf(s: DeletionServices, user: string): Promise<Array<{ room: string; rows: number }>> {
  const rooms = userRooms(s);
  const kept: Array<{ room: string; rows: number }> = [];
  for (const room of DATA_ROOMS) {
    const rows = (await rooms[room]?.rowsOf(user)) ?? 0;
    if (rows > 0) kept.push({ room, rows });
  }
  return kept;
}

export class DeletionIncomplete extends Error {
  constructor(readonly rooms: string[]) {
    super(`rows of the user were left in ${rooms.join(", ")}`);
  }
}

export async function deleteUser(s: DeletionServices, user: string): Promise<DeletionResult> {
  // On a full disk the reserve is freed and the deletion tried again (D29): it must succeed there.
  const writing = <T>(write: () => T): T => (s.disk ? s.disk.withReserve(write) : write());
  // The rooms kept in the embedded database, in its transaction; `shared`: what the shared rooms
  // did in the PostgreSQL transaction this one runs in (SHARED_USER_ROOMS: erased and counted there).
  const eraseEmbedded = (shared?: {
    tokens: number;
    conversations: number;
    webhooks: number;
    targets: WebhookTarget[];
    archive: { queries: number; chunks: number };
    profile: boolean;
    /** The user's connectors (their ids: their indexes are dropped here) and how many. */
    connectors: { ids: string[]; rows: number };
    left: string[];
  }) =>
    writing(
      s.db.transaction(() => {
        const targets = shared ? shared.targets : atOnce(s.webhooks.targets(user, "user.deleted"), "webhooks");
        const tokens = shared ? shared.tokens : atOnce(s.auth.store.revokeUser(user), "tokens");
        if (s.oauth && !shared) atOnce(s.oauth.forgetUser(user), "oauth");
        if (s.mcpSessions && !shared) atOnce(s.mcpSessions.forget(user), "mcp_sessions");
        // Each node's own (the operator console's sessions are kept in its embedded database).
        new ConsoleSessions(s.db).forgetUser(user);
        if (s.accounts && !shared) atOnce(s.accounts.forgetExternal(user), "accounts");
        if (!shared) atOnce(s.auth.store.forgetIssued(user), "tokens");
        const webhooks = shared ? shared.webhooks : atOnce(s.webhooks.deleteUser(user), "webhooks");
        const archive = shared ? shared.archive : atOnce(s.archive.deleteUser(user), "archive");
        const conversations = shared ? shared.conversations : atOnce(s.conversations.deleteUser(user), "conversations");
        // The indexes shared too (services.ts) were erased in the PostgreSQL transaction; embedded ones here, every
        // index under the user's name (one whose connector's record is gone too, which a drop by the records' ids missed).
        if (!shared || !indexesShared) atOnce(s.connectors.indexes.forget(user), "connector_indexes");
        const connectors = shared ? shared.connectors.rows : s.connectors.deleteUserRows(user);
        const vectors = s.embeddings.deleteOwner(user);
        if (!shared) atOnce(s.idempotency.forget(user), "idempotency");
        if (!shared) atOnce(s.limiter.forget(user), "limits");
        const profile = shared ? shared.profile : atOnce(s.userKeys.destroy(user), "keys");
        const left = [
          ...(shared?.left ?? []),
          ...keptUserRooms(s)
            .filter(([name]) => !shared || !SHARED_USER_ROOMS.includes(name) || (name === "connector_indexes" && !indexesShared))
            .filter(([name, room]) => atOnce(room.rowsOf(user), name) > 0)
            .map(([name]) => name),
        ];
        if (left.length) throw new DeletionIncomplete(left);
        s.scrub.owe();
        const details = {
          oauth_tokens_revoked: tokens,
          query_history_deleted: archive.queries + conversations > 0,
          archive_entries_removed: archive.chunks,
          webhooks_unregistered: webhooks,
          profile_deleted: profile,
        };
        const anything = tokens + webhooks + archive.chunks + archive.queries + conversations + connectors + vectors > 0 || profile;
        // On every successful deletion, whether or not anything was left (first document: "a
        // successful deletion triggers the webhook event user.deleted"): the operator's systems may
        // hold what corpus never did.
        const recipients = [...targets, ...(s.operatorWebhook ? [s.operatorWebhook] : [])];
        const event = { user_id: user, deleted_at: new Date().toISOString(), details };
        // Embedded: queued in this transaction; shared: in the PostgreSQL one, after this returns.
        if (recipients.length && !shared) atOnce(s.webhooks.enqueue("user.deleted", event, recipients), "webhooks");
        return { anything, result: details, queued: recipients.length > 0, event, recipients };
      }),
    );
  const sql = s.shared;
  const indexesShared = s.connectors.indexes.shared;
  const erase = sql
    ? () =>
        sql.begin(async (tx) => {
          // Every shared room bound to this transaction the same way (within, D33): what each
          // erases commits or rolls back with the rest.
          const rooms = {
            auth: inTransaction(s.auth.store, tx, "tokens"),
            oauth: s.oauth && inTransaction(s.oauth, tx, "oauth"),
            mcpSessions: s.mcpSessions && inTransaction(s.mcpSessions, tx, "mcp_sessions"),
            accounts: s.accounts && inTransaction(s.accounts, tx, "accounts"),
            conversations: s.conversations.within(tx),
            archive: inTransaction(s.archive.rows, tx, "archive"),
            webhooks: inTransaction(s.webhooks, tx, "webhooks"),
            connectors: inTransaction(s.connectors.records, tx, "connectors"),
            indexes: indexesShared ? inTransaction(s.connectors.indexes, tx, "connector_indexes") : undefined,
            keys: s.userKeys.within(tx),
            limits: inTransaction(s.limiter, tx, "limits"),
            idempotency: inTransaction(s.idempotency, tx, "idempotency"),
          };
          const tokens = await rooms.auth.revokeUser(user);
          await rooms.auth.forgetIssued(user);
          await rooms.oauth?.forgetUser(user);
          await rooms.mcpSessions?.forget(user);
          await rooms.accounts?.forgetExternal(user);
          const conversations = await rooms.conversations.deleteUser(user);
          const archive = await rooms.archive.forget(user);
          const targets = await rooms.webhooks.targets(user, "user.deleted");
          const webhooks = await rooms.webhooks.deleteUser(user);
          const connectorIds = await rooms.connectors.idsOf(user);
          const connectors = { ids: connectorIds, rows: await rooms.connectors.deleteUser(user) };
          await rooms.indexes?.forget(user);
          const profile = await rooms.keys.destroy(user);
          await rooms.limits.forget(user);
          await rooms.idempotency.forget(user);
          // SHARED_USER_ROOMS, by userRooms' names, each counted in this transaction.
          const counted: Record<SharedUserRoom, UserRows | undefined> = {
            auth: rooms.auth,
            oauth: rooms.oauth?.store,
            mcp_sessions: rooms.mcpSessions,
            accounts: rooms.accounts?.externalLinks,
            conversations: rooms.conversations,
            webhooks: rooms.webhooks,
            archive: rooms.archive,
            connectors: rooms.connectors,
            connector_indexes: rooms.indexes,
            keys: rooms.keys,
            limits: rooms.limits,
            idempotency: rooms.idempotency,
          };
          const left: string[] = [];
          for (const [name, room] of Object.entries(counted)) if (room && (await room.rowsOf(user)) > 0) left.push(name);
          const erased = eraseEmbedded({ tokens, conversations, webhooks, targets, archive, profile, connectors, left });
          if (erased.recipients.length) await rooms.webhooks.enqueue("user.deleted", erased.event, erased.recipients);
          return erased;
        })
    : eraseEmbedded;
  let erased: ReturnType<typeof eraseEmbedded>;
  try {
    erased = await erase();
  } catch (error) {
    if (error instanceof DeletionIncomplete) s.log.error("deletion undone: a room left rows of the user", { rooms: error.rooms });
    throw error;
  }
  const { result, anything, queued } = erased;
  // PostgreSQL keeps a deleted row's bytes in its file until its page is reused: the destroyed
  // key's are rewritten out now, by this node, off the serving thread (the database does it), or
  // by a later sweep while an older transaction still sees the row; the user's other dead rows
  // are sealed, blinded or rotated under that key (D3, D25).
  const compacted = await s.userKeys.compactDestroyed()?.catch((error: unknown) => {
    s.log.warning("user data deleted; the data keys' table is rewritten at the next sweep", errorSummary(error));
    return true;
  });
  if (compacted === false)
    s.log.info("user data deleted; an open transaction still sees the destroyed key's row: rewritten at a later sweep");
  await s.connectors.closeUser(user);
  // Free pages are overwritten (secure_delete), the word index drops what deleted entries left,
  // and the WAL is emptied into the database. The deletion itself is done: the scrub was owed in
  // its transaction, so one that fails here (a full disk, a crash) is done later (services.owed).
  try {
    writing(() => s.scrub.pay());
  } catch (error) {
    if (isStorageError(error)) s.log.warning("user data deleted; tidying the word index and the WAL waits for free space");
    else s.log.warning("deletion scrub owed; tried again shortly", errorSummary(error));
  }
  if (queued) void s.webhookWorker.tick();
  s.log.info("user data deleted", { archive_entries: result.archive_entries_removed, tokens: result.oauth_tokens_revoked });
  return {
    status: "deletion_confirmed",
    details: result,
    message: anything
      ? "All your data was deleted: connectors and their credentials, query history, conversations, archive, webhooks and your data key. Tokens issued until now no longer work. This cannot be undone."
      : "There was no data of yours left to delete.",
  };
}
