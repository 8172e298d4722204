// Password hashes at once in this process (issue 35): each argon2id hash takes 19 MiB and a
// core's 30 ms, so an unauthenticated sign-in must not be able to start one per request.
// At most HASHES_RUNNING run, HASHES_WAITING more wait their turn in order, and the rest are
// refused at once (HashesBusy: the sign-in answers 429 with Retry-After). A hash asked for a
// holder (a sign-in's client address) is refused at once while that holder has one running
// or waiting: one address holds at most one of the slots, so a few addresses cannot take them
// all. One gate for the process: every hash or verification of src/accounts goes through
// `passwordHashes`.

/** Two cores: two hashes use both, and hold 38 MiB at most. */
export const HASHES_RUNNING = 2;
/** About 120 ms of queued work at 30 ms a hash on two cores: past that, refused. */
export const HASHES_WAITING = 8;
/** What a refused sign-in is told to wait: the queue drains in well under a second. */
export const HASHES_BUSY_RETRY_SECONDS = 1;

export class HashesBusy extends Error {
  readonly retryAfter = HASHES_BUSY_RETRY_SECONDS;

  constructor() {
    super("too many password checks at once");
  }
}

export class HashGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /** Holders with a hash running or waiting: never more than the slots and the queue. */
  private readonly holders = new Set<string>();
  /** Hashes started so far, and the most that ever ran at once (what the tests count). */
  started = 0;
  peak = 0;

  constructor(
    readonly maxRunning = HASHES_RUNNING,
    readonly maxWaiting = HASHES_WAITING,
  ) {}

  /**
   * Runs `hash` when a slot is free; throws HashesBusy at once when the queue is full, or when
   * `holder` already has a hash running or waiting.
   */
  async run<T>(hash: () => Promise<T>, holder?: string): Promise<T> {
    if (holder !== undefined && this.holders.has(holder)) throw new HashesBusy();
    let turn: Promise<void> | undefined;
    if (this.running < this.maxRunning) this.running++;
    else if (this.waiting.length < this.maxWaiting) turn = new Promise<void>((go) => this.waiting.push(go));
    else throw new HashesBusy();
    if (holder !== undefined) this.holders.add(holder);
    try {
      await turn;
      // Here this call holds a slot: taken above, or handed over by the one that finished.
      this.started++;
      this.peak = Math.max(this.peak, this.running);
      return await hash();
    } finally {
      if (holder !== undefined) this.holders.delete(holder);
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

export const passwordHashes = new HashGate();
