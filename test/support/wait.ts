// Waiting on a condition, for what no injected clock or awaitable reaches: real child
// processes, sockets, other servers (polled every 50 ms: never a longer sleep, not so often that
// the polling itself loads a server under test), or another thread's progress in this process
// (`soon`: every 2 ms). Fails with what it waited for.

export const POLL_MS = 50;

/** Tries `attempt` until it gives a value other than undefined, or throws once `deadlineMs` has passed. */
export async function until<T>(
  what: string,
  attempt: () => T | undefined | Promise<T | undefined>,
  deadlineMs = 60_000,
  pollMs = POLL_MS,
): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = await attempt();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(pollMs);
  }
}

/** Resolves once `ready()` holds: in-process progress (the embedding worker's messages, a queue), polled every 2 ms. */
export async function soon(what: string, ready: () => boolean, deadlineMs = 60_000): Promise<void> {
  await until(what, () => (ready() ? true : undefined), deadlineMs, 2);
}
