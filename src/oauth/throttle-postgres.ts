// The sign-in throttle and the dynamic-registration allowance in the shared PostgreSQL (D27, D33),
// so that a stranger behind a balancer of N nodes gets the attempts of one node, not N times
// them. The rule is throttle.ts's (loginWait, the same counters and places); here each counted
// event is a row, and a login's attempts from one address are judged one at a time across the
// nodes (a transaction-scoped advisory lock of its address counter), so that two guesses at once
// on two nodes cannot both pass its last allowed one. Bounded as the memory one is: each counter
// keeps its newest `limit` events, an account its newest KNOWN_PER_ACCOUNT places; sweep() deletes
// what left its window and, past MAX_EVENT_ROWS, the oldest.
// PostgreSQL holds no name and no address: the embedded throttle keeps its counters in memory
// only, so at rest here every counter's key, account and place is a keyed hash (HMAC under a key
// derived from the master key every node holds), with times in milliseconds.
import { createHmac } from "node:crypto";
import type postgres from "postgres";
import type { PgMigration } from "../store/postgres-migrations";
import { atomically } from "../store/shared";
import {
  type Allowance,
  KNOWN_ADDRESS_MS,
  KNOWN_PER_ACCOUNT,
  type LoginAttempt,
  loginCounters,
  loginPlaces,
  loginWait,
  MAX_KEYS,
  type SignInThrottle,
  WINDOW_MS,
} from "./throttle";

export const THROTTLE_EVENTS = "corpus_throttle_events";
export const THROTTLE_KNOWN = "corpus_throttle_known";

/** Event rows kept at most (sweep): the memory throttle's MAX_KEYS counters, five events each on average. */
const MAX_EVENT_ROWS = MAX_KEYS * 5;
/** The longest window of an event kept (the registrations' hour): older ones are swept. */
const LONGEST_WINDOW_MS = 3_600_000;

export const throttlePgMigrations: PgMigration[] = [
  {
    id: "throttle-pg-001-events",
    async up(tx) {
      await tx.unsafe(`CREATE TABLE ${THROTTLE_EVENTS} (
        id bigserial PRIMARY KEY,
        key text NOT NULL,
        at bigint NOT NULL
      )`);
      await tx.unsafe(`CREATE INDEX ${THROTTLE_EVENTS}_key ON ${THROTTLE_EVENTS} (key, at)`);
      await tx.unsafe(`CREATE TABLE ${THROTTLE_KNOWN} (
        account text NOT NULL,
        place text NOT NULL,
        at bigint NOT NULL,
        PRIMARY KEY (account, place)
      )`);
      await tx.unsafe(`CREATE INDEX ${THROTTLE_KNOWN}_at ON ${THROTTLE_KNOWN} (at)`);
    },
  },
];

/** A counter's key, an account or a place as PostgreSQL keeps it: a keyed hash. */
class ThrottleTags {
  private readonly key: Buffer;
  constructor(masterKey: Buffer) {
    this.key = createHmac("sha256", masterKey).update("corpus/throttle-key").digest();
  }
  of(value: string): string {
    return createHmac("sha256", this.key).update(value).digest("hex");
  }
}

/** The advisory lock of a counter (a bigint of its tag: a collision only serializes two counters). */
const lockOf = (tag: string) => BigInt.asIntN(64, BigInt(`0x${tag.slice(0, 16)}`)).toString();

/** The sign-in throttle and the registration allowances of every node on one PostgreSQL. */
export class SharedThrottles {
  private readonly tags: ThrottleTags;

  constructor(
    private readonly sql: postgres.Sql,
    masterKey: Buffer,
    private readonly now: () => number = Date.now,
  ) {
    this.tags = new ThrottleTags(masterKey);
  }

  /** The sign-in throttle (throttle.ts's rule, counted here). */
  signIn(): SignInThrottle {
    return { attempt: (account, address, device) => this.attempt(account, address, device) };
  }

  /** At most `limit` events per key in `windowMs`, counted here; `name` keeps one allowance's keys apart from another's. */
  allowance(name: string, limit: number, windowMs: number): Allowance {
    return {
      take: (key) =>
        atomically(this.sql, async (tx) => {
          const tag = this.tags.of(`w:${name} ${key}`);
          await tx`SELECT pg_advisory_xact_lock(${lockOf(tag)}::bigint)`;
          const t = this.now();
          const [row] = await tx<{ n: string; oldest: string | null }[]>`
            SELECT count(*) AS n, min(at) AS oldest FROM ${tx(THROTTLE_EVENTS)} WHERE key = ${tag} AND at > ${t - windowMs}`;
          if (Number(row!.n) >= limit) return Math.max(1, Math.ceil((Number(row!.oldest) + windowMs - t) / 1000));
          await tx`INSERT INTO ${tx(THROTTLE_EVENTS)} (key, at) VALUES (${tag}, ${t})`;
          return 0;
        }),
    };
  }

