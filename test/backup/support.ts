// Real corpus processes for the backup tests: `corpus serve` on a port the OS picks (its URL read
// from the "listening" log line), and the CLI run asynchronously so a test can work meanwhile.

import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Subprocess } from "bun";

export const CLI = join(import.meta.dir, "../../src/cli.ts");

/** Tokens name the server (issuer and audience): fixed here, so that a server on another port, restored, accepts them. */
export const FIXED_ISSUER = { CORPUS_OAUTH_ISSUER: "http://corpus.test", CORPUS_OAUTH_RESOURCE_URL: "http://corpus.test" };

export const newMasterKey = () => randomBytes(32).toString("base64");

/** Calls `base`'s routes with a bearer token, a JSON body when given. */
export const callerWith =
  (base: string, token: string) =>
  (method: string, route: string, body?: unknown): Promise<Response> =>
    fetch(`${base}${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });

/** A server's environment under `root`: its data folder, a fresh master key, users' folders at root/<user> (CORPUS_CONNECTOR_ROOTS). */
export const userFoldersEnv = (root: string) => ({
  ...FIXED_ISSUER,
  HOME: root,
  CORPUS_DATA_DIR: join(root, "data"),
  CORPUS_MASTER_KEY: newMasterKey(),
  CORPUS_CONNECTOR_ROOTS: join(root, "{user}"),
});

export function baseEnv(env: Record<string, string>): Record<string, string> {
  // A small storage reserve (D29) rather than the default's 64 MiB file in each data folder.
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", CORPUS_MIN_FREE_BYTES: "1048576", ...env };
}

export interface Corpus {
  url: string;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** Log lines so far (JSON). */
  lines: Array<Record<string, unknown>>;
  stop(): Promise<number>;
}

/**
 * `corpus serve` in a child process on a port the OS picks (behind `prefix`, e.g. strace, when
 * given; `command` is the built executable where it is tested); resolves once it listens.
 */
export async function startCorpus(
  env: Record<string, string>,
  prefix: string[] = [],
  { command = [process.execPath, CLI], cwd }: { command?: string[]; cwd?: string } = {},
): Promise<Corpus> {
  const proc = Bun.spawn([...prefix, ...command, "serve"], {
    cwd,
    env: baseEnv({ CORPUS_PORT: "0", ...env }),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const lines: Array<Record<string, unknown>> = [];
  const { promise: url, resolve: listening } = Promise.withResolvers<string>();
  // Read the log to the end, so the pipe never fills, and catch the listening line on the way.
  const reading = (async () => {
    const decoder = new TextDecoder();
    let rest = "";
    const reader = proc.stdout.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      rest += decoder.decode(read.value, { stream: true });
      let nl: number;
      while ((nl = rest.indexOf("\n")) >= 0) {
        const line = rest.slice(0, nl);
        rest = rest.slice(nl + 1);
        try {
          const record = JSON.parse(line) as Record<string, unknown>;
          lines.push(record);
          if (record.message === "listening") listening(record.url as string);
        } catch {
          lines.push({ raw: line });
        }
      }
    }
  })();
  const exited = proc.exited.then((code) => ({ code }));
  const started = await Promise.race([url, exited]);
  if (typeof started !== "string")
    throw new Error(`corpus serve exited with ${started.code} before listening: ${await new Response(proc.stderr).text()}`);
  return {
    url: started,
    proc,
    lines,
    /** SIGTERM; resolves with the exit code once the log is read to its last line. */
    async stop() {
      proc.kill("SIGTERM");
      const code = await proc.exited;
      await reading;
      return code;
    },
  };
}

/** The CLI in a child process, awaited (the test's event loop goes on meanwhile). */
export async function cli(args: string[], env: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, CLI, ...args], { env: baseEnv(env), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, stdout, stderr };
}

export { until } from "../support/wait";
