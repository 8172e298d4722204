// MCP sessions are swept on a timer and capped (issue 13 item 11): they were only checked when
// met, so a client opening sessions and never returning grew the map forever. (The embedded
// store's timer and cap here; what both stores do, in sessions-stores.test.ts.)
import { describe, expect, test } from "bun:test";
import {
  everyUnref,
  MAX_SESSIONS,
  MAX_SESSIONS_PER_USER,
  McpSessions,
  type Schedule,
  SESSION_TTL_MS,
  SWEEP_EVERY_MS,
} from "../../src/mcp/sessions";

/** A scheduler the test drives: it records the job instead of starting a timer. */
function manualSchedule() {
  const s = { job: undefined as (() => void) | undefined, every: 0, starts: 0, stops: 0 };
  const schedule: Schedule = (fn, ms) => {
    s.job = fn;
    s.every = ms;
    s.starts++;
    return () => {
      s.job = undefined;
      s.stops++;
    };
  };
  return { s, schedule };
}

describe("MCP sessions", () => {
  test("a timer sweeps the sessions nobody came back to; it runs only while there are sessions", () => {
    let t = 0;
    const { s, schedule } = manualSchedule();
    const sessions = new McpSessions(() => t, schedule);
    for (let i = 0; i < 50; i++) sessions.open(`user${i}`, "2025-06-18");
    expect(s.starts).toBe(1);
    expect(s.every).toBe(SWEEP_EVERY_MS);
    const kept = sessions.open("alice", "2025-06-18")!;
    t += SESSION_TTL_MS / 2;
    expect(sessions.use(kept, "alice")).toBeDefined();
    t += SESSION_TTL_MS / 2 + 1;
    s.job!();
    // Only the session used since survives the sweep.
    expect(sessions.size).toBe(1);
    t += SESSION_TTL_MS + 1;
    s.job!();
    expect(sessions.size).toBe(0);
    expect(s.stops).toBe(1);
    expect(s.job).toBeUndefined();
    sessions.open("alice", "2025-06-18");
    expect(s.starts).toBe(2);
  });

  test("the default timer does not hold the process open", () => {
    const real = globalThis.setInterval;
    let timer: ReturnType<typeof setInterval> | undefined;
    globalThis.setInterval = ((fn: () => void, ms: number) => (timer = real(fn, ms))) as typeof setInterval;
    try {
      const stop = everyUnref(() => {}, SWEEP_EVERY_MS);
      expect(timer!.hasRef()).toBe(false);
      stop();
    } finally {
      globalThis.setInterval = real;
    }
  });

  test("past MAX_SESSIONS no new one is opened (the client goes on without), unless expired ones make room", () => {
    let t = 0;
    const sessions = new McpSessions(() => t, manualSchedule().schedule);
    for (let i = 0; sessions.size < MAX_SESSIONS; i++) sessions.open(`u${Math.floor(i / MAX_SESSIONS_PER_USER)}`, "1.0");
    expect(sessions.open("late", "1.0")).toBeUndefined();
    expect(sessions.size).toBe(MAX_SESSIONS);
    t += SESSION_TTL_MS + 1;
    expect(sessions.open("late", "1.0")).toBeDefined();
    expect(sessions.size).toBe(1);
  });
});
