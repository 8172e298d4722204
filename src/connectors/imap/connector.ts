// `imap` (D18, D19): a mailbox on an IMAP server, opened with EXAMINE (read-only). The
// server's SEARCH narrows candidates (any term in the text, within the date range) before
// bodies are fetched, with BODY.PEEK so that no \Seen flag is ever set. Two connections are
// reused, taken in turns fair between users (turns.ts), and every operation has a timeout and
// ends when its search gives up. The server's host is resolved once per
// connection and checked (D26); the connection goes to that address, the name serving only
// for TLS. Failed connections are retried with backoff, never back to back (issue 13 item 7).
// A connector with `oauth` signs in with an access token of its grant (SASL OAUTHBEARER, RFC 7628,
// or XOAUTH2, whichever the server offers; imapflow speaks both), and a connection is not reused
// once its token is due for refresh: a revoked grant shows at the next operation.
import type { ImapFlow } from "imapflow";
import { documentText, sha256Hex } from "../../documents/ids";
import { ConnectAttempts, RetryLater } from "../../net/attempts";
import { HostRefused, HostUnresolved } from "../../net/pin";
import type { AccessToken, AccessTokens } from "../oauth/grants";
import { sharedReader } from "../reading/reader";
import { CONNECT_TIMEOUT_MS, PUBLIC_PIN, type RemoteOptions, refusedMessage } from "../remote";
import {
  type Connector,
  ConnectorError,
  type ConnectorStatus,
  type RetrievalRequest,
  type SourceRecord,
  SourceSkipped,
  searchNeedles,
} from "../types";
import { grantBinding, type ImapConfig, signsInWithOAuth } from "./config";
import { GAVE_UP, Turns } from "./turns";

/**
 * Connections kept to one server: a caller runs one operation at a time (turns.ts), so one
 * user's searches never hold them all while another waits.
 */
const CONNECTIONS = 2;
/**
 * An operation (connecting included) ends before the search (8 s) or the status check (8 s)
 * that asked for it would stop waiting: no connection stays busy for an answer nobody awaits.
 */
export const OPERATION_TIMEOUT_MS = 7_000;
/** imapflow's code for a command whose connection closed before its answer. */
const CONNECTION_LOST = "NoConnection";
/** Who a status check counts as among the callers (turns.ts). */
const HEALTH_CALLER = "\u0000health";

export class ImapConnector implements Connector {
  readonly kind = "imap";
  private readonly clients: Array<ImapFlow | undefined> = new Array(CONNECTIONS).fill(undefined);
  /** The access token each slot's connection signed in with (OAuth connectors). */
  private readonly signedInWith: Array<AccessToken | undefined> = new Array(CONNECTIONS).fill(undefined);
  /** Counts each slot's drops: a connection that completes after its operation was stopped is not kept. */
  private readonly drops: number[] = new Array(CONNECTIONS).fill(0);
  private readonly turns = new Turns(CONNECTIONS);
  private checking?: Promise<ConnectorStatus>;
  private readonly attempts: ConnectAttempts;

  constructor(
    private readonly config: ImapConfig,
    private readonly remote: RemoteOptions = {},
    private readonly oauth?: AccessTokens,
  ) {
    this.attempts = new ConnectAttempts(remote.now, CONNECTIONS);
  }

  private get baseUrl(): string {
    const { host, port, user, mailbox } = this.config;
    return `imap://${encodeURIComponent(user)}@${host}:${port}/${encodeURIComponent(mailbox)}`;
  }

