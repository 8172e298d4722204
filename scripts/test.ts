// The test suites (issue 15 item 6):
//   bun scripts/test.ts all           every file (`npm test`)
//   bun scripts/test.ts unit          no test servers, no model, no child process: seconds
//   bun scripts/test.ts integration   the rest: Dovecot and PostgreSQL, the model, real processes, Chromium,
//                                     many argon2id password hashes (19 MiB each: console/routes, oauth/sign-in, oauth/server),
//                                     corpus bundled whole (scripts/notices), and the tests whose proof needs
//                                     size (growth judged by CPU time, recall over thousands of vectors, tokenizer parity,
//                                     megabytes of text blinded or cut)
// Files run in parallel, one Bun process per core (at most TEST_WORKERS), each keeping one global
// across the files it runs, as a serial run does (--no-isolate: onnxruntime's native addon
// aborts the process when a file's fresh global loads it again). The run's temporary files go
// under one folder made here and removed when the run ends (test/support/temp-root.ts); the test
// servers are started here when they are not running, and then stopped when the run ends, by
// its end, a failure or a signal. Before an integration test runs, what they need of the machine
// is brought (scripts/test-needs.ts): `npm test` on a fresh Debian machine, as root, installs it.
// A test file is a unit test unless it is named below. The unit suite preloads
// test/support/unit-guard.ts, which makes a child process, a worker (the model), the model or
// the test servers throw at once: a test that needs one fails there, saying it belongs here.

import { existsSync } from "node:fs";
import { availableParallelism, constants } from "node:os";
import { join } from "node:path";
import { Glob, type Subprocess } from "bun";
import { makeRunRoot, removeRunRoot } from "../test/support/run-root";
import { serversRunning, startServers, stopServers } from "../test/support/servers";
import { freePort } from "../test/support/tcp";

/**
 * Test processes at most, one per core: two on this two-core machine take the whole suite from
 * 159-171 s to 98-105 s (three: no faster, and a test timing a turn of the event loop failed);
 * each loads the model, so not more than four however many cores.
 */
const TEST_WORKERS = 4;

