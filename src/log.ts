// Structured JSON logs (second document part 8): one line per record with timestamp, level,
// logger, message, request_id, client_ip and tool. Never pass secrets, tokens or bodies here.
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

export class Logger {
  constructor(
    readonly name: string,
    private readonly state: { level: LogLevel; sink: LogSink },
  ) {}

  child(name: string): Logger {
    return new Logger(name, this.state);
  }

  enabled(level: LogLevel): boolean {
    return RANK[level] >= RANK[this.state.level];
  }

  log(level: LogLevel, message: string, context: LogContext = {}): void {
    if (!this.enabled(level)) return;
    const { request_id = null, client_ip = null, tool = null, ...fields } = context;
    const record = { timestamp: new Date().toISOString(), level, logger: this.name, message, request_id, client_ip, tool, ...fields };
    this.state.sink(`${JSON.stringify(record)}\n`);
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
  return new Logger("corpus", { level, sink });
}

/** Collects records in memory: for tests and for callers that inspect logs. */
export function memorySink(): { sink: LogSink; records: () => Array<Record<string, unknown>> } {
  const lines: string[] = [];
  return { sink: (l) => lines.push(l), records: () => lines.map((l) => JSON.parse(l)) };
}