  /**
   * Runs `op` on a connection in `caller`'s turn, within OPERATION_TIMEOUT_MS. Once the time is
   * up or `signal` says the caller gave up, the connection is closed: IMAP cannot cancel a
   * command, and the server stops working for nobody.
   */
  private run<T>(caller: string, op: (client: ImapFlow) => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.turns.run(
      caller,
      async (slot) => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        let onAbort: (() => void) | undefined;
        const stopped = new Promise<never>((_, reject) => {
          const stop = (error: ConnectorError) => {
            this.drop(slot);
            reject(error);
          };
          timer = setTimeout(
            () =>
              stop(
                new ConnectorError(
                  `IMAP server ${this.config.host}:${this.config.port} did not answer within ${OPERATION_TIMEOUT_MS / 1000} s`,
                ),
              ),
            OPERATION_TIMEOUT_MS,
          );
          onAbort = () => stop(new ConnectorError(GAVE_UP));
          signal?.addEventListener("abort", onAbort, { once: true });
        });
        try {
          return await Promise.race([this.attempt(slot, op), stopped]);
        } finally {
          clearTimeout(timer);
          if (onAbort) signal?.removeEventListener("abort", onAbort);
        }
      },
      signal,
    );
  }

  /**
   * `op` on the slot's connection; once more on a new one if the server closed a reused one under
   * it. Dovecot ends the sessions of a mailbox deleted and made again (rebuilt or restored, with a
   * new UIDVALIDITY: "duplicate transaction log sequence"), which the next question would
   * otherwise find failed. A new connection that fails is not tried again.
   */
  private async attempt<T>(slot: number, op: (client: ImapFlow) => Promise<T>): Promise<T> {
    const reused = this.clients[slot]?.usable === true;
    const client = await this.connect(slot);
    try {
      return await op(client);
    } catch (error) {
      if (!reused || client.usable || (error as { code?: string }).code !== CONNECTION_LOST) throw error;
      return op(await this.connect(slot));
    }
  }

  private drop(slot: number): void {
    this.drops[slot]!++;
    const c = this.clients[slot];
    this.clients[slot] = undefined;
    this.signedInWith[slot] = undefined;
    c?.close();
  }

  private async connect(slot: number): Promise<ImapFlow> {
    const current = this.clients[slot];
    const token = this.signedInWith[slot];
    if (current?.usable && !(token && this.oauth?.due(token))) return current;
    this.drop(slot);
    const generation = this.drops[slot];
    const { host, port, secure, user, password, mailbox } = this.config;
    try {
      this.attempts.begin();
    } catch (error) {
      if (error instanceof RetryLater) throw new ConnectorError(error.message);
      throw error;
    }
    let pinned: Awaited<ReturnType<typeof PUBLIC_PIN>>;
    try {
      pinned = await (this.remote.pin ?? PUBLIC_PIN)(host);
    } catch (error) {
      const reason = describeImapError(error, this.config);
      this.attempts.failed(reason);
      throw new ConnectorError(reason);
    }
    let accessToken: AccessToken | undefined;
    if (signsInWithOAuth(this.config)) {
      // The registry gives every connector its grants (a user's and the operator's alike).
      if (!this.oauth) throw new ConnectorError("this connector cannot sign in with OAuth: it was given no grants to sign in with");
      try {
        accessToken = await this.oauth.token(grantBinding(this.config));
      } catch (error) {
        // A grant that gives no token (none yet, refused, its provider gone) is the reason shown.
        const reason = error instanceof ConnectorError ? error.message : "the OAuth grant gave no access token";
        this.attempts.failed(reason);
        throw new ConnectorError(reason);
      }
    }
    const { ImapFlow } = await import("imapflow"); // loaded on first use, not at start-up
    const client = new ImapFlow({
      host: pinned.address,
      ...(pinned.name ? { servername: pinned.name } : {}),
      port,
      secure,
      auth: accessToken ? { user, accessToken: accessToken.accessToken } : { user, pass: password ?? "" },
      logger: false,
      connectionTimeout: this.remote.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
      greetingTimeout: this.remote.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
      socketTimeout: 60_000,
      disableAutoIdle: true,
    });
    client.on("error", () => {
      if (this.clients[slot] === client) this.drop(slot);
    });
    try {
      await client.connect();
      // EXAMINE: the mailbox is read-only for this session (D19).
      await client.mailboxOpen(mailbox, { readOnly: true });
    } catch (error) {
      client.close();
      const refused = isLoginRefused(error);
      // A token the server refused is not offered again: the next attempt asks the provider for a new one.
      if (accessToken && refused) this.oauth?.refusedByServer(accessToken);
      const reason = describeImapError(error, this.config);
      this.attempts.failed(reason);
      throw new ConnectorError(reason);
    }
    this.attempts.succeeded();
    if (this.drops[slot] !== generation) {
      // Its operation was stopped meanwhile; the slot may be another's by now.
      void client.logout().catch(() => client.close());
      throw new ConnectorError(GAVE_UP);
    }
    this.clients[slot] = client;
    this.signedInWith[slot] = accessToken;
    return client;
  }

  /** Concurrent checks share one operation. */
  health(): Promise<ConnectorStatus> {
    this.checking ??= this.check().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async check(): Promise<ConnectorStatus> {
    try {
      const exists = await this.run(HEALTH_CALLER, async (c) => (c.mailbox ? c.mailbox.exists : 0));
      return { status: "ok", records: exists };
    } catch (error) {
      return { status: "error", reason: error instanceof ConnectorError ? error.message : "IMAP server unavailable" };
    }
  }

  /** The server's SEARCH for at most MAX_SEARCH_NEEDLES needles (each one a pass over the mailbox), then the newest bodies. */
  async search(request: RetrievalRequest): Promise<SourceRecord[]> {
    return this.run(
      request.caller ?? "",
      async (client) => {
        const words = searchNeedles(request);
        const query: Record<string, unknown> = {};
        if (words.length === 1) query.text = words[0];
        else if (words.length > 1) query.or = words.map((w) => ({ text: w }));
        else query.all = true;
        // The message's own Date header, not the server's delivery date.
        if (request.dateFrom) query.sentSince = request.dateFrom;
        if (request.dateTo) query.sentBefore = request.dateTo;
        const uids = (await client.search(query, { uid: true })) || [];
        // Newest first: the highest UIDs, at most `limit` bodies fetched.
        const wanted = uids.sort((a, b) => b - a).slice(0, request.limit);
        if (wanted.length === 0) return [];
        const messages = await client.fetchAll(wanted.join(","), { uid: true, source: true }, { uid: true });
        // A UID names a message only with the mailbox's UIDVALIDITY (RFC 3501 2.3.1.1): a mailbox
        // rebuilt gives its UIDs to other mails. The session ends when it changes (Dovecot), so
        // the one this session opened with is the one of these UIDs.
        const place = messagePlace(this.config.mailbox, client.mailbox ? client.mailbox.uidValidity : undefined);
        // Parsed in the reading worker, before any folder's indexing (D31); a message over its
        // budget (a crafted one) is left out of the answer.
        const records = await Promise.all(
          messages.map((m) =>
            sharedReader()
              .mail(
                m.source!,
                { id: place(m.uid), url: `${this.baseUrl}${place(m.uid).slice(this.config.mailbox.length)}`, mbox: false },
                { urgent: true },
              )
              .then(
                (r) => r.map((record) => ({ ...record, id: messageRecordId(this.config.mailbox, record) })),
                (error: unknown) => {
                  if (error instanceof SourceSkipped) return [];
                  throw error;
                },
              ),
          ),
        );
        return records.flat().sort((a, b) => (b.date ?? "").localeCompare(a.date ?? ""));
      },
      request.signal,
    );
  }

  async close(): Promise<void> {
    await this.turns.idle();
    await Promise.all(
      this.clients.map((c, slot) => {
        this.clients[slot] = undefined;
        return c?.logout().catch(() => c.close());
      }),
    );
  }
}

