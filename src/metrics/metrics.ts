// Prometheus metrics (D35), in the text exposition format, with prom-client: what the HTTP layer
// counts as requests pass, and what is read from the services when scraped. Labels are routes'
// templates, methods, statuses and kinds, never a user's name, a connector's id or a path: a
// bounded set of series, and nothing a scrape could learn about a user.
import type { Database } from "bun:sqlite";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { ConnectorStateCount } from "../connectors/registry";
import type { Priority } from "../embedding/service";
import type { QuestionStage } from "../questions/stages";
import type { Awaitable } from "../store/shared";
import { CachedRead } from "./connector-states";
import type { RequestObserver } from "./http";

/** What a scrape reads from the running service. */
export interface MetricSources {
  db: Database;
  /** Texts waiting for the embedding model (questions' and background). */
  embeddingQueue(): number;
  /** Texts the embedding model embedded since start, by priority (questions: urgent; chunks read: background). */
  embeddedTexts(): Record<Priority, number>;
  /** Every connector's kind, state and progress, nothing that names it. */
  connectorStates(): Promise<ConnectorStateCount[]>;
  /** Work promised and not done yet, by kind (D29). */
  owedWork(): Awaitable<Partial<Record<string, number>>>;
  /** Bytes free in the data folder. */
  freeBytes(): number;
  /** CORPUS_MIN_FREE_BYTES: below it, corpus stops writing (D29). */
  minFreeBytes: number;
  /** The clock of the connectors' states' TTL. */
  now?: () => number;
}

