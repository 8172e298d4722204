// Delivers the outbox (D14): POST with the signature header and a timeout; on failure,
// exponential backoff with jitter (2 s, 4 s, 8 s … at most an hour) until 24 hours have
// passed. A delivery is removed only once a receiver answered 2xx, so one in flight when the
// process dies is sent again after the restart (receivers de-duplicate on the event id).
// Each delivery resolves the target once, checks it and connects to that address (no second
// lookup a rebinding DNS server could answer differently); redirects are not followed.
// Several nodes on one database (D33): a round claims due deliveries under a lease and holds each
// again right before its attempt, so no two nodes send one attempt; a dead node's claims are
// taken by another once DELIVERY_LEASE_MS passed.
import type { BackgroundGuard } from "../jobs/guard";
import { NODE_ID } from "../jobs/leases";
import type { Logger } from "../log";
import { type Resolver, systemResolver } from "../net/pin";
import { PostTimeout, postPinned } from "../net/post";
import { SIGNATURE_HEADER, sign } from "./signature";
import type { ClaimedDelivery, WebhookStore } from "./store";
import { checkTarget, TargetError } from "./targets";

export const DELIVERY_WINDOW_MS = 24 * 3600 * 1000;
const TIMEOUT_MS = 10_000;
const BASE_MS = 2_000;
const MAX_BACKOFF_MS = 3600_000;
const TICK_MS = 1_000;
/** Deliveries claimed at once by a round. */
const ROUND = 20;
/**
 * How long a claim on a delivery lasts: held again right before each attempt, so it covers the
 * attempt's timeout three times over; a dead node's deliveries wait this long for another.
 */
export const DELIVERY_LEASE_MS = 3 * TIMEOUT_MS;

export function backoff(attempts: number, random = Math.random): number {
  const base = Math.min(MAX_BACKOFF_MS, BASE_MS * 2 ** Math.max(0, attempts - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}

export class WebhookWorker {
  private timer?: ReturnType<typeof setInterval>;
  private running?: Promise<void>;

  constructor(
    private readonly store: WebhookStore,
    private readonly allowPrivate: boolean,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
    private readonly resolve: Resolver = systemResolver,
    /** Reports failed rounds (a full disk); without one they are logged here. The next tick retries. */
    private readonly guard?: BackgroundGuard,
    /** This node, as the claimant of deliveries. */
    private readonly holder: string = NODE_ID,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), TICK_MS);
    void this.tick();
  }

  /** Delivers what is due now; resolves when this round is done (never rejects: the next tick retries). */
  tick(): Promise<void> {
    const round = () => this.round();
    this.running ??= (
      this.guard
        ? this.guard.run("webhook_deliveries", round).then(() => {})
        : round().catch(() => this.log.error("webhook round failed; retried at the next tick"))
    ).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async round(): Promise<void> {
    for (const item of await this.store.claimDue(ROUND, this.holder, DELIVERY_LEASE_MS)) {
      // Held again for this attempt; one whose claim another node took meanwhile is its to send.
      if (await this.store.hold(item, DELIVERY_LEASE_MS)) await this.attempt(item);
    }
  }

  private async attempt(item: ClaimedDelivery): Promise<void> {
    const { delivery } = item;
    const attempts = item.attempts + 1;
    let error: string | undefined;
    try {
      const { url, pinned } = await checkTarget(delivery.url, this.allowPrivate, this.resolve);
      const status = await postPinned(url, pinned, {
        headers: {
          "content-type": "application/json",
          "user-agent": "corpus-webhooks/0.1.0",
          [SIGNATURE_HEADER]: sign(delivery.secret, delivery.body),
        },
        body: delivery.body,
        timeoutMs: TIMEOUT_MS,
      });
      if (status >= 200 && status < 300) {
        await this.store.delivered(item);
        this.log.info("webhook delivered", { event_id: delivery.event_id, attempts });
        return;
      }
      error = `receiver answered ${status}`;
    } catch (e) {
      error =
        e instanceof TargetError
          ? e.message
          : e instanceof PostTimeout
            ? `no answer within ${TIMEOUT_MS / 1000} s`
            : "receiver unreachable";
    }
    const next = this.now() + backoff(attempts);
    if (next - item.created_at > DELIVERY_WINDOW_MS) {
      await this.store.giveUp(item, attempts, error);
      this.log.warning("webhook given up after 24 hours", { event_id: delivery.event_id, attempts, error });
    } else {
      await this.store.retryAt(item, attempts, next, error);
      this.log.info("webhook delivery failed, will retry", { event_id: delivery.event_id, attempts, error });
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
