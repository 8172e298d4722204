// Structured JSON logs (second document part 8): one line per record with timestamp, level,
// logger, message, request_id, client_ip and tool. Never pass secrets, tokens or bodies here.
// Values come from clients (tool names, paths, methods): every string is cut at
// LOG_VALUE_MAX_CHARS, so a request cannot turn into a megabyte log line.
import type { LOG_LEVELS } from "./config";

export type LogLevel = (typeof LOG_LEVELS)[number];
const RANK: Record<LogLevel, number> = { DEBUG: 10, INFO: 20, WARNING: 30, ERROR: 40, CRITICAL: 50 };

export interface LogContext {
  request_id?: string | null;
  client_ip?: string | null;
  tool?: string | null;
  [field: string]: unknown;
}

export type LogSink = (line: string) => void;

/** The longest string a log record carries; longer ones are cut and marked with their length. */
export const LOG_VALUE_MAX_CHARS = 1024;
/** Of arrays and objects inside a field: how many items and how deep are kept. */
const LOG_ITEMS_MAX = 32;
const LOG_DEPTH_MAX = 4;

function cutString(s: string): string {
  if (s.length <= LOG_VALUE_MAX_CHARS) return s;
  // Not between the two halves of a surrogate pair.
  const last = s.charCodeAt(LOG_VALUE_MAX_CHARS - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? LOG_VALUE_MAX_CHARS - 1 : LOG_VALUE_MAX_CHARS;
  return `${s.slice(0, end)}…[cut: ${s.length} chars]`;
}

/** A field's value with every string cut and collections bounded. */
export function capLogValue(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return cutString(value);
  if (value === null || typeof value !== "object") return value;
  if (depth >= LOG_DEPTH_MAX) return "[…]";
  // As JSON.stringify would see it (a Date is its ISO string).
  if (typeof (value as { toJSON?: unknown }).toJSON === "function")
    return capLogValue((value as { toJSON(): unknown }).toJSON(), depth + 1);
  if (Array.isArray(value)) {
    const kept = value.slice(0, LOG_ITEMS_MAX).map((v) => capLogValue(v, depth + 1));
    return value.length > LOG_ITEMS_MAX ? [...kept, `…[cut: ${value.length} items]`] : kept;
  }
  const entries = Object.entries(value);
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries.slice(0, LOG_ITEMS_MAX)) out[cutString(k)] = capLogValue(v, depth + 1);
  if (entries.length > LOG_ITEMS_MAX) out["…"] = `[cut: ${entries.length} keys]`;
  return out;
}

/** Lines are gathered and written together once per turn of the event loop. */
function stdoutSink(): LogSink {
  let pending: string[] = [];
  const flush = () => {
    const lines = pending;
    pending = [];
    if (lines.length) process.stdout.write(lines.join(""));
  };
  process.on("exit", flush);
  return (line) => {
    if (pending.push(line) === 1) setImmediate(flush);
  };
}

/** WARNING and worse records a logger keeps in memory, newest last: the console's last errors (D35). */
export const RECENT_PROBLEMS = 50;

export class Logger {
  constructor(
    readonly name: string,
    private readonly state: { level: LogLevel; sink: LogSink; recent: string[] },
  ) {}

  /** The last RECENT_PROBLEMS records of level WARNING or worse written since start (by any child), newest first. */
  recentProblems(): Array<Record<string, unknown>> {
    return this.state.recent.map((line) => JSON.parse(line) as Record<string, unknown>).reverse();
  }

  child(name: string): Logger {
    return new Logger(name, this.state);
  }

  enabled(level: LogLevel): boolean {
    return RANK[level] >= RANK[this.state.level];
  }

  log(level: LogLevel, message: string, context: LogContext = {}): void {
    if (!this.enabled(level)) return;
    const { request_id = null, client_ip = null, tool = null, ...rest } = context;
    const fields: Record<string, unknown> = {};
    for (const key in rest) fields[cutString(key)] = capLogValue(rest[key]);
    const record = {
      timestamp: new Date().toISOString(),
      level,
      logger: this.name,
      message: cutString(message),
      request_id: capLogValue(request_id),
      client_ip: capLogValue(client_ip),
      tool: capLogValue(tool),
      ...fields,
    };
    const line = JSON.stringify(record);
    if (RANK[level] >= RANK.WARNING && this.state.recent.push(line) > RECENT_PROBLEMS) this.state.recent.shift();
    this.state.sink(`${line}\n`);
  }

  debug(message: string, context?: LogContext) {
    this.log("DEBUG", message, context);
  }
  info(message: string, context?: LogContext) {
    this.log("INFO", message, context);
  }
  warning(message: string, context?: LogContext) {
    this.log("WARNING", message, context);
  }
  error(message: string, context?: LogContext) {
    this.log("ERROR", message, context);
  }
  critical(message: string, context?: LogContext) {
    this.log("CRITICAL", message, context);
  }
}

export function createLogger(level: LogLevel, sink: LogSink = stdoutSink()): Logger {
  return new Logger("corpus", { level, sink, recent: [] });
}

type LogRecord = Record<string, unknown>;

/** Collects records in memory: for tests and for callers that inspect logs. */
export function memorySink(): {
  sink: LogSink;
  records: () => LogRecord[];
  /** The first record `match` accepts, written already or when it is (a line written after the response, without polling). */
  written: (match: (r: LogRecord) => boolean) => Promise<LogRecord>;
} {
  const lines: string[] = [];
  const waiting = new Set<{ match: (r: LogRecord) => boolean; resolve: (r: LogRecord) => void }>();
  const records = () => lines.map((l) => JSON.parse(l) as LogRecord);
  return {
    sink: (l) => {
      lines.push(l);
      if (waiting.size === 0) return;
      const record = JSON.parse(l) as LogRecord;
      for (const w of waiting)
        if (w.match(record)) {
          waiting.delete(w);
          w.resolve(record);
        }
    },
    records,
    written: (match) => {
      const found = records().find(match);
      return found ? Promise.resolve(found) : new Promise((resolve) => waiting.add({ match, resolve }));
    },
  };
}
