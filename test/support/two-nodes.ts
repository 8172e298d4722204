// Two corpus nodes on one PostgreSQL (D33, issue 37): a fresh database of the test PostgreSQL
// (pgvector created by the admin, owned by a role that is no superuser), one master key file, and
// two real `corpus serve` processes (the source entry, on ports the OS gives), each with its own
// data folder; the second node's folder gets the first's token signing key, as README "Running
// several nodes" tells an operator to copy it. Nodes are stopped, killed and restarted by their PID.
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Corpus, cli, FIXED_ISSUER, startCorpus } from "../backup/support";
import { tempDir } from "../helpers";
import { type VectorDatabase, vectorDatabase } from "./pg-vectors";

/** How long a node's SIGTERM may take before it is killed: its stop drains requests and closes the pool. */
const STOP_DEADLINE_MS = 20_000;

export interface CorpusNode {
  readonly name: string;
  /** The node's environment: the shared database and key, its own data folder. */
  readonly env: Record<string, string>;
  /** The running process; undefined while stopped. */
  server(): Corpus;
  url(): string;
  /** The log records of level ERROR or worse this node wrote, every run of it so far (what a failed expectation shows). */
  errors(): Array<Record<string, unknown>>;
  /** SIGKILL by its PID, awaited: no shutdown of any kind. */
  kill9(): Promise<void>;
  /** SIGTERM by its PID, awaited. */
  stop(): Promise<void>;
  /** Started again on the same data folder (a new port). */
  start(): Promise<void>;
}

export interface TwoNodes {
  db: VectorDatabase;
  /** The folder holding both data folders, the key file and whatever a test puts beside them. */
  root: string;
  /** The folder under which `user` may add local connectors on either node (CORPUS_CONNECTOR_ROOTS). */
  folderOf(user: string): string;
  a: CorpusNode;
  b: CorpusNode;
  /** A token for `user` made by `corpus token create` on node A's environment (valid on both). */
  token(user: string, scopes?: string): Promise<string>;
  /** Both nodes stopped (killed if a stop hangs), the database dropped. */
  close(): Promise<void>;
}

export const NODE_SCOPES = "corpus:search,corpus:read,connectors:read,connectors:write";

/**
 * `env`: what both nodes get beside the shared database, key and issuer (limits, roots …);
 * `adminUrl`: a superuser's URL of another PostgreSQL (a bench's), `root` the folder to work in.
 */
export async function twoNodes(env: Record<string, string> = {}, options: { adminUrl?: string; root?: string } = {}): Promise<TwoNodes> {
  const db = await vectorDatabase(options.adminUrl);
  const root = options.root ?? tempDir("corpus-nodes-");
  const keyFile = join(root, "master.key");
  writeFileSync(keyFile, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
  const node = (name: string): CorpusNode => {
    const dataDir = join(root, name, "data");
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const nodeEnv = {
      ...FIXED_ISSUER,
      CORPUS_DATABASE_URL: db.url,
      CORPUS_MASTER_KEY_FILE: keyFile,
      CORPUS_DATA_DIR: dataDir,
      // Users' folders, the same path on both nodes (as a shared mount would give them).
      CORPUS_CONNECTOR_ROOTS: join(root, "users", "{user}"),
      CORPUS_LOG_LEVEL: "INFO",
      ...env,
    };
    let server: Corpus | undefined;
    const runs: Corpus[] = [];
    return {
      name,
      env: nodeEnv,
      server: () => {
        if (!server) throw new Error(`node ${name} is not running`);
        return server;
      },
      url: () => {
        if (!server) throw new Error(`node ${name} is not running`);
        return server.url;
      },
      errors: () => runs.flatMap((r) => r.lines.filter((l) => l.level === "ERROR" || l.level === "CRITICAL" || "raw" in l)),
      async kill9() {
        if (!server) return;
        process.kill(server.proc.pid, "SIGKILL");
        await server.proc.exited;
        server = undefined;
      },
      async stop() {
        if (!server) return;
        const stopping = server;
        server = undefined;
        // A deadline, not a wait: cleared as soon as the node exits; only a hung node meets it (and is killed).
        let deadline: ReturnType<typeof setTimeout> | undefined;
        const hung = new Promise<"hung">((resolve) => {
          deadline = setTimeout(resolve, STOP_DEADLINE_MS, "hung");
        });
        const code = await Promise.race([stopping.stop(), hung]);
        clearTimeout(deadline);
        if (code === "hung") {
          process.kill(stopping.proc.pid, "SIGKILL");
          await stopping.proc.exited;
        }
      },
      async start() {
        if (server) throw new Error(`node ${name} is running`);
        server = await startCorpus(nodeEnv);
        runs.push(server);
      },
    };
  };
  const a = node("a");
  const b = node("b");
  try {
    await a.start();
    // One signing key for every node, kept in the shared database: nothing copied (D33).
    await b.start();
  } catch (error) {
    await a.stop();
    await db.drop();
    throw error;
  }
  return {
    db,
    root,
    folderOf: (user) => join(root, "users", user),
    a,
    b,
    async token(user, scopes = NODE_SCOPES) {
      const made = await cli(["token", "create", "--user", user, "--scopes", scopes], a.env);
      if (made.code !== 0) throw new Error(`token create failed: ${made.stderr}`);
      return made.stdout.trim();
    },
    async close() {
      await Promise.all([a.stop(), b.stop()]);
      await db.drop();
    },
  };
}

/** `route` of `node` with `token`, a JSON body when given. */
export function call(node: CorpusNode, token: string, method: string, route: string, body?: unknown): Promise<Response> {
  return fetch(`${node.url()}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}
