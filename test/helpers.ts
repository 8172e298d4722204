import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../src/app";
import { type Config, effectiveLogLevel, loadConfig } from "../src/config";
import { createLogger, memorySink } from "../src/log";
import { createServices } from "../src/services";
import { migratedDataDir } from "./support/migrated";

export const tempDir = (prefix = "corpus-test-") => mkdtempSync(join(tmpdir(), prefix));

/** A small storage reserve (D29): the default's 64 MiB file in every test's data dir would cost more than it tests. */
export const TEST_MIN_FREE_BYTES = "1048576";

/** A fresh data dir (its database migrated as a first start would, test/support/migrated.ts) unless `env` names one. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ CORPUS_DATA_DIR: env.CORPUS_DATA_DIR ?? migratedDataDir(), CORPUS_MIN_FREE_BYTES: TEST_MIN_FREE_BYTES, ...env });
}

/** The whole app in-process, on a fresh data dir (or `dataDir`), with logs captured. */
export async function testApp(env: Record<string, string> = {}, now?: () => number) {
  const config = testConfig(env);
  const logs = memorySink();
  const log = createLogger(effectiveLogLevel(config), logs.sink);
  const services = await createServices(config, log, now);
  const app = createApp(services);
  return { app, config, services, db: services.db, logs, log };
}

/** A token of this server's for `user` with `scopes`. */
export async function tokenFor(
  services: { auth: { issuer: { issue(u: string, s: any[], ttl?: number): Promise<{ token: string }> } } },
  user: string,
  scopes: string[],
  ttl?: number,
) {
  return (await services.auth.issuer.issue(user, scopes, ttl)).token;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

export const BASE = "http://localhost";

export function req(path: string, init: RequestInit = {}): Request {
  return new Request(`${BASE}${path}`, init);
}

/** A request with a JSON body (a string is sent as it is). */
export function jsonRequest(method: "POST" | "PATCH", path: string, body: unknown, headers: Record<string, string> = {}): Request {
  return req(path, {
    method,
    body: typeof body === "string" ? body : JSON.stringify(body),
    headers: { "content-type": "application/json", ...headers },
  });
}

export const postJson = (path: string, body: unknown, headers: Record<string, string> = {}) => jsonRequest("POST", path, body, headers);
export const patchJson = (path: string, body: unknown, headers: Record<string, string> = {}) => jsonRequest("PATCH", path, body, headers);

/** Runs the CLI source in a child process. */
export function runCli(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawnSync([process.execPath, join(import.meta.dir, "../src/cli.ts"), ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: proc.exitCode, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
}

/**
 * Awaits every local connector of `user` (folders, mail folders) until read and embedded, and the
 * live sources' newest records embedded ahead: the awaitables the connectors give, instead of
 * polling their status on a clock.
 */
export async function connectorsSettled(
  services: { connectors: { active(user: string): Promise<Array<{ connector: object }>>; embeddedAhead(): Promise<void> } },
  user: string,
): Promise<void> {
  for (const { connector } of await services.connectors.active(user)) {
    const local = connector as { sync?: () => Promise<void>; embedPending?: () => Promise<void> };
    if (local.sync) await local.sync();
    if (local.embedPending) await local.embedPending();
  }
  await services.connectors.embeddedAhead();
}
