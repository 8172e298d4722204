// Leases on background work (D33): a piece of work (a connector to index, a kind of owed work, a
// batch of deliveries) is done by the one that holds its lease, for a time it renews while it
// works; a holder that dies stops renewing, and once its lease has expired another claims the
// work and finishes it. Each claim raises the lease's token, so a holder whose lease was taken
// while it stalled finds out at its next renewal and stops. One interface, two stores: the
// embedded one below (a table of the data folder's database: the workers of one node), the
// shared one in PostgreSQL (leases-postgres.ts: the nodes of one database, claiming with
// FOR UPDATE SKIP LOCKED). Times are the claimant's clock in ms: nodes keep their clocks in step,
// and a lease's time is far longer than their skew.
import type { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import type { Migration } from "../store/migrations";
import type { Awaitable } from "../store/shared";

export const leaseMigrations: Migration[] = [
  {
    id: "jobs-001-leases",
    up(db) {
      db.exec(`CREATE TABLE jobs_leases (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        token INTEGER NOT NULL
      )`);
    },
  },
];

/**
 * This process's id as a holder of leases: new at every start, so a node restarted after a crash
 * is not taken for the one that died, whose leases expire as any other.
 */
export const NODE_ID = `node-${process.pid}-${randomBytes(6).toString("hex")}`;

/** A lease held: on the work `name`, by `holder`, until `expiresAt` (ms). */
export interface Lease {
  name: string;
  holder: string;
  expiresAt: number;
  /** Raised at every claim of the work: a lease taken over since has another. */
  token: number;
}

export interface Leases {
  /**
   * Of the work `names`, up to `limit` that no one holds, or whose lease has expired, each leased
   * to `holder` for `ttlMs`, in the order given; never one another holds. Two claimants at once
   * get none in common.
   */
  claim(names: readonly string[], holder: string, ttlMs: number, limit?: number): Awaitable<Lease[]>;
  /** The lease extended by `ttlMs` from now; undefined when it is no longer the holder's (expired and claimed by another). */
  renew(lease: Lease, ttlMs: number): Awaitable<Lease | undefined>;
  /** The work given up (done, or stopped); false when the lease was no longer the holder's. */
  release(lease: Lease): Awaitable<boolean>;
  /** Who holds `name` now, if anyone. */
  holderOf(name: string): Awaitable<string | undefined>;
}

/** The embedded store: the workers of one node. */
export class SqliteLeases implements Leases {
  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {}

  claim(names: readonly string[], holder: string, ttlMs: number, limit = names.length): Lease[] {
    const t = this.now();
    const read = this.db.query<{ expires_at: number; token: number }, [string]>("SELECT expires_at, token FROM jobs_leases WHERE name = ?");
    const write = this.db.query(
      `INSERT INTO jobs_leases (name, holder, expires_at, token) VALUES (?1, ?2, ?3, ?4)
       ON CONFLICT (name) DO UPDATE SET holder = ?2, expires_at = ?3, token = ?4`,
    );
    return this.db
      .transaction(() => {
        const claimed: Lease[] = [];
        for (const name of names) {
          if (claimed.length >= limit) break;
          const row = read.get(name);
          if (row && row.expires_at > t) continue;
          const lease = { name, holder, expiresAt: t + ttlMs, token: (row?.token ?? 0) + 1 };
          write.run(name, holder, lease.expiresAt, lease.token);
          claimed.push(lease);
        }
        return claimed;
      })
      .immediate();
  }

  renew(lease: Lease, ttlMs: number): Lease | undefined {
    const expiresAt = this.now() + ttlMs;
    const changed = this.db
      .query("UPDATE jobs_leases SET expires_at = ? WHERE name = ? AND holder = ? AND token = ?")
      .run(expiresAt, lease.name, lease.holder, lease.token).changes;
    return changed ? { ...lease, expiresAt } : undefined;
  }

  release(lease: Lease): boolean {
    // Freed, not deleted: its token goes on rising, so a lease of before never matches again.
    return (
      this.db
        .query("UPDATE jobs_leases SET holder = '', expires_at = 0 WHERE name = ? AND holder = ? AND token = ?")
        .run(lease.name, lease.holder, lease.token).changes > 0
    );
  }

  holderOf(name: string): string | undefined {
    return (
      this.db
        .query<{ holder: string }, [string, number]>("SELECT holder FROM jobs_leases WHERE name = ? AND expires_at > ?")
        .get(name, this.now())?.holder ?? undefined
    );
  }
}

/** The leases of a node's background work, and the node's id in them. */
export interface NodeLeases {
  leases: Leases;
  holder: string;
}

/** What a holder hears of its lease while it works. */
export interface LeaseEvents {
  /** The lease was taken by another while this holder stalled (its renewal found another token). */
  lost?(): void;
  /** A renewal failed (the database unreachable); tried again at the next. */
  notRenewed?(error: unknown): void;
}

/**
 * `work` done under the lease on `name` if `holder` gets it: renewed every third of `ttlMs` while
 * it runs, released after. Undefined when another holds it (the work is left to them). `work`
 * is given `held()`, false once the lease was lost: work that can stop part-way stops then.
 */
export async function underLease<T>(
  leases: Leases,
  name: string,
  holder: string,
  ttlMs: number,
  work: (held: () => boolean) => Awaitable<T>,
  events: LeaseEvents = {},
): Promise<{ value: T } | undefined> {
  const [lease] = await leases.claim([name], holder, ttlMs);
  if (!lease) return undefined;
  let held: Lease | undefined = lease;
  const renewal = setInterval(() => {
    if (!held) return;
    void Promise.resolve(leases.renew(held, ttlMs)).then(
      (renewed) => {
        if (!renewed) events.lost?.();
        held = renewed;
      },
      (error: unknown) => events.notRenewed?.(error),
    );
  }, ttlMs / 3);
  renewal.unref?.();
  try {
    return { value: await work(() => held !== undefined) };
  } finally {
    clearInterval(renewal);
    if (held) await leases.release(held);
  }
}
