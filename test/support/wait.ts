// Waiting on a condition, for what no injected clock or awaitable reaches: real child
// processes, sockets, other servers. Polls every 50 ms (never a longer sleep; not so often that
// the polling itself loads a server under test), fails with what it waited for.

export const POLL_MS = 50;

/** Tries `attempt` until it gives a value other than undefined, or throws once `deadlineMs` has passed. */
export async function until<T>(what: string, attempt: () => T | undefined | Promise<T | undefined>, deadlineMs = 60_000): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = await attempt();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(POLL_MS);
  }
}
