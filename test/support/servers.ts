// The real servers of the connector tests (scripts/test-servers.sh): used as they are when
// a developer or scripts/test.ts started them; otherwise started here, once, and
// stopped by PID when the test process exits.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface TestServers {
  imap: { host: string; port: number; user: string; password: string; maildir: string };
  pgUrl: string;
  pgAdminUrl: string;
  /** MariaDB: the connector's user, who may only SELECT, and the one that builds tables. */
  mysqlUrl: string;
  mysqlAdminUrl: string;
  /** MariaDB's unix socket, where a client misled by its environment would go instead. */
  mysqlSocket: string;
}

const root = join(import.meta.dir, "../..");
/** Where the servers' state and env file are: read when asked (scripts/test.ts may point it at its run's folder). */
const state = () => process.env.CORPUS_TEST_STATE ?? "/tmp/corpus-test-servers";
let started: Promise<TestServers> | undefined;

function readEnv(): Record<string, string> | undefined {
  const file = join(state(), "env");
  if (!existsSync(file)) return undefined;
  const env = Object.fromEntries(
    readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.includes("="))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
  const alive = (pid?: string) => {
    try {
      return !!pid && process.kill(Number(pid), 0);
    } catch {
      return false;
    }
  };
  return alive(env.CORPUS_TEST_DOVECOT_PID) && alive(env.CORPUS_TEST_PG_PID) && alive(env.CORPUS_TEST_MARIADB_PID) ? env : undefined;
}

const SCRIPT = join(root, "scripts/test-servers.sh");
// The Bun running the tests loads MariaDB's Chinook (test/support/chinook-mysql.ts).
const scriptEnv = () => ({ ...process.env, CORPUS_TEST_STATE: state(), CORPUS_TEST_BUN: process.execPath });

/** The servers of $CORPUS_TEST_STATE are up (started by a developer, or another run). */
export const serversRunning = () => readEnv() !== undefined;

/** Starts the servers (scripts/test-servers.sh start), its output in a log under TMPDIR; throws, naming the log, if they do not come up. */
export async function startServers(): Promise<void> {
  const log = join(process.env.TMPDIR ?? "/tmp", `corpus-test-servers-${process.pid}.log`);
  const run = Bun.spawn(["bash", "-c", `bash "$0" start >"$1" 2>&1`, SCRIPT, log], {
    stdio: ["ignore", "ignore", "ignore"],
    env: scriptEnv(),
  });
  if ((await run.exited) !== 0) throw new Error(`test servers did not start; see ${log}`);
  if (!serversRunning()) throw new Error("test servers started but are not running");
}

/** Stops the servers by PID (scripts/test-servers.sh stop). */
export function stopServers(): void {
  Bun.spawnSync(["bash", SCRIPT, "stop"], { stdio: ["ignore", "ignore", "ignore"], env: scriptEnv() });
}

export function testServers(): Promise<TestServers> {
  if (process.env.CORPUS_TEST_SUITE === "unit")
    return Promise.reject(new Error("the test servers in the unit suite: this test belongs to the integration suite (scripts/test.ts)"));
  started ??= (async () => {
    if (!serversRunning()) {
      await startServers();
      // Stopped by PID once this test process is gone, however it ends: in a session of its own,
      // so the Ctrl-C that stops the tests does not stop it first.
      Bun.spawn(["bash", "-c", `while kill -0 ${process.pid} 2>/dev/null; do sleep 0.5; done; bash "$0" stop`, SCRIPT], {
        stdio: ["ignore", "ignore", "ignore"],
        env: scriptEnv(),
        detached: true,
      }).unref();
    }
    const env = readEnv();
    if (!env) throw new Error("test servers are not running");
    return {
      imap: {
        host: env.CORPUS_TEST_IMAP_HOST!,
        port: Number(env.CORPUS_TEST_IMAP_PORT),
        user: env.CORPUS_TEST_IMAP_USER!,
        password: env.CORPUS_TEST_IMAP_PASSWORD!,
        maildir: env.CORPUS_TEST_IMAP_MAILDIR!,
      },
      pgUrl: env.CORPUS_TEST_PG_URL!,
      pgAdminUrl: env.CORPUS_TEST_PG_ADMIN_URL!,
      mysqlUrl: env.CORPUS_TEST_MYSQL_URL!,
      mysqlAdminUrl: env.CORPUS_TEST_MYSQL_ADMIN_URL!,
      mysqlSocket: env.CORPUS_TEST_MYSQL_SOCKET!,
    };
  })();
  return started;
}

export const SHARED_DATA = join(root, "../shared/data");