/** The request latency buckets, in seconds: from a cached answer to the request timeout. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class Metrics implements RequestObserver {
  readonly registry = new Registry();
  readonly requests: Histogram<"method" | "route" | "status">;
  readonly rateLimited: Counter<"route">;
  readonly signIns: Counter<"method" | "result">;
  readonly questionStages: Histogram<"stage">;

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    this.requests = new Histogram({
      name: "corpus_http_request_duration_seconds",
      help: "HTTP requests by method, route (its template) and status, and how long each took to answer",
      labelNames: ["method", "route", "status"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.questionStages = new Histogram({
      name: "corpus_question_stage_duration_seconds",
      help: "How long each stage of a question took: plan (the question read and embedded), gather (the connectors asked), rank (scored, fused, cited), answer (a books sum, or shape C's extractive answer), archive (D12)",
      labelNames: ["stage"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.rateLimited = new Counter({
      name: "corpus_rate_limit_refusals_total",
      help: "Requests refused by a rate limit, by route: a 429, or an MCP tool call refused by the per-user query limit (a tool error)",
      labelNames: ["route"],
      registers,
    });
    this.signIns = new Counter({
      name: "corpus_sign_ins_total",
      help: "Sign-ins to the built-in authorization server by method (password: a password checked; oidc: the upstream provider's answer at the callback) and result (success, failure)",
      labelNames: ["method", "result"],
      registers,
    });
    new Gauge({
      name: "corpus_embedding_queue_depth",
      help: "Texts waiting for the embedding model",
      registers,
      collect() {
        this.set(sources.embeddingQueue());
      },
    });
    new Counter({
      name: "corpus_embedded_texts_total",
      help: "Texts the embedding model embedded since start, by priority: background (chunks of the connectors' records; rate() is chunks per second) and urgent (questions, and chunks a question needed)",
      labelNames: ["priority"],
      registers,
      collect() {
        this.reset();
        for (const [priority, n] of Object.entries(sources.embeddedTexts())) this.inc({ priority }, n);
      },
    });
    // The connectors' states feed the four series below: read once for them, and at most once per TTL (connector-states.ts).
    const states = new CachedRead(
      () => sources.connectorStates(),
      () => {
        const { n, newest } = sources.db
          .query<{ n: number; newest: string | null }, []>("SELECT count(*) AS n, max(created_at) AS newest FROM connectors")
          .get()!;
        return `${n} ${newest}`;
      },
      sources.now ?? Date.now,
    );
    const connectorStates = () => states.get();
    const sumBy = <K extends string>(
      rows: ConnectorStateCount[],
      labels: (r: ConnectorStateCount) => Record<K, string> | undefined,
      value: (r: ConnectorStateCount) => number,
    ) => {
      const sums = new Map<string, { labels: Record<K, string>; n: number }>();
      for (const r of rows) {
        const l = labels(r);
        if (!l) continue;
        const key = JSON.stringify(l);
        const sum = sums.get(key) ?? { labels: l, n: 0 };
        sum.n += value(r);
        sums.set(key, sum);
      }
      return [...sums.values()];
    };
    new Gauge({
      name: "corpus_connector_states",
      help: "Connectors (every user's and the operator's) by kind and state (ok, indexing, embedding, error, checking; unknown before a remote source's first check)",
      labelNames: ["kind", "state"],
      registers,
      async collect() {
        this.reset();
        for (const { labels, n } of sumBy(
          await connectorStates(),
          (r) => ({ kind: r.kind, state: r.state }),
          () => 1,
        ))
          this.set(labels, n);
      },
    });
    new Gauge({
      name: "corpus_connector_chunks",
      help: "Chunks of the local indexes (files, mail folders, books, SQLite), by kind, and how many of them are embedded",
      labelNames: ["kind", "embedded"],
      registers,
      async collect() {
        this.reset();
        const rows = (await connectorStates()).filter((r) => r.chunks !== undefined);
        for (const { labels, n } of sumBy(
          rows,
          (r) => ({ kind: r.kind, embedded: "true" }),
          (r) => r.embedded ?? 0,
        ))
          this.set(labels, n);
        for (const { labels, n } of sumBy(
          rows,
          (r) => ({ kind: r.kind, embedded: "false" }),
          (r) => r.chunks! - (r.embedded ?? 0),
        ))
          this.set(labels, n);
      },
    });
    for (const [part, what] of [
      ["done", "done so far"],
      ["total", "to do in all"],
    ] as const)
      new Gauge({
        name: `corpus_connector_progress_${part}`,
        help: `The phases under way (indexing files, embedding chunks or records), by kind: the units ${what}, summed over the connectors in that phase`,
        labelNames: ["kind", "phase", "unit"],
        registers,
        async collect() {
          this.reset();
          const rows = await connectorStates();
          for (const { labels, n } of sumBy(
            rows,
            (r) => (r.progress ? { kind: r.kind, phase: r.progress.phase, unit: r.progress.unit } : undefined),
            (r) => r.progress![part],
          ))
            this.set(labels, n);
        },
      });
    new Gauge({
      name: "corpus_connectors",
      help: "Users' connectors, by kind",
      labelNames: ["kind"],
      registers,
      collect() {
        this.reset();
        const rows = sources.db.query<{ kind: string; n: number }, []>("SELECT kind, count(*) AS n FROM connectors GROUP BY kind").all();
        for (const { kind, n } of rows) this.set({ kind }, n);
      },
    });
    new Gauge({
      name: "corpus_owed_work",
      help: "Work promised and not done yet, by kind (D29)",
      labelNames: ["kind"],
      registers,
      async collect() {
        const owed = await sources.owedWork();
        this.reset();
        for (const [kind, n] of Object.entries(owed)) if (n !== undefined) this.set({ kind }, n);
      },
    });
    new Gauge({
      name: "corpus_database_bytes",
      help: "Bytes of the database's pages (its write-ahead log aside)",
      registers,
      collect() {
        const { bytes } = sources.db
          .query<{ bytes: number }, []>("SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()")
          .get()!;
        this.set(bytes);
      },
    });
    new Gauge({
      name: "corpus_data_min_free_bytes",
      help: "CORPUS_MIN_FREE_BYTES: below this much free space corpus stops writing (D29)",
      registers,
    }).set(sources.minFreeBytes);
    new Gauge({
      name: "corpus_data_free_bytes",
      help: "Bytes free in the data folder",
      registers,
      collect() {
        const free = sources.freeBytes();
        if (Number.isFinite(free)) this.set(free);
      },
    });
  }

  answered(method: string, route: string, status: number, seconds: number, rateLimited = false): void {
    this.requests.observe({ method, route, status: String(status) }, seconds);
    if (status === 429 || rateLimited) this.rateLimited.inc({ route });
  }

  /** A sign-in by `method` succeeded or failed. */
  signedIn(method: "password" | "oidc", succeeded: boolean): void {
    this.signIns.inc({ method, result: succeeded ? "success" : "failure" });
  }

  /** A question's stage ended after `seconds`. */
  questionStage(stage: QuestionStage, seconds: number): void {
    this.questionStages.observe({ stage }, seconds);
  }

  /** The exposition text, and its content type. */
  async scrape(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
