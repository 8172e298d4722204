// Issue 35 (D31): nothing a source sends can stall the server. A real server indexes a folder of
// hostile documents (the outside review's PDF, DOCX and ZIP bombs, a 1 MB CSV line and one of
// 3,000,000 columns, 8 MB of nested HTML) and a mail folder with a 24 MB mail; GET / is timed
// all along. Before, each of these held the serving thread for seconds (the PDF 19-22 s, the
// mail ~45 s); the CSV of 3,000,000 columns is past the budget of CPU time now.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { callerWith, cli, startCorpus, userFoldersEnv } from "../backup/support";
import { tempDir } from "../helpers";
import { writeHostileSources } from "../support/hostile-sources";

setDefaultTimeout(240_000);

/** GET / one after another until `done()` (or `n` times): each latency, sorted, and how many failed. */
async function latencies(url: string, until: { n?: number; done?: () => boolean }): Promise<{ sorted: number[]; failed: number }> {
  const out: number[] = [];
  let failed = 0;
  while (until.n ? out.length < until.n : !until.done!()) {
    const started = performance.now();
    const ok = await fetch(`${url}/`, { signal: AbortSignal.timeout(30_000) }).then(
      async (r) => (await r.arrayBuffer(), r.ok),
      () => false,
    );
    out.push(performance.now() - started);
    if (!ok) failed++;
    await Bun.sleep(20);
  }
  return { sorted: out.sort((a, b) => a - b), failed };
}

const p99 = (sorted: number[]) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!;

describe("a real server indexing hostile sources", () => {
  test("GET / keeps answering, and every hostile record is skipped with its reason, in the status and the log", async () => {
    const root = tempDir();
    const alice = join(root, "alice");
    const sources = writeHostileSources(alice);
    const env = {
      ...userFoldersEnv(root),
      CORPUS_LOG_LEVEL: "INFO",
    };
    const token = (await cli(["token", "create", "--user", "alice", "--scopes", "connectors:read,connectors:write"], env)).stdout.trim();
    const server = await startCorpus(env);
    const call = callerWith(server.url, token);
    try {
      const quiet = (await latencies(server.url, { n: 100 })).sorted;
      const statuses = async () =>
        ((await (await call("GET", "/v1/connectors")).json()) as { connectors: Array<{ id: string; status: string; reason?: string }> })
          .connectors;
      const started = performance.now();
      expect((await call("POST", "/v1/connectors", { id: "docs", kind: "files", config: { path: sources.docs } })).status).toBe(200);
      expect((await call("POST", "/v1/connectors", { id: "mail", kind: "maildir", config: { path: sources.mail } })).status).toBe(200);
      const indexedLines = () => server.lines.filter((l) => l.message === "connector indexed").length;
      const deadline = performance.now() + 200_000;
      const busy = await latencies(server.url, { done: () => indexedLines() >= 2 || performance.now() > deadline });
      const indexingMs = performance.now() - started;
      console.log(
        `indexing ${(indexingMs / 1000).toFixed(1)} s; GET / p99 quiet ${p99(quiet).toFixed(1)} ms, while indexing ${p99(busy.sorted).toFixed(1)} ms (slowest ${busy.sorted.at(-1)!.toFixed(1)} ms of ${busy.sorted.length})`,
      );
      expect(indexedLines()).toBe(2);
      expect(busy.failed).toBe(0);
      expect(busy.sorted.length).toBeGreaterThan(100);
      // Parsed on the serving thread, the hostile files held GET / for seconds each (the PDF
      // 19-22 s, the mail ~45 s, the HTML and the CSV ~6 s each): each such stall is one slow
      // request of a few hundred, the longest most of the indexing. Ratios: the machine may be
      // busy. What is left on this thread is writing the mail's 4 M characters into the index
      // (its words' FTS5 row, its chunks' count, its seal: 0.2-0.6 s, measured).
      expect(busy.sorted.at(-1)!).toBeLessThan(indexingMs / 5);
      expect(p99(busy.sorted)).toBeLessThan(indexingMs / 10);

      // Each hostile record is skipped once, with its reason; the log names no file.
      const reasons = server.lines.filter((l) => l.message === "connector file skipped").map((l) => l.reason as string);
      expect(reasons).toHaveLength(Object.keys(sources.reasons).length);
      for (const allowed of Object.values(sources.reasons)) {
        const at = reasons.findIndex((r) => allowed.includes(r));
        expect(at).toBeGreaterThanOrEqual(0);
        reasons.splice(at, 1);
      }
      const status = await statuses();
      const docs = status.find((c) => c.id === "docs")!;
      expect(["ok", "embedding"]).toContain(docs.status);
      expect(docs.reason).toStartWith("skipped 5 files: ");
      // The first three named, each with its own reason: "skipped 5 files: a.pdf why; b.docx why; c why; and 2 more".
      const named = docs.reason!.slice("skipped 5 files: ".length).split("; ").slice(0, 3);
      for (const entry of named) {
        const name = entry.slice(0, entry.indexOf(" "));
        expect(sources.reasons[name]).toContain(entry.slice(name.length + 1));
      }
      expect(docs.reason).toEndWith("; and 2 more");
      // The 24 MB mail is read, its HTML's tags dropped past MAX_MAIL_HTML_CHARS; nothing of the mail is skipped.
      expect(status.find((c) => c.id === "mail")!.reason ?? "").not.toContain("skipped");
      // notes.txt and the 1 MB line of long-line.csv; both mails.
      expect(server.lines.filter((l) => l.message === "connector indexed").map((l) => l.read)).toEqual([2, 2]);
    } finally {
      await server.stop();
    }
  });
});
