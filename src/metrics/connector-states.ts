// The connectors' states as the metrics count them (D35), read at most once per STATES_TTL_MS.
// Reading them asks every live local index for its health (counts over its tables) on the thread
// that serves requests: with 400 users with one small folder each, a scrape that reads them took
// 111 ms (median, this machine loaded 16-18), one that does not 8.6 ms (README, Monitoring); read
// at every scrape, that is paid per scrape and per Prometheus. So a scrape reads what was read within the TTL, whatever the number of users, and
// concurrent scrapes share one read. The set of connectors changing (one added or removed, a user
// deleted: the connectors table's signature) makes the next scrape read afresh, so the counts of
// connectors are never a TTL late; their states and progress may be.

/**
 * How long a reading of the states serves the scrapes: the gauges it feeds are watched over
 * minutes (an alert waits `for:` several), and a scrape every 15 s then reads them every other
 * time at most.
 */
export const STATES_TTL_MS = 30_000;

export class CachedRead<T> {
  private held?: { at: number; signature: string; read: Promise<T> };

  constructor(
    private readonly read: () => Promise<T>,
    /** What, when it changes, makes what was read stale before the TTL is up. */
    private readonly signature: () => string,
    private readonly now: () => number,
    private readonly ttlMs = STATES_TTL_MS,
  ) {}

  get(): Promise<T> {
    const at = this.now();
    const signature = this.signature();
    const held = this.held;
    // A clock set back counts as stale, never as fresh for longer.
    if (held && held.signature === signature && at >= held.at && at - held.at < this.ttlMs) return held.read;
    const read = this.read();
    this.held = { at, signature, read };
    // A failed read is not kept: the next scrape tries again.
    read.catch(() => {
      if (this.held?.read === read) this.held = undefined;
    });
    return read;
  }
}