  private async attempt(
    account: string | undefined,
    address: string,
    device: string | undefined,
  ): Promise<{ wait: number } | { attempt: LoginAttempt }> {
    const plain = loginCounters(account, address);
    const counters = Object.fromEntries(
      Object.entries(plain).map(([name, c]) => [name, { key: this.tags.of(c.key), limit: c.limit }]),
    ) as typeof plain;
    const accountTag = account === undefined ? undefined : this.tags.of(`k:${account}`);
    const placeTags = loginPlaces(address, device).map((p) => this.tags.of(`l:${p}`));
    const counted = await atomically(this.sql, async (tx): Promise<{ wait: number } | { ids: Map<string, string> }> => {
      // One address's attempts judged one at a time on every node.
      await tx`SELECT pg_advisory_xact_lock(${lockOf(counters.address.key)}::bigint)`;
      const t = this.now();
      const all = Object.values(counters);
      const keys = all.map((c) => c.key);
      const rows = await tx<{ key: string; at: string }[]>`
        SELECT key, at FROM ${tx(THROTTLE_EVENTS)} WHERE key = ANY(${keys}::text[]) AND at > ${t - WINDOW_MS} ORDER BY at, id`;
      const recent = new Map<string, number[]>();
      for (const r of rows) recent.set(r.key, [...(recent.get(r.key) ?? []), Number(r.at)]);
      const sprayed = counters.account && (recent.get(counters.account.key)?.length ?? 0) >= counters.account.limit;
      const known =
        sprayed && accountTag !== undefined
          ? (
              await tx`SELECT 1 FROM ${tx(THROTTLE_KNOWN)}
                WHERE account = ${accountTag} AND place = ANY(${placeTags}::text[]) AND at > ${t - KNOWN_ADDRESS_MS}`
            ).length > 0
          : false;
      const wait = loginWait(
        counters,
        (key) => recent.get(key) ?? [],
        () => known,
        t,
      );
      if (wait > 0) return { wait };
      const inserted = await tx<{ id: string; key: string }[]>`
        INSERT INTO ${tx(THROTTLE_EVENTS)} (key, at) SELECT k, ${t}::bigint FROM unnest(${keys}::text[]) AS k RETURNING id, key`;
      // Each counter keeps its newest `limit` events (the memory one keeps as many), none out of its window.
      await tx`DELETE FROM ${tx(THROTTLE_EVENTS)} WHERE id IN (
        SELECT id FROM (
          SELECT e.id, e.at, l.lim, row_number() OVER (PARTITION BY e.key ORDER BY e.at DESC, e.id DESC) AS n
          FROM ${tx(THROTTLE_EVENTS)} e JOIN unnest(${keys}::text[], ${all.map((c) => c.limit)}::int[]) AS l(key, lim) ON e.key = l.key
        ) r WHERE r.n > r.lim OR r.at <= ${t - WINDOW_MS})`;
      return { ids: new Map(inserted.map((r) => [r.key, r.id])) };
    });
    if ("wait" in counted) return counted;
    const idOf = (c: { key: string } | undefined) => (c ? counted.ids.get(c.key) : undefined);
    const takeBack = async (...cs: Array<{ key: string } | undefined>) => {
      const ids = cs.map(idOf).filter((id): id is string => id !== undefined);
      if (ids.length) await this.sql`DELETE FROM ${this.sql(THROTTLE_EVENTS)} WHERE id = ANY(${ids}::bigint[])`;
    };
    return {
      attempt: {
        succeeded: async (issued) => {
          if (counters.pair) await this.sql`DELETE FROM ${this.sql(THROTTLE_EVENTS)} WHERE key = ${counters.pair.key}`;
          await takeBack(counters.account, counters.address);
          if (accountTag === undefined) return;
          // Known there (and on the browser's new device id) for KNOWN_ADDRESS_MS; the account's newest KNOWN_PER_ACCOUNT kept.
          const places = loginPlaces(address, issued).map((p) => this.tags.of(`l:${p}`));
          const t = this.now();
          await this.sql`INSERT INTO ${this.sql(THROTTLE_KNOWN)} (account, place, at)
            SELECT ${accountTag}, p, ${t}::bigint FROM unnest(${places}::text[]) AS p
            ON CONFLICT (account, place) DO UPDATE SET at = EXCLUDED.at`;
          await this.sql`DELETE FROM ${this.sql(THROTTLE_KNOWN)} WHERE account = ${accountTag} AND place IN (
            SELECT place FROM ${this.sql(THROTTLE_KNOWN)} WHERE account = ${accountTag} ORDER BY at DESC OFFSET ${KNOWN_PER_ACCOUNT})`;
        },
        busy: () => takeBack(counters.pair, counters.account),
        refund: () => takeBack(counters.pair, counters.account, counters.address),
      },
    };
  }

  /** Deletes events out of every window and places no longer known, then the oldest events past MAX_EVENT_ROWS; how many. */
  async sweep(): Promise<number> {
    const t = this.now();
    const events = this.sql(THROTTLE_EVENTS);
    const old = await this.sql`DELETE FROM ${events} WHERE at <= ${t - LONGEST_WINDOW_MS}`;
    const known = await this.sql`DELETE FROM ${this.sql(THROTTLE_KNOWN)} WHERE at <= ${t - KNOWN_ADDRESS_MS}`;
    const over = await this
      .sql`DELETE FROM ${events} WHERE id <= (SELECT id FROM ${events} ORDER BY id DESC OFFSET ${MAX_EVENT_ROWS} LIMIT 1)`;
    return old.count + known.count + over.count;
  }
}
