// MCP sessions (Streamable HTTP, `Mcp-Session-Id`): opened at `initialize` for the user who
// sent it, honoured only for that user, ended by DELETE /mcp or after a day unused. Bounded
// (issue 13 item 11): a sweep on a timer removes expired ones, a user holds at most
// MAX_SESSIONS_PER_USER (their oldest goes first), and past MAX_SESSIONS no new one is opened:
// the client goes on without a session id, which the transport allows. A session is all the
// state there is (its user, protocol version and last use: the transport keeps nothing else
// between requests), so it can live in a shared store. One interface (McpSessionStore), two
// stores (D33): the embedded one below, in the node's memory, and the shared one in PostgreSQL
// (sessions-postgres.ts), so a session opened on one node is used or ended on any.
import type { Awaitable } from "../store/shared";

export const SESSION_TTL_MS = 24 * 3600 * 1000;
export const MAX_SESSIONS = 10_000;
export const MAX_SESSIONS_PER_USER = 100;
export const SWEEP_EVERY_MS = 10 * 60 * 1000;

export interface Session {
  version: string;
  user: string;
  /** Last use, in ms of the injected clock. */
  at: number;
}

/** Starts `fn` every `ms`, without holding the process open; returns how to stop it. */
export type Schedule = (fn: () => void, ms: number) => () => void;

export const everyUnref: Schedule = (fn, ms) => {
  const timer = setInterval(fn, ms);
  timer.unref?.();
  return () => clearInterval(timer);
};

/** Where sessions are kept (D33): at once from the node's memory, later from PostgreSQL. */
export interface McpSessionStore {
  /** A new session of `user`, or undefined when the server holds as many as it may. */
  open(user: string, version: string): Awaitable<string | undefined>;
  /** The live session `id` if it is `user`'s (another user's is as unknown as a made-up id); its use is recorded. */
  use(id: string, user: string): Awaitable<Session | undefined>;
  /** Ends `user`'s session `id`; false if there is none such. */
  close(id: string, user: string): Awaitable<boolean>;
  /** Removes the expired sessions; how many. */
  sweep(): Awaitable<number>;
  /** The sessions of `user` (a deletion asks every room that nothing is left). */
  rowsOf(user: string): Awaitable<number>;
  /** Ends every session of `user` (their data deleted); the shared store's `within(tx)` inside the deletion's transaction. */
  forget(user: string): Awaitable<number>;
}

/** The embedded store: the node's memory, swept on a timer that runs only while there are sessions. */
export class McpSessions implements McpSessionStore {
  private readonly sessions = new Map<string, Session>();
  // Each user's session ids, oldest first (a Set keeps insertion order).
  private readonly byUser = new Map<string, Set<string>>();
  private stopSweeping?: () => void;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly schedule: Schedule = everyUnref,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  /** A new session of `user`, or undefined when the server holds as many as it may. */
  open(user: string, version: string): string | undefined {
    const own = this.byUser.get(user);
    if (own && own.size >= MAX_SESSIONS_PER_USER) this.remove(own.values().next().value!);
    if (this.sessions.size >= MAX_SESSIONS && this.sweep() === 0) return undefined;
    const id = crypto.randomUUID();
    this.sessions.set(id, { version, user, at: this.now() });
    let ids = this.byUser.get(user);
    if (!ids) this.byUser.set(user, (ids = new Set()));
    ids.add(id);
    // The timer runs only while there are sessions to sweep.
    this.stopSweeping ??= this.schedule(() => this.sweep(), SWEEP_EVERY_MS);
    return id;
  }

  /** The live session `id` if it is `user`'s (another user's is as unknown as a made-up id); its use is recorded. */
  use(id: string, user: string): Session | undefined {
    const s = this.sessions.get(id);
    if (!s || s.user !== user) return undefined;
    if (this.expired(s)) {
      this.remove(id);
      return undefined;
    }
    s.at = this.now();
    return s;
  }

  /** Ends `user`'s session `id`; false if there is none such. */
  close(id: string, user: string): boolean {
    if (!this.use(id, user)) return false;
    this.remove(id);
    return true;
  }

  rowsOf(user: string): number {
    return this.byUser.get(user)?.size ?? 0;
  }

  forget(user: string): number {
    const ids = [...(this.byUser.get(user) ?? [])];
    for (const id of ids) this.remove(id);
    return ids.length;
  }

  /** Removes the expired sessions; returns how many. */
  sweep(): number {
    let removed = 0;
    for (const [id, s] of this.sessions) {
      if (!this.expired(s)) continue;
      this.remove(id);
      removed++;
    }
    if (this.sessions.size === 0) {
      this.stopSweeping?.();
      this.stopSweeping = undefined;
    }
    return removed;
  }

  private expired(s: Session): boolean {
    return this.now() - s.at > SESSION_TTL_MS;
  }

  private remove(id: string): void {
    const s = this.sessions.get(id);
    if (!s) return;
    this.sessions.delete(id);
    const ids = this.byUser.get(s.user)!;
    ids.delete(id);
    if (ids.size === 0) this.byUser.delete(s.user);
  }
}
