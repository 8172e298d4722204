// Requests lost to certificate reloads (README "HTTPS"): a real `corpus serve` over HTTPS,
// CLIENTS loops of `GET /` (keep-alive, or a new connection each with --fresh) while the
// certificate is swapped and SIGHUP sent RELOADS times, 150 ms apart. Prints the answered and
// failed counts, and the kernel's net.ipv4.tcp_migrate_req (with 1, connections queued on the
// listener being closed are handed to the new one instead of reset).
//   bun scripts/bench/tls-reload.ts [--reloads 20] [--clients 8] [--fresh]
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { FIXED_ISSUER, newMasterKey, startCorpus } from "../../test/backup/support";
import { selfSigned } from "../../test/support/certificates";
import { runTempDir } from "./lib";

const { values } = parseArgs({
  options: {
    reloads: { type: "string", default: "20" },
    clients: { type: "string", default: "8" },
    fresh: { type: "boolean", default: false },
  },
});
const dir = runTempDir("corpus-tls-bench-");
for (const name of ["a", "b"]) selfSigned(dir, name, ["IP:127.0.0.1"]);
const install = (name: string) => {
  copyFileSync(join(dir, `${name}.crt`), join(dir, "server.crt"));
  copyFileSync(join(dir, `${name}.key`), join(dir, "server.key"));
};
install("a");
const corpus = await startCorpus({
  ...FIXED_ISSUER,
  CORPUS_MASTER_KEY: newMasterKey(),
  CORPUS_DATA_DIR: join(dir, "data"),
  CORPUS_TLS_CERT_FILE: join(dir, "server.crt"),
  CORPUS_TLS_KEY_FILE: join(dir, "server.key"),
});
const ca = ["a", "b"].map((n) => readFileSync(join(dir, `${n}.crt`), "utf8"));
let answered = 0;
let stop = false;
const failures: Record<string, number> = {};
const loop = async () => {
  while (!stop) {
    try {
      const r = await fetch(`${corpus.url}/`, { tls: { ca }, keepalive: !values.fresh, signal: AbortSignal.timeout(5_000) });
      await r.arrayBuffer();
      if (r.status === 200) answered++;
      else failures[`status ${r.status}`] = (failures[`status ${r.status}`] ?? 0) + 1;
    } catch (error) {
      const reason = (error as Error).message.split(":")[0]!;
      failures[reason] = (failures[reason] ?? 0) + 1;
    }
  }
};
const loops = Array.from({ length: Number(values.clients) }, loop);
for (let i = 0; i < Number(values.reloads); i++) {
  await Bun.sleep(150);
  install(i % 2 ? "a" : "b");
  corpus.proc.kill("SIGHUP");
}
await Bun.sleep(200);
stop = true;
await Promise.all(loops);
const reloaded = corpus.lines.filter((l) => l.message === "TLS certificate reloaded").length;
await corpus.stop();
let migrate = "unknown";
try {
  migrate = readFileSync("/proc/sys/net/ipv4/tcp_migrate_req", "utf8").trim();
} catch {}
console.log(
  JSON.stringify({
    reloads: reloaded,
    clients: Number(values.clients),
    connections: values.fresh ? "new each request" : "keep-alive",
    answered,
    failed: Object.values(failures).reduce((a, b) => a + b, 0),
    failures,
    tcp_migrate_req: migrate,
  }),
);