const INTEGRATION = [
  "accounts/account-stores.test.ts",
  "accounts/cli.test.ts",
  "archive/archive-index.test.ts",
  "archive/archive-stores.test.ts",
  "archive/pending-after-deletion.test.ts",
  "archive/resume-after-deletion.test.ts",
  "archive/concurrent-archive-writes.test.ts",
  "auth/guard-round-trips.test.ts",
  "auth/signing-key-shared.test.ts",
  "auth/token-stores.test.ts",
  "backup/online.test.ts",
  "backup/refusals.test.ts",
  "cli.test.ts",
  "connectors/blind-in-turns.test.ts",
  "connectors/books/answer.test.ts",
  "connectors/books/books.test.ts",
  "connectors/books/gnucash-sqlite-connector.test.ts",
  "connectors/books/oracle.test.ts",
  "connectors/books/parse-bomb.test.ts",
  "connectors/chunked-where-read.test.ts",
  "connectors/crash-embedding.test.ts",
  "connectors/embed-ahead-after-removal.test.ts",
  "connectors/embed-ahead-chunked.test.ts",
  "connectors/embed-ahead-memory.test.ts",
  "connectors/embed-ahead-operator-activity.test.ts",
  "connectors/embed-ahead-refresh-stall.test.ts",
  "connectors/embed-ahead-repoint-same-rows.test.ts",
  "connectors/embed-ahead-shop.test.ts",
  "connectors/embed-ahead-status.test.ts",
  "connectors/embed-ahead-undated-postgres.test.ts",
  "connectors/embedding-after-deletion.test.ts",
  "connectors/file-bounds.test.ts",
  "connectors/files.test.ts",
  "connectors/hostile-sources.test.ts",
  "connectors/imap-fairness.test.ts",
  "connectors/imap-hostile.test.ts",
  "connectors/imap-ids.test.ts",
  "connectors/imap-oauth-operator.test.ts",
  "connectors/imap-oauth.test.ts",
  "connectors/imap.test.ts",
  "connectors/index-lease-stores.test.ts",
  "connectors/index-terms-memory.test.ts",
  "connectors/local-index-stores.test.ts",
  "connectors/local-index-shared-serve.test.ts",
  "connectors/local-index-held-vectors.test.ts",
  "connectors/local-index-search-worker.test.ts",
  "connectors/maildir.test.ts",
  "connectors/oauth/grants.test.ts",
  "connectors/owner-key-background.test.ts",
  "connectors/office-files.test.ts",
  "connectors/opened-records-bound.test.ts",
  "connectors/paths.test.ts",
  "connectors/read-memory.test.ts",
  "connectors/read-only.test.ts",
  "connectors/sql-off-thread.test.ts",
  "connectors/reading.test.ts",
  "connectors/remote-hosts.test.ts",
  "connectors/routes.test.ts",
  "connectors/rows-stores.test.ts",
  "connectors/source-urls.test.ts",
  "connectors/sql-bounds.test.ts",
  "connectors/sql-edge-dates.test.ts",
  "connectors/sql-fold-letters.test.ts",
  "connectors/sql-hostile.test.ts",
  "connectors/sql-most-undated.test.ts",
  "connectors/sql-mysql.test.ts",
  "connectors/sql-postgres-date-index.test.ts",
  "connectors/sql-postgres-two-reads.test.ts",
  "connectors/sql-server-cells.test.ts",
  "connectors/sql.test.ts",
  "connectors/sql-whole-words-turns.test.ts",
  "connectors/staged-put-crash.test.ts",
  "connectors/status.test.ts",
  "connectors/terms-format.test.ts",
  "connectors/update.test.ts",
  "console/backup-pruning.test.ts",
  "console/browser.test.ts",
  "console/routes.test.ts",
  "conversations/store-stores.test.ts",
  "crash.test.ts",
  "crypto/master-key.test.ts",
  "crypto/user-keys-entry-paths.test.ts",
  "crypto/user-keys-stores.test.ts",
  "documents/citation-links.test.ts",
  "documents/page-browser.test.ts",
  "embedding/embedder.test.ts",
  "embedding/idle-collection.test.ts",
  "embedding/model-change.test.ts",
  "embedding/nonblocking.test.ts",
  "embedding/question-collections.test.ts",
  "embedding/service.test.ts",
  "embedding/tokenizer.test.ts",
  "executable.test.ts",
  "fuzz.test.ts",
  "http/cors.test.ts",
  "http/timeout-abandoned.test.ts",
  "http/tls.test.ts",
  "jobs/guard.test.ts",
  "jobs/leases-stores.test.ts",
  "limits/idempotency-stores.test.ts",
  "limits/memory-threads.test.ts",
  "limits/rate-limit-stores.test.ts",
  "limits/token-bucket-stores.test.ts",
  "mcp/clients.test.ts",
  "migrate/migrate.test.ts",
  "mcp/corpus-answer.test.ts",
  "mcp/conformance.test.ts",
  "mcp/jsonrpc.test.ts",
  "mcp/openai-shapes.test.ts",
  "mcp/panel-token.test.ts",
  "mcp/search-fetch.test.ts",
  "mcp/sdk.test.ts",
  "mcp/sessions-stores.test.ts",
  "mcp/widget-grant.test.ts",
  "mcp/widget.test.ts",
  "metrics/metrics.test.ts",
  "metrics/prometheus.test.ts",
  "metrics/scrape-cost.test.ts",
  "native/materialize.test.ts",
  "nodes/kill-node.test.ts",
  "nodes/revoked-between.test.ts",
  "nodes/shared-state.test.ts",
  "net/post.test.ts",
  "oauth/conformance.test.ts",
  "oauth/flow.test.ts",
  "oauth/inspector-cli.test.ts",
  "oauth/metadata-document-flow.test.ts",
  "oauth/metadata-document.test.ts",
  "oauth/server.test.ts",
  "oauth/sign-in.test.ts",
  "oauth/store-stores.test.ts",
  "oauth/throttle-bound.test.ts",
  "oauth/throttle-shared.test.ts",
  "oauth/upstream-flow.test.ts",
  "openapi/complete.test.ts",
  "owed-work-stores.test.ts",
  "questions/ask.test.ts",
  "rest/operator-ahead-evicted.test.ts",
  "rest/operator-rows-cross-user.test.ts",
  "rest/query-hostile.test.ts",
  "rest/query-snippets.test.ts",
  "rest/model-unavailable.test.ts",
  "rest/query.test.ts",
  "rest/replay.test.ts",
  "rest/shapes.test.ts",
  "retrieval/answer-lines-growth.test.ts",
  "retrieval/asked/asked-live.test.ts",
  "retrieval/business-questions.test.ts",
  "retrieval/control-characters.test.ts",
  "retrieval/chunk-cache.test.ts",
  "retrieval/cite-stored-chunks.test.ts",
  "retrieval/debug-log.test.ts",
  "retrieval/row-vectors.test.ts",
  "scripts/build-model.test.ts",
  "scripts/eval/answers-books-labels.test.ts",
  "scripts/install-scripts.test.ts",
  "scripts/notices.test.ts",
  "scripts/oci.test.ts",
  "scripts/release.test.ts",
  "server-addresses.test.ts",
  "server.test.ts",
  "store/at-rest.test.ts",
  "store/data-dir.test.ts",
  "store/full-disk-executable.test.ts",
  "store/postgres-migrations.test.ts",
  "store/full-disk.test.ts",
  "store/operator-key-full-disk.test.ts",
  "store/storage-errors.test.ts",
  "store/transaction-retry.test.ts",
  "support/growth.test.ts",
  "users/deletion-race.test.ts",
  "users/deletion-shared.test.ts",
  "users/deletion-at-rest-shared.test.ts",
  "users/deletion.test.ts",
  "vectors/hnsw-executable.test.ts",
  "vectors/hnsw.test.ts",
  "vectors/partition-index.test.ts",
  "vectors/store.test.ts",
  "webhooks/webhooks-stores.test.ts",
];

