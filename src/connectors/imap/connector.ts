// `imap` (D18, D19): a mailbox on an IMAP server, opened with EXAMINE (read-only). The
// server's SEARCH narrows candidates (any term in the text, within the date range) before
// bodies are fetched, with BODY.PEEK so that no \Seen flag is ever set. One connection is
// reused and every operation has a timeout. The server's host is resolved once per
// connection and checked (D26); the connection goes to that address, the name serving only
// for TLS. Failed connections are retried with backoff, never back to back (issue 13 item 7).
import type { ImapFlow } from "imapflow";
import { ConnectAttempts, RetryLater } from "../../net/attempts";
import { HostRefused, HostUnresolved } from "../../net/pin";
import { parseMessage } from "../maildir/connector";
import { CONNECT_TIMEOUT_MS, PUBLIC_PIN, refusedMessage, type RemoteOptions } from "../remote";
import { ConnectorError, needles, type Connector, type ConnectorStatus, type RetrievalRequest, type SourceRecord } from "../types";

export interface ImapConfig {
  host: string;
  port: number;
  secure: boolean;
  user: string;
  password: string;
  mailbox: string;
}

const OPERATION_TIMEOUT_MS = 15_000;

export class ImapConnector implements Connector {
  readonly kind = "imap";
  private client?: ImapFlow;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly attempts: ConnectAttempts;

  constructor(
    private readonly config: ImapConfig,
    private readonly remote: RemoteOptions = {},
  ) {
    this.attempts = new ConnectAttempts(remote.now);
  }

  private get baseUrl(): string {
    const { host, port, user, mailbox } = this.config;
    return `imap://${encodeURIComponent(user)}@${host}:${port}/${encodeURIComponent(mailbox)}`;
  }

  /** Runs `op` on the shared connection, one operation at a time, within the timeout. */
  private run<T>(op: (client: ImapFlow) => Promise<T>): Promise<T> {
    const next = this.queue.then(async () => {
      const client = await this.connect();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          this.drop();
          reject(new ConnectorError(`IMAP server ${this.config.host}:${this.config.port} did not answer within ${OPERATION_TIMEOUT_MS / 1000} s`));
        }, OPERATION_TIMEOUT_MS);
      });
      try {
        return await Promise.race([op(client), timeout]);
      } finally {
        clearTimeout(timer);
      }
    });
    this.queue = next.catch(() => {});
    return next;
  }

  private drop(): void {
    const c = this.client;
    this.client = undefined;
    c?.close();
  }

  private async connect(): Promise<ImapFlow> {
    if (this.client?.usable) return this.client;
    this.drop();
    const { host, port, secure, user, password, mailbox } = this.config;
    try {
      this.attempts.begin();
    } catch (error) {
      if (error instanceof RetryLater) throw new ConnectorError(error.message);
      throw error;
    }
    let pinned;
    try {
      pinned = await (this.remote.pin ?? PUBLIC_PIN)(host);
    } catch (error) {
      const reason = describeImapError(error, this.config);
      this.attempts.failed(reason);
      throw new ConnectorError(reason);
    }
    const { ImapFlow } = await import("imapflow"); // loaded on first use, not at start-up
    const client = new ImapFlow({
      host: pinned.address,
      ...(pinned.name ? { servername: pinned.name } : {}),
      port,
      secure,
      auth: { user, pass: password },
      logger: false,
      connectionTimeout: this.remote.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
      greetingTimeout: this.remote.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
      socketTimeout: 60_000,
      disableAutoIdle: true,
    });
    client.on("error", () => this.drop());
    try {
      await client.connect();
      // EXAMINE: the mailbox is read-only for this session (D19).
      await client.mailboxOpen(mailbox, { readOnly: true });
    } catch (error) {
      client.close();
      const reason = describeImapError(error, this.config);
      this.attempts.failed(reason);
      throw new ConnectorError(reason);
    }
    this.attempts.succeeded();
    this.client = client;
    return client;
  }

  async health(): Promise<ConnectorStatus> {
    try {
      const exists = await this.run(async (c) => (c.mailbox ? c.mailbox.exists : 0));
      return { status: "ok", records: exists };
    } catch (error) {
      return { status: "error", reason: error instanceof ConnectorError ? error.message : "IMAP server unavailable" };
    }
  }

  async search(request: RetrievalRequest): Promise<SourceRecord[]> {
    return this.run(async (client) => {
      const words = needles(request);
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
      const records = await Promise.all(
        messages.map((m) => parseMessage(m.source!, `${this.config.mailbox}/${m.uid}`, `${this.config.mailbox}/${m.uid}`, `${this.baseUrl};UID=${m.uid}`)),
      );
      return records.sort((a, b) => (b.date ?? "").localeCompare(a.date ?? ""));
    });
  }

  async close(): Promise<void> {
    await this.queue;
    const c = this.client;
    this.client = undefined;
    await c?.logout().catch(() => c.close());
  }
}

function describeImapError(error: unknown, config: ImapConfig): string {
  if (error instanceof HostRefused) return refusedMessage("config.host", error);
  const e = error as { code?: string; authenticationFailed?: boolean; responseText?: string; serverResponseCode?: string };
  const where = `${config.host}:${config.port}`;
  if (!(error instanceof HostUnresolved)) {
    if (e?.authenticationFailed || e?.serverResponseCode === "AUTHENTICATIONFAILED") return `IMAP login failed for ${config.user} at ${where}`;
    if (e?.serverResponseCode === "NONEXISTENT" || /mailbox/i.test(e?.responseText ?? "")) return `mailbox ${config.mailbox} does not exist at ${where}`;
  }
  // Refused, filtered, silent, no such name or not IMAP: one answer, so that it tells no port scan apart.
  return `IMAP server ${where} cannot be reached`;
}