/**
 * Where a message is in its mailbox, as RFC 5092 writes it after the mailbox in an IMAP URL:
 * `INBOX;UIDVALIDITY=385759045/;UID=20`. Its record's id and path when it has no Message-ID,
 * and its link's end: a client opening the link after the mailbox was rebuilt finds that the
 * UIDVALIDITY no longer matches and opens nothing, never the mail that has the UID now.
 */
export function messagePlace(mailbox: string, uidValidity: bigint | number | undefined): (uid: number) => string {
  const validity = uidValidity === undefined ? "" : `;UIDVALIDITY=${uidValidity}`;
  return (uid) => `${mailbox}${validity}/;UID=${uid}`;
}

/**
 * A message's record id (D36: unchanged content, the same ids): its mailbox and the sha256 of its
 * Message-ID and text, which stay when the server gives the mailbox a new UIDVALIDITY (rebuilt,
 * moved or restored: every UID changes, RFC 9051 2.3.1.1); its mailbox and UID (as read) for a
 * message without one. The text is in it because a Message-ID is written by the sender: another
 * mail sent under a real one's ID is another record, never taken for the real one (copies.ts).
 * Its path and source_url keep the UIDVALIDITY and UID (messagePlace): the address a client opens now.
 */
function messageRecordId(mailbox: string, record: SourceRecord): string {
  const messageId = record.metadata.message_id;
  if (typeof messageId !== "string" || !messageId) return record.id;
  return `${mailbox}/${sha256Hex(`${messageId}\u0000${documentText(record.title, record.content)}`)}`;
}

/** The server refused the login (its credentials), not a failure to reach it. */
function isLoginRefused(error: unknown): boolean {
  const e = error as { authenticationFailed?: boolean; serverResponseCode?: string };
  return !!e && (e.authenticationFailed === true || e.serverResponseCode === "AUTHENTICATIONFAILED");
}

function describeImapError(error: unknown, config: ImapConfig): string {
  if (error instanceof HostRefused) return refusedMessage("config.host", error);
  const e = error as { code?: string; authenticationFailed?: boolean; responseText?: string; serverResponseCode?: string };
  const where = `${config.host}:${config.port}`;
  if (!(error instanceof HostUnresolved)) {
    if (isLoginRefused(error))
      return signsInWithOAuth(config)
        ? `IMAP login with OAuth failed for ${config.user} at ${where}: the server refused the access token`
        : `IMAP login failed for ${config.user} at ${where}`;
    if (e?.serverResponseCode === "NONEXISTENT" || /mailbox/i.test(e?.responseText ?? ""))
      return `mailbox ${config.mailbox} does not exist at ${where}`;
  }
  // Refused, filtered, silent, no such name or not IMAP: one answer, so that it tells no port scan apart.
  return `IMAP server ${where} cannot be reached`;
}