const root = join(import.meta.dir, "..");
const suite = process.argv[2];
if (suite !== "all" && suite !== "unit" && suite !== "integration") {
  console.error("usage: bun scripts/test.ts all|unit|integration [bun test options]");
  process.exit(2);
}
const all = [...new Glob("**/*.test.ts").scanSync(join(root, "test"))].sort();
const unknown = INTEGRATION.filter((f) => !all.includes(f));
if (unknown.length) {
  console.error(`scripts/test.ts names test files that do not exist: ${unknown.join(", ")}`);
  process.exit(2);
}
// Files named after the suite (`npm test -- test/x.test.ts`) are run alone; other arguments go to bun test.
const named = process.argv.slice(3).filter((a) => !a.startsWith("-") && existsSync(join(root, a)));
const options = process.argv.slice(3).filter((a) => !named.includes(a));
const files = named.length
  ? named.map((f) => (f.startsWith("/") || f.startsWith("./") ? f : `./${f}`))
  : all.filter((f) => suite === "all" || INTEGRATION.includes(f) === (suite === "integration")).map((f) => `./test/${f}`);
// A test's timeout bounds a hang, never its speed: bun's 5 s default failed unit tests beside a
// load of 12 on the two cores (issue 35 item 9).
const suiteOptions = suite === "unit" ? ["--preload", "./test/support/unit-guard.ts", "--timeout", "30000"] : ["--timeout", "60000"];
const workers = Math.min(availableParallelism(), TEST_WORKERS);

const runRoot = makeRunRoot();
// os.tmpdir() reads TMPDIR on each call; the test processes, the servers and their logs go here.
process.env.TMPDIR = runRoot;
process.env.CORPUS_TEST_RUN_ROOT = runRoot;

// Ctrl-C, a closed terminal or a CI timeout: the tests stop, then the servers this run started
// and the run's files go (the exit status says which signal: 128 + its number).
let run: Subprocess | undefined;
let stoppedBy: "SIGHUP" | "SIGINT" | "SIGTERM" | undefined;
for (const signal of ["SIGHUP", "SIGINT", "SIGTERM"] as const)
  process.on(signal, () => {
    stoppedBy ??= signal;
    run?.kill(signal);
  });

const started = performance.now();
let startedServers = false;
let code = 1;
try {
  // What the integration tests need of the machine (Dovecot, PostgreSQL, Chromium, strace):
  // installed here, once, as root; otherwise the run stops naming the command to run.
  if (files.some((f) => INTEGRATION.includes(f.replace(/^\.\/test\//, "")))) (await import("./test-needs")).bringTestNeeds();
  // Started here, not by the first test process that needs them: each would stop those it
  // started when it exits, under the others still running.
  if (suite !== "unit" && !serversRunning()) {
    // This run's own, in its folder on ports of its own: another run beside it neither uses nor
    // stops them (one sharing /tmp/corpus-test-servers lost them when the first ended).
    process.env.CORPUS_TEST_STATE = join(runRoot, "servers");
    process.env.CORPUS_TEST_IMAP_PORT = String(freePort());
    process.env.CORPUS_TEST_PG_PORT = String(freePort());
    process.env.CORPUS_TEST_MYSQL_PORT = String(freePort());
    await startServers();
    startedServers = true;
  }
  if (!stoppedBy) {
    run = Bun.spawn([process.execPath, "test", `--parallel=${workers}`, "--no-isolate", ...suiteOptions, ...options, ...files], {
      cwd: root,
      // With TMPDIR and CORPUS_TEST_RUN_ROOT as set above (a spawn's default is the environment the process started with).
      env: { ...process.env },
      stdio: ["inherit", "inherit", "inherit"],
    });
    code = await run.exited;
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
} finally {
  if (startedServers) stopServers();
  removeRunRoot(runRoot);
}
if (run)
  console.error(`${suite} suite: ${files.length} files in ${((performance.now() - started) / 1000).toFixed(1)} s, ${workers} at a time`);
process.exit(stoppedBy ? 128 + constants.signals[stoppedBy] : code);
