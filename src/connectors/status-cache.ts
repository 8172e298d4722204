// Connectors' statuses (issue 18 gap 8). A remote source's check can take up to
// HEALTH_TIMEOUT_MS: once one is known it is served at once and, when older than STATUS_TTL_MS,
// checked again in the background (one check at a time per connector), so that a list never
// waits on the slowest source. Only a connector never checked in this process, or asked
// `fresh`, waits, and then no longer than firstCheckWaitMs.
import type { Connector, ConnectorStatus } from "./types";

const STATUS_TTL_MS = 10_000;
const HEALTH_TIMEOUT_MS = 8_000;

/**
 * How long a request waits for a connector's first check before answering "checking": the whole
 * check, unless half of CORPUS_REQUEST_TIMEOUT is shorter, so that an add or the first list
 * never runs into the request timeout (a retry of that add then found the connector saved: 409).
 */
export const firstCheckWaitMs = (requestTimeoutSeconds: number) => Math.min(HEALTH_TIMEOUT_MS, (requestTimeoutSeconds * 1000) / 2);
export const CHECKING: ConnectorStatus = Object.freeze({ status: "checking", reason: "the connection is being checked" });

/** `value()` after `ms`, unless cleared first. */
const after = <T>(ms: number, value: () => T): { promise: Promise<T>; clear(): void } => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const promise = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(value()), ms);
  });
  return { promise, clear: () => clearTimeout(timer) };
};

/** A connector whose status is asked. */
export interface Watched {
  key: string;
  connector: Connector;
  /** Whether the connector is still the live one when its check answers (not removed meanwhile). */
  isCurrent(): boolean;
  /** Told of each check's answer and the status before it. */
  onAnswer?(status: ConnectorStatus, before?: ConnectorStatus): void;
}

export class StatusCache {
  private readonly statuses = new Map<string, { at: number; status: ConnectorStatus }>();
  /** Health checks under way, by connector. */
  private readonly checking = new Map<string, Promise<ConnectorStatus>>();

  constructor(
    private readonly now: () => number,
    /** CORPUS_REQUEST_TIMEOUT, in seconds. */
    private readonly requestTimeoutSeconds: number,
  ) {}

  /** A connector's status: cached, checked, or "checking" while its first check has not answered. */
  status(c: Watched, fresh = false): Promise<ConnectorStatus> {
    // Local indexes answer from memory and their own tables: always asked, so progress is live.
    if (c.connector.progress !== undefined) return this.check(c);
    const cached = this.statuses.get(c.key);
    if (!fresh && cached) {
      if (this.now() - cached.at >= STATUS_TTL_MS) void this.check(c).catch(() => {});
      return Promise.resolve(cached.status);
    }
    // Never checked (or asked fresh, when added): the check's answer if it comes soon, else "checking".
    const soon = after(firstCheckWaitMs(this.requestTimeoutSeconds), () => cached?.status ?? CHECKING);
    return Promise.race([this.check(c), soon.promise]).finally(soon.clear);
  }

  /** Asks the source (bounded by HEALTH_TIMEOUT_MS); concurrent asks of one connector share the answer. */
  private check({ key, connector, isCurrent, onAnswer }: Watched): Promise<ConnectorStatus> {
    const running = this.checking.get(key);
    if (running) return running;
    const timeout = after<ConnectorStatus>(HEALTH_TIMEOUT_MS, () => ({
      status: "error",
      reason: `no answer within ${HEALTH_TIMEOUT_MS / 1000} s`,
    }));
    const checked = Promise.race([connector.health(), timeout.promise])
      .then((status) => {
        const before = this.statuses.get(key)?.status;
        // A connector removed while it was being checked keeps no status.
        if (isCurrent()) this.statuses.set(key, { at: this.now(), status });
        onAnswer?.(status, before);
        return status;
      })
      .finally(() => {
        timeout.clear();
        if (this.checking.get(key) === checked) this.checking.delete(key);
      });
    this.checking.set(key, checked);
    return checked;
  }

  /** The last status a check answered, if any; never checks. */
  peek(key: string): ConnectorStatus | undefined {
    return this.statuses.get(key)?.status;
  }

  forget(key: string): void {
    this.statuses.delete(key);
    this.checking.delete(key);
  }
}
