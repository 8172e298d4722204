// For a test file whose tests each make an app: the app of each test is closed after it, whether
// the test passed or not (its worker, its database), so the next test starts clean.
import { afterEach, expect } from "bun:test";
import type { ConnectorViewT } from "../../src/connectors/model";
import { bearer, req, testApp } from "../helpers";

export type App = Awaited<ReturnType<typeof testApp>>;

/** Returns `testApp`, each app it makes closed after the test that made it. */
export function appPerTest(): (env?: Record<string, string>, now?: () => number) => Promise<App> {
  const open: App[] = [];
  afterEach(async () => {
    for (const app of open.splice(0)) await app.services.close();
  });
  return async (env = {}, now) => {
    const app = await testApp(env, now);
    open.push(app);
    return app;
  };
}

/** Connector `id` as `token`'s GET /v1/connectors lists it. */
export async function listedConnector(t: App, token: string, id: string): Promise<ConnectorViewT> {
  const res = await t.app.handle(req("/v1/connectors", { headers: bearer(token) }));
  expect(res.status).toBe(200);
  return ((await res.json()) as { connectors: ConnectorViewT[] }).connectors.find((c) => c.id === id)!;
}
