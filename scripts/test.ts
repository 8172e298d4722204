// The two test suites (issue 15 item 6). `npm test` runs every file; these split them:
//   bun scripts/test.ts unit          no test servers, no model, no child process: seconds
//   bun scripts/test.ts integration   the rest: Dovecot and PostgreSQL, the model, real processes, Chromium
// A test file is a unit test unless it is named below. The unit suite preloads
// test/support/unit-guard.ts, which makes a child process, a worker (the model), the model or
// the test servers throw at once: a test that needs one fails there, saying it belongs here.

import { join } from "node:path";
import { Glob } from "bun";

const INTEGRATION = [
  "accounts/cli.test.ts",
  "archive/pending-after-deletion.test.ts",
  "archive/resume-after-deletion.test.ts",
  "backup/online.test.ts",
  "backup/refusals.test.ts",
  "cli.test.ts",
  "connectors/crash-embedding.test.ts",
  "connectors/embed-ahead-after-removal.test.ts",
  "connectors/embed-ahead-memory.test.ts",
  "connectors/embed-ahead-refresh-stall.test.ts",
  "connectors/embed-ahead-repoint-same-rows.test.ts",
  "connectors/embed-ahead-shop.test.ts",
  "connectors/embed-ahead-undated-postgres.test.ts",
  "connectors/embedding-after-deletion.test.ts",
  "connectors/file-bounds.test.ts",
  "connectors/imap-fairness.test.ts",
  "connectors/imap-hostile.test.ts",
  "connectors/imap.test.ts",
  "connectors/maildir.test.ts",
  "connectors/paths.test.ts",
  "connectors/read-only.test.ts",
  "connectors/remote-hosts.test.ts",
  "connectors/routes.test.ts",
  "connectors/source-urls.test.ts",
  "connectors/sql-bounds.test.ts",
  "connectors/sql-edge-dates.test.ts",
  "connectors/sql-hostile.test.ts",
  "connectors/sql-postgres-date-index.test.ts",
  "connectors/sql-postgres-most-undated.test.ts",
  "connectors/sql-postgres-two-reads.test.ts",
  "connectors/sql.test.ts",
  "connectors/status.test.ts",
  "connectors/update.test.ts",
  "crash.test.ts",
  "crypto/master-key.test.ts",
  "embedding/embedder.test.ts",
  "embedding/model-change.test.ts",
  "embedding/nonblocking.test.ts",
  "embedding/service.test.ts",
  "executable.test.ts",
  "fuzz.test.ts",
  "http/cors.test.ts",
  "http/tls.test.ts",
  "jobs/guard.test.ts",
  "mcp/clients.test.ts",
  "mcp/conformance.test.ts",
  "mcp/jsonrpc.test.ts",
  "mcp/panel-token.test.ts",
  "mcp/sdk.test.ts",
  "mcp/widget.test.ts",
  "native/materialize.test.ts",
  "net/post.test.ts",
  "oauth/conformance.test.ts",
  "oauth/flow.test.ts",
  "oauth/inspector-cli.test.ts",
  "oauth/metadata-document-flow.test.ts",
  "oauth/metadata-document.test.ts",
  "oauth/upstream-flow.test.ts",
  "openapi/complete.test.ts",
  "rest/operator-ahead-evicted.test.ts",
  "rest/operator-rows-cross-user.test.ts",
  "rest/query-hostile.test.ts",
  "rest/query-snippets.test.ts",
  "rest/query.test.ts",
  "rest/replay.test.ts",
  "rest/shapes.test.ts",
  "retrieval/business-questions.test.ts",
  "retrieval/debug-log.test.ts",
  "scripts/build-model.test.ts",
  "scripts/install-scripts.test.ts",
  "server.test.ts",
  "store/at-rest.test.ts",
  "store/data-dir.test.ts",
  "store/full-disk.test.ts",
  "store/operator-key-full-disk.test.ts",
  "store/storage-errors.test.ts",
  "users/deletion-race.test.ts",
  "users/deletion.test.ts",
];

const root = join(import.meta.dir, "..");
const suite = process.argv[2];
if (suite !== "unit" && suite !== "integration") {
  console.error("usage: bun scripts/test.ts unit|integration [bun test options]");
  process.exit(2);
}
const all = [...new Glob("**/*.test.ts").scanSync(join(root, "test"))].sort();
const unknown = INTEGRATION.filter((f) => !all.includes(f));
if (unknown.length) {
  console.error(`scripts/test.ts names test files that do not exist: ${unknown.join(", ")}`);
  process.exit(2);
}
const files = all.filter((f) => INTEGRATION.includes(f) === (suite === "integration")).map((f) => `./test/${f}`);
const options = suite === "unit" ? ["--preload", "./test/support/unit-guard.ts"] : ["--timeout", "60000"];
const started = performance.now();
const run = Bun.spawnSync([process.execPath, "test", ...options, ...process.argv.slice(3), ...files], {
  cwd: root,
  stdio: ["inherit", "inherit", "inherit"],
});
console.error(`${suite} suite: ${files.length} files in ${((performance.now() - started) / 1000).toFixed(1)} s`);
process.exit(run.exitCode ?? 1);
