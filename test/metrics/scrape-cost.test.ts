// What a /metrics scrape costs with many users (D35): the connectors' states ask every live
// local index for its health (counts over its tables, on the serving thread), so a scrape reads
// them at most once per STATES_TTL_MS, concurrent scrapes share one read, and a change to the set
// of connectors (one added, one removed) makes the next scrape read afresh. Counted: health()
// calls of real files connectors, many users, scrapes on Prometheus's usual 15 s cadence (an
// injected clock).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Connector } from "../../src/connectors/types";
import { STATES_TTL_MS } from "../../src/metrics/connector-states";
import type { Metrics } from "../../src/metrics/metrics";
import { operatorMetrics } from "../../src/server";
import { connectorsSettled, tempDir, testApp } from "../helpers";

setDefaultTimeout(180_000);

const USERS = 40;
const SCRAPE_INTERVAL_MS = 15_000;

const clock = { now: Date.parse("2026-11-28T12:00:00Z") };
const roots = tempDir("corpus-scrape-cost-");
let t: Awaited<ReturnType<typeof testApp>>;
let metrics: Metrics;
let healthCalls = 0;

/** Counts every health() call of the live connector; its answer is the connector's own. */
function counted(connector: Connector): void {
  const health = connector.health.bind(connector);
  connector.health = () => {
    healthCalls++;
    return health();
  };
}

async function addFolder(user: string): Promise<void> {
  mkdirSync(join(roots, user), { recursive: true });
  writeFileSync(join(roots, user, "note.txt"), `Invoice of ${user}: 120 EUR for the harbour crane inspection.`);
  await t.services.connectors.add(user, { id: "notes", kind: "files", config: { path: join(roots, user) } });
  await connectorsSettled(t.services, user);
  for (const { connector } of await t.services.connectors.active(user)) counted(connector);
}

const seriesValue = (text: string, series: string) => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

/** One scrape at the clock's time: its text, and the health() calls it made. */
async function scrape(): Promise<{ text: string; calls: number }> {
  const before = healthCalls;
  const { body } = await metrics.scrape();
  return { text: body, calls: healthCalls - before };
}

beforeAll(async () => {
  t = await testApp({ CORPUS_CONNECTOR_ROOTS: join(roots, "{user}") }, () => clock.now);
  for (let i = 0; i < USERS; i++) await addFolder(`user${i}`);
  metrics = await operatorMetrics(t.services);
});
afterAll(() => t?.services.close());

describe("a scrape with many users", () => {
  test("reads the connectors' states once per TTL: the scrapes between ask no connector", async () => {
    const first = await scrape();
    expect(first.calls).toBe(USERS);
    expect(seriesValue(first.text, 'corpus_connector_states{kind="files",state="ok"}')).toBe(USERS);
    const calls: number[] = [];
    const scrapes = (2 * STATES_TTL_MS) / SCRAPE_INTERVAL_MS;
    for (let i = 0; i < scrapes; i++) {
      clock.now += SCRAPE_INTERVAL_MS;
      const s = await scrape();
      calls.push(s.calls);
      expect(seriesValue(s.text, 'corpus_connector_states{kind="files",state="ok"}')).toBe(USERS);
    }
    // Over two TTLs of scrapes every 15 s: two reads, each one health() per connector.
    expect(calls.filter((n) => n > 0)).toEqual([USERS, USERS]);
    expect(calls.reduce((a, b) => a + b, 0)).toBe(2 * USERS);
  });

  test("concurrent scrapes (two Prometheus servers) share one read", async () => {
    clock.now += STATES_TTL_MS;
    const before = healthCalls;
    const texts = await Promise.all([metrics.scrape(), metrics.scrape(), metrics.scrape()]);
    expect(healthCalls - before).toBe(USERS);
    for (const { body } of texts) expect(seriesValue(body, 'corpus_connector_states{kind="files",state="ok"}')).toBe(USERS);
  });

  test("a connector added or removed is counted at the next scrape, within the TTL", async () => {
    clock.now += STATES_TTL_MS;
    expect((await scrape()).calls).toBe(USERS);
    clock.now += 1000;
    await addFolder("newcomer");
    const added = await scrape();
    expect(added.calls).toBe(USERS + 1);
    expect(seriesValue(added.text, 'corpus_connector_states{kind="files",state="ok"}')).toBe(USERS + 1);
    expect(seriesValue(added.text, 'corpus_connectors{kind="files"}')).toBe(USERS + 1);
    clock.now += 1000;
    expect((await scrape()).calls).toBe(0);
    await t.services.connectors.remove("user0", "notes");
    const removed = await scrape();
    expect(removed.calls).toBe(USERS);
    expect(seriesValue(removed.text, 'corpus_connector_states{kind="files",state="ok"}')).toBe(USERS);
  });
});
