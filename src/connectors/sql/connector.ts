// `sql` (D18, D19): the tables of a shop's or a ledger's database, SQLite, PostgreSQL, MySQL or
// MariaDB. SQLite is opened read-only (and query_only); a server runs every query in a READ ONLY
// transaction with a statement timeout. Only the configured tables and columns are read,
// their identifiers checked against the live schema and quoted; values are always bound.
// A server connection is made only of the URL's parts that corpus reads itself (never the
// server's PG*, MYSQL_* or DATABASE_URL environment), to the address that was checked (D26),
// and is retried a bounded number of times with backoff (issue 13 item 7).
import { constants, Database } from "bun:sqlite";
import { existsSync, realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import type postgres from "postgres";
import { parseIp } from "../../net/addresses";
import { ConnectAttempts, RetryLater } from "../../net/attempts";
import { HostRefused, HostUnresolved, type Pinned } from "../../net/pin";
import { connectPinned } from "../../net/socket";
import { all, SIZE_WORDS } from "../../retrieval/language/words";
import { foldText } from "../index-terms";
import { asGiven, type Confine, checkDatabaseFiles, PathRefused } from "../paths";
import { CONNECT_TIMEOUT_MS, PUBLIC_PIN, type RemoteOptions, refusedMessage } from "../remote";
import { Turns } from "../turns";
import {
  type Connector,
  ConnectorError,
  type ConnectorStatus,
  isKeyColumn,
  ORDER_RANK,
  ORDERED_BY,
  type RetrievalRequest,
  type SourceRecord,
  searchNeedles,
} from "../types";
import type { SqlConfig, SqlTable } from "./config";
import { foldedGlob, foldedNeedle, foldedRegex, spelledIn, unmarkedIn } from "./fold";
import { hasScheme, isServerUrl, parseServerUrl, type ServerTarget, ServerUrlError, serverEngine } from "./server-url";
import { closeOffThread, newConnection, SqliteReaderUnavailable, selectInWindowsOffThread, selectOffThread } from "./sqlite-reader";
import { countRows, over, type ScanBounds, selectInWindows, type WindowedQuery, windowKey } from "./windows";

const STATEMENT_TIMEOUT_MS = 5_000;
/**
 * How long a SQLite search (or count) reads before it answers with what it found: its windows
 * (windows.ts) keep the thread serving meanwhile, and this keeps it under the search's timeout.
 */
const SCAN_BUDGET_MS = 5_000;
/**
 * Bytes of all its cells a row read to be embedded ahead holds at most (newest()): 5,000 rows of
 * them are ~10 MB at once, whatever the table holds.
 */
export const NEWEST_ROW_BYTES = 2_000;
/**
 * Characters of a row's title or text cell a search reads (cut in SQL; a PostgreSQL cell of
 * another type than text as it arrives): a row is ranked, chunked and cited from them on the serving thread.
 * 20 rows of 1 MB asked held it ~0.2-0.5 s a question (reading 20 MB, BM25 over 100,000
 * characters of each, the chunks' digests: D31, measured); at 16,384, a first question still cut
 * and looked up ~28 chunks a row. ~1,300 words of a cell (rows embedded ahead hold 2,000 bytes in
 * all), and a row found by a word past them still comes (the match is SQL's over the whole cell).
 */
export const SEARCH_CELL_CHARS = 8_192;
/** Connections of one PostgreSQL connector, which may all be opened at once. */
const POOL_SIZE = 2;
type Row = Record<string, unknown>;

/** A search of one table: its columns, conditions (values bound) and order. */
interface TableQuery {
  columns: string;
  where: string[];
  params: unknown[];
  order: string;
  /** Its rows are those that hold the question's words (a scan of the table, whatever its order). */
  byWords: boolean;
  /** The words its rows hold, each as a whole word (holdsWholeWord). */
  needles: string[];
  orderedBy?: string;
}

/**
 * Newest first, undated rows last: SQLite's and MySQL's descending order puts NULLs last by itself;
 * PostgreSQL's needs NULLS LAST, but not within a date range (which holds no undated row), where
 * plain DESC lets an index on the date column answer.
 */
function dateOrder(dialect: Driver["dialect"], request: RetrievalRequest): string {
  return dialect === "postgres" && !request.dateFrom && !request.dateTo ? "DESC NULLS LAST" : "DESC";
}

/** A database seen through the two things this connector needs. */
/** A column of the live schema; `numeric` when its type holds numbers (a "most" can sort by it). */
interface Column {
  name: string;
  numeric: boolean;
  /** Cut to SEARCH_CELL_CHARS by the server as it is read: MySQL's text or bytes (not a number, a date or a time), PostgreSQL's text. */
  long?: boolean;
}

interface Driver {
  /** The table's columns; `sampled`: the ones whose values may be read to tell whether they hold numbers (SQLite, no declared type). */
  columns(table: string, sampled: string[]): Promise<Column[] | undefined>;
  select(sql: string, params: unknown[]): Promise<Row[]>;
  /** SQLite: a search's read of a table in windows (windows.ts), in the SQLite reader whole. */
  windows?(query: WindowedQuery, bounds: ScanBounds): Promise<Row[]>;
  /** Write attempt used by tests to prove the connection is read-only. */
  execute(sql: string): Promise<void>;
  readonly dialect: "sqlite" | "postgres" | "mysql";
  close(): Promise<void>;
}

const quote = (id: string) => `"${id.replaceAll('"', '""')}"`;
/** A server's table, perhaps in a schema (`public.invoice`, `shop.Invoice`: config.ts allows one dot): each part quoted apart. */
const quoteTable = (name: string) => name.split(".").map(quote).join(".");
/** The rows of a table read to tell whether a SQLite column declared without a type holds numbers (its first ones: bounded however large the table). */
const UNTYPED_SAMPLE = 1000;

/** A column name's words: total_spent, TotalSpent and "total spent" all read total, spent. */
const columnWords = (name: string) =>
  name
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);

/**
 * The column of numbers (of `columns`) that one of the question's terms names ("spent" names
 * total_spent), else the only one of a table the question names ("the largest invoice" of
 * Invoice: its Total; outside walkthrough, Prague's invoices came in date order), if any.
 */
export function orderColumn(columns: string[], terms: string[], table?: string): string | undefined {
  const asked = new Set(terms.map((w) => singular(w.toLowerCase())));
  // Never an id: "the largest customer" is not the one with the largest customer_id (outside attack).
  const amounts = columns.filter((c) => !isKeyColumn(c));
  const named = amounts.find((c) => columnWords(c).some((w) => asked.has(singular(w))));
  if (named || table === undefined || !terms.some((t) => SIZE_WORD.has(t.toLowerCase()))) return named;
  // Only for a size or a price ("the largest invoice", "the most expensive order"), a table the
  // question names whole, and its one amount.
  return amounts.length === 1 && columnWords(table).every((w) => asked.has(singular(w))) ? amounts[0] : undefined;
}

const singular = (word: string) => word.replace(/s$/, "");

/** Words asking for a record's size or price, which a table's one amount measures (words.ts SIZE_WORDS, every language). */
const SIZE_WORD = new Set(all(SIZE_WORDS));

/** The words naming a table or its read columns ("invoice", "total", "billing city"), singular. */
const schemaWords = (t: SqlTable) => new Set([t.name, ...readColumns(t)].flatMap(columnWords).map(singular));

/** Query parameters whose values are secrets or name where secrets are (password, sslpassword, passfile, sslkey…). */
const SECRET_PARAM = /pass|pwd|secret|token|key|auth|cred/i;

/** What stands for a password or a secret parameter in a shown URL. */
export const REDACTED = "***";

/** The database URL without its password or any secret-looking parameter, for messages and the shown config. */
export function redactUrl(url: string): string {
  if (!hasScheme(url)) return url;
  try {
    const u = new URL(url);
    if (u.password) u.password = REDACTED;
    for (const name of new Set(u.searchParams.keys())) if (SECRET_PARAM.test(name)) u.searchParams.set(name, REDACTED);
    return u.toString();
  } catch {
    return "(invalid URL)";
  }
}

const safeDecode = (part: string) => {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
};

/** Whether `url` holds the placeholder of a shown URL as its password or a secret parameter (sent back as shown). */
export function holdsRedacted(url: string): boolean {
  if (!hasScheme(url)) return false;
  try {
    const u = new URL(url);
    // The password as it is used (decoded): `%2A%2A%2A` is the placeholder too.
    return (
      safeDecode(u.password) === REDACTED || [...u.searchParams].some(([name, value]) => SECRET_PARAM.test(name) && value === REDACTED)
    );
  } catch {
    return false;
  }
}

/** The database URL with no credentials at all, for records' source_url. */
function bareUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return "(invalid URL)";
  }
}

/** `check` is asked each time the file is opened (D23); it is opened by its realpath, following no link. */
function sqliteDriver(path: string, check: Confine): Driver {
  if (!existsSync(path)) throw new ConnectorError(`SQLite database ${path} not found`);
  const real = realpathSync(check(path));
  // Not a FIFO or a device (opening one would stall or read what is not a database), and no
  // file of it (its WAL above all) another name for a file of someone else's.
  try {
    checkDatabaseFiles(real);
  } catch (error) {
    if (error instanceof PathRefused) throw new ConnectorError(`SQLite database ${path}: ${error.message.replace(`${real}`, "the file")}`);
    throw error;
  }
  const db = new Database(real, constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_NOFOLLOW);
  db.exec("PRAGMA query_only = ON");
  const connection = newConnection();
  const onThisThread = async (sql: string, params: unknown[]) => db.query<Row, never[]>(sql).all(...(params as never[]));
  /** In the SQLite reader, off the serving thread (D31); on it only where no reader can run. */
  const offThread = async <T>(off: Promise<T> | undefined, here: () => Promise<T>): Promise<T> => {
    if (off) {
      try {
        return await off;
      } catch (error) {
        if (!(error instanceof SqliteReaderUnavailable)) throw error;
      }
    }
    return here();
  };
  return {
    dialect: "sqlite",
    async columns(table, sampled) {
      // Plain tables only: a view (or a virtual table) may run without end, and this driver
      // runs on the thread that serves everybody. Names are looked up as SQLite resolves them,
      // whatever their case ("HEAVY" is the view heavy: outside attack).
      const kind = db
        .query<{ sql: string | null; type: string }, [string]>("SELECT type, sql FROM sqlite_master WHERE name = ? COLLATE NOCASE")
        .get(table);
      if (kind && (kind.type !== "table" || /^\s*create\s+virtual/i.test(kind.sql ?? "")))
        throw new ConnectorError(`${table} is a view or a virtual table: only plain tables are read`);
      const rows = db.query<{ name: string; type: string }, [string]>("SELECT name, type FROM pragma_table_info(?)").all(table);
      // SQLite's affinity rules (INT, REAL, FLOA, DOUB; NUMERIC and DECIMAL are numeric affinity too).
      // A column declared without a type (CREATE TABLE … AS SELECT sum(…)) holds what was stored:
      // numeric when the values of its first rows are all numbers (outside walkthrough: a spend table's most
      // was never sorted, and the answer named a customer who spent less).
      // Only the columns asked about, in one read of the first rows (every typeless column of a
      // wide table, read one by one, held the thread 3.9 s: outside attack).
      const untyped = rows.filter((r) => r.type.trim() === "" && sampled.includes(r.name)).map((r) => r.name);
      const holdsNumbers = new Set<string>();
      if (untyped.length) {
        const counts = untyped
          .map((c, i) => `count(${quote(c)}) AS n${i}, sum(typeof(${quote(c)}) IN ('integer', 'real')) AS k${i}`)
          .join(", ");
        const sample = db
          .query<Record<string, number | null>, []>(
            `SELECT ${counts} FROM (SELECT ${untyped.map(quote).join(", ")} FROM ${quote(table)} LIMIT ${UNTYPED_SAMPLE})`,
          )
          .get();
        untyped.forEach((c, i) => {
          const n = sample?.[`n${i}`] ?? 0;
          if (n > 0 && sample?.[`k${i}`] === n) holdsNumbers.add(c);
        });
      }
      return rows.length
        ? rows.map((r) => ({
            name: r.name,
            numeric: r.type.trim() === "" ? holdsNumbers.has(r.name) : /int|real|floa|doub|numeric|decimal/i.test(r.type),
          }))
        : undefined;
    },
    select(sql, params) {
      return offThread(selectOffThread(connection, real, sql, params), () => onThisThread(sql, params));
    },
    windows(query, bounds) {
      return offThread(selectInWindowsOffThread(connection, real, query, bounds), () => selectInWindows(onThisThread, query, bounds));
    },
    async execute(sql) {
      db.exec(sql);
    },
    async close() {
      closeOffThread(connection);
      db.close();
    },
  };
}

/**
 * The variables a client reads while it parses its options, hidden for that one synchronous call:
 * postgres.js's PG*; Bun's SQL a whole URL (DATABASE_URL, MYSQL_URL, TLS_…, with ?socket= even)
 * and MYSQL_DATABASE / MARIADB_DATABASE over the database asked for.
 */
const CLIENT_ENVIRONMENT = /^(PG|POSTGRES|MYSQL|MARIADB|TLS_|DATABASE_URL$)/;

function withoutClientEnvironment<T>(make: () => T): T {
  const saved = Object.entries(process.env).filter(([name]) => CLIENT_ENVIRONMENT.test(name));
  for (const [name] of saved) delete process.env[name];
  try {
    return make();
  } finally {
    for (const [name, value] of saved) process.env[name] = value;
  }
}

/** TLS as the URL's sslmode asks; the certificate is checked against the host as written. */
function sslOptions(target: ServerTarget): false | Record<string, unknown> {
  if (target.sslmode === "disable") return false;
  const name = parseIp(target.host) ? { host: target.host } : { servername: target.host };
  return { ...name, rejectUnauthorized: target.sslmode === "verify-full" };
}

/**
 * Every connection parameter is given here, from the connector's config alone; the socket is
 * opened by `socket` (pinned to the checked address, counted by the bounded attempts).
 * `worked` is told of every query that succeeded.
 */
async function postgresDriver(
  target: ServerTarget,
  socket: () => Promise<unknown>,
  worked: () => void,
  timeoutMs: number,
): Promise<Driver> {
  const { default: postgres } = await import("postgres"); // loaded on first use
  // `socket` is a documented option the type definitions lack.
  const options: postgres.Options<Record<string, never>> & { socket: () => Promise<unknown> } = {
    host: target.host,
    port: target.port,
    user: target.user,
    // A function, so that an empty password stays empty (a falsy one falls back to PGPASSWORD).
    pass: () => target.password,
    database: target.database,
    ssl: sslOptions(target),
    socket,
    max: POOL_SIZE,
    idle_timeout: 60,
    connect_timeout: timeoutMs / 1000,
    max_lifetime: 30 * 60,
    keep_alive: 60,
    prepare: true,
    debug: false,
    fetch_types: true,
    target_session_attrs: undefined,
    onnotice: () => {},
    connection: { application_name: "corpus", default_transaction_read_only: true, statement_timeout: STATEMENT_TIMEOUT_MS },
  };
  const sql = withoutClientEnvironment(() => postgres(options));
  const readOnly = async <T>(fn: (tx: postgres.TransactionSql) => Promise<T>) => {
    const result = (await sql.begin("read only", fn)) as T;
    worked();
    return result;
  };
  return {
    dialect: "postgres",
    async columns(table) {
      const [schema, name] = table.includes(".") ? (table.split(".", 2) as [string, string]) : ["public", table];
      const rows = await readOnly(
        (tx) =>
          tx<
            { column_name: string; data_type: string }[]
          >`SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = ${schema} AND table_name = ${name} ORDER BY ordinal_position`,
      );
      const numeric = /^(smallint|integer|bigint|numeric|decimal|real|double precision|money)$/;
      // Text read as text: its head is the same characters (a bytea's or a json's ::text would not be, nor a char(n)'s padding).
      const text = /^(text|character varying)$/;
      return rows.length
        ? rows.map((r) => ({ name: r.column_name, numeric: numeric.test(r.data_type), long: text.test(r.data_type) }))
        : undefined;
    },
    async select(text, params) {
      return readOnly((tx) => tx.unsafe(text, params as postgres.ParameterOrJSON<never>[])) as Promise<Row[]>;
    },
    async execute(text) {
      await sql.unsafe(text);
    },
    async close() {
      await sql.end({ timeout: 2 });
    },
  };
}

/**
 * A MySQL or MariaDB server's connection, Bun's built-in client: every option from the connector's
 * config, to the address checked once for this client (`pinned`: Bun opens its sockets itself, to
 * the address it is given; the name only goes along as the TLS server name). Each query runs in a
 * READ ONLY transaction whose first statement sets the session's statement timeout (no option
 * sets it on connecting) and the quoting the other dialects share ("identifiers", a bare `\`).
 * A READ ONLY transaction still lets DDL through (it commits implicitly): corpus sends none, and
 * the README asks for a user that may only SELECT.
 */
async function mysqlDriver(target: ServerTarget, pinned: Pinned, worked: () => void, timeoutMs: number): Promise<Driver> {
  const verify = target.sslmode === "verify-full";
  const sql = withoutClientEnvironment(
    () =>
      new Bun.SQL({
        adapter: "mysql",
        hostname: pinned.address,
        port: target.port,
        username: target.user,
        password: () => target.password,
        database: target.database,
        tls: target.sslmode === "disable" ? false : { serverName: pinned.name ?? target.host, rejectUnauthorized: verify },
        max: POOL_SIZE,
        idleTimeout: 60,
        maxLifetime: 30 * 60,
        connectionTimeout: timeoutMs / 1000,
        bigint: false,
      }),
  );
  // MariaDB's timeout is max_statement_time (seconds), MySQL's max_execution_time (ms): asked once.
  let session: Promise<string> | undefined;
  const settings = () =>
    (session ??= sql`SELECT VERSION() AS version`
      .then(([row]: { version?: string }[]) => {
        const timeout = /mariadb/i.test(String(row?.version))
          ? `max_statement_time = ${STATEMENT_TIMEOUT_MS / 1000}`
          : `max_execution_time = ${STATEMENT_TIMEOUT_MS}`;
        return `SET SESSION sql_mode = 'ANSI_QUOTES,NO_BACKSLASH_ESCAPES', ${timeout}`;
      })
      .catch((error) => {
        session = undefined;
        throw error;
      }));
  const readOnly = async <T>(fn: (tx: Bun.TransactionSQL) => Promise<T>) => {
    const set = await settings();
    const result = await sql.begin("read only", async (tx) => {
      await tx.unsafe(set);
      return fn(tx);
    });
    worked();
    return result as T;
  };
  const numeric = /^(tinyint|smallint|mediumint|int|integer|bigint|decimal|numeric|float|double|real)$/;
  const temporal = /^(date|time|datetime|timestamp|year)$/;
  return {
    dialect: "mysql",
    async columns(table) {
      const [schema, name] = table.includes(".") ? (table.split(".", 2) as [string, string]) : [undefined, table];
      const rows = (await readOnly((tx) =>
        tx.unsafe(
          `SELECT table_name AS corpus_table, column_name AS corpus_name, data_type AS corpus_type FROM information_schema.columns
           WHERE table_schema = ${schema === undefined ? "DATABASE()" : "?"} AND table_name = ? ORDER BY ordinal_position`,
          schema === undefined ? [name] : [schema, name],
        ),
      )) as { corpus_table: string; corpus_name: string; corpus_type: string }[];
      // As the server will read the name in a statement: a table's name is case-sensitive where its files are.
      const exact = rows.filter((r) => r.corpus_table === name);
      return exact.length
        ? exact.map((r) => ({
            name: r.corpus_name,
            numeric: numeric.test(r.corpus_type.toLowerCase()),
            long: !numeric.test(r.corpus_type.toLowerCase()) && !temporal.test(r.corpus_type.toLowerCase()),
          }))
        : undefined;
    },
    async select(text, params) {
      return readOnly((tx) => tx.unsafe(text, params)) as Promise<Row[]>;
    },
    async execute(text) {
      await readOnly((tx) => tx.unsafe(text));
    },
    async close() {
      await sql.close({ timeout: 2 });
    },
  };
}

/** MySQL and MariaDB error numbers about the login or the server itself, not a statement (the connection is not kept). */
const MYSQL_CONNECTION_ERRORS = new Set([1040, 1044, 1045, 1049, 1053, 1129, 1130, 1203, 1226, 1698]);

/** A MySQL or MariaDB error the server sent (Bun's client): its error number and SQLSTATE. */
function mysqlServerError(error: unknown): { errno: number; sqlState: string } | undefined {
  const e = error as { code?: unknown; errno?: unknown; sqlState?: unknown } | null;
  return e?.code === "ERR_MYSQL_SERVER_ERROR" && typeof e.errno === "number"
    ? { errno: e.errno, sqlState: String(e.sqlState ?? "") }
    : undefined;
}

function describeDbError(error: unknown, url: string): string {
  if (error instanceof ConnectorError || error instanceof ServerUrlError) return error.message;
  const where = redactUrl(url);
  if (error instanceof RetryLater)
    return `${error.reason ?? `database ${where} cannot be reached`}; next attempt in ${Math.ceil(error.waitMs / 1000)} s`;
  if (error instanceof HostRefused) return refusedMessage("config.url", error);
  const mysql = mysqlServerError(error);
  if (mysql) {
    if ([1044, 1045, 1698].includes(mysql.errno)) return `database login failed for ${where}`;
    if (mysql.errno === 1049) return `database in ${where} does not exist`;
    // MariaDB's max_statement_time, MySQL's max_execution_time.
    if (mysql.errno === 1969 || mysql.errno === 3024) return `database ${where} took longer than ${STATEMENT_TIMEOUT_MS / 1000} s`;
    return `database ${where} unavailable`;
  }
  const e = error as { code?: string; message?: string };
  if (e?.code === "28P01" || e?.code === "28000") return `database login failed for ${where}`;
  if (e?.code === "3D000") return `database in ${where} does not exist`;
  if (e?.code === "57014") return `database ${where} took longer than ${STATEMENT_TIMEOUT_MS / 1000} s`;
  // A PostgreSQL server that answered with an error of its own (a SQLSTATE).
  if (!(error instanceof HostUnresolved) && /^[0-9A-Z]{5}$/.test(e?.code ?? "")) return `database ${where} unavailable`;
  // Refused, filtered, silent, reset, closed, not PostgreSQL, no such name: one answer, so
  // that it tells no port scan apart.
  return `database ${where} cannot be reached`;
}

export class SqlConnector implements Connector {
  readonly kind = "sql";
  private driver?: Promise<Driver>;
  private checked?: Promise<void>;
  /** SQLite: the key each table is read by in windows (windows.ts). */
  private readonly keys = new Map<string, string>();
  /** Each table's text columns of numbers: what a question for the most or least may sort by. */
  private readonly numeric = new Map<string, string[]>();
  /** A server's tables' columns cut to SEARCH_CELL_CHARS by the server as they are read (Column.long). */
  private readonly long = new Map<string, Set<string>>();
  private readonly attempts: ConnectAttempts;

  constructor(
    private readonly config: SqlConfig,
    /** Checks a SQLite path again before it is opened (D23). */
    private readonly check: Confine = asGiven,
    private readonly remote: RemoteOptions = {},
  ) {
    this.attempts = new ConnectAttempts(remote.now, POOL_SIZE);
  }

  /**
   * A server's driver. PostgreSQL: every socket asked of the attempts, pinned and timed. MySQL:
   * Bun's client opens its sockets itself, so each client is one attempt, to the address pinned
   * for it (against a server that closes at once, Bun tries again by itself within the connect
   * timeout, backing off: 10 sockets in 1 s, 18 in 5 s, measured; the next client waits out ours).
   */
  private async server(): Promise<Driver> {
    const target = parseServerUrl(this.config.url);
    const pin = this.remote.pin ?? PUBLIC_PIN;
    const timeout = this.remote.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
    if (target.engine === "mysql") {
      this.attempts.begin();
      return mysqlDriver(target, await pin(target.host), () => this.attempts.succeeded(), timeout);
    }
    const socket = async () => {
      this.attempts.begin();
      return connectPinned(await pin(target.host), target.port, timeout);
    };
    return postgresDriver(target, socket, () => this.attempts.succeeded(), timeout);
  }

  private async open(): Promise<Driver> {
    this.driver ??= serverEngine(this.config.url) ? this.server() : Promise.resolve().then(() => sqliteDriver(this.config.url, this.check));
    const driver = await this.driver.catch((error) => {
      this.driver = undefined;
      throw error;
    });
    this.checked ??= this.checkSchema(driver).catch((error) => {
      this.checked = undefined;
      throw error;
    });
    await this.checked;
    return driver;
  }

  /** Every configured table and column must exist in the live schema. */
  private async checkSchema(driver: Driver): Promise<void> {
    for (const t of this.config.tables) {
      const live = await driver.columns(t.name, t.text);
      if (!live) throw new ConnectorError(`table ${t.name} does not exist`);
      const columns = live.map((c) => c.name);
      for (const c of [t.id, t.title, ...t.text, ...(t.date ? [t.date] : [])]) {
        if (!columns.includes(c)) throw new ConnectorError(`table ${t.name} has no column ${c}`);
      }
      this.numeric.set(
        t.name,
        live.filter((c) => c.numeric && t.text.includes(c.name)).map((c) => c.name),
      );
      this.long.set(t.name, new Set(live.filter((c) => c.long).map((c) => c.name)));
      if (driver.dialect !== "sqlite") continue;
      const key = await windowKey((sql, params) => driver.select(sql, params), t.name);
      if (!key) throw new ConnectorError(`table ${t.name} has columns named rowid, _rowid_ and oid: it cannot be read in bounded steps`);
      this.keys.set(t.name, key);
    }
  }

  private async withDriver<T>(fn: (d: Driver) => Promise<T>): Promise<T> {
    try {
      return await fn(await this.open());
    } catch (error) {
      // A dead connection is opened anew next time; one the server answered on stays (closing it
      // failed every search of the connector under way at the same time).
      if (!(error instanceof ConnectorError) && !answeredByServer(error)) {
        await this.driver?.then((d) => d.close()).catch(() => {});
        this.driver = undefined;
        this.checked = undefined;
      }
      const message = describeDbError(error, this.config.url);
      if (!(error instanceof RetryLater)) this.attempts.failed(message);
      throw new ConnectorError(message);
    }
  }

  async health(): Promise<ConnectorStatus> {
    try {
      const records = await this.withDriver(async (d) => {
        let n = 0;
        const bounds = { deadline: performance.now() + SCAN_BUDGET_MS };
        for (const t of this.config.tables) {
          // SQLite counts window by window (a large file would hold the thread); unknown past the budget.
          const rows =
            d.dialect === "sqlite"
              ? await countRows((sql, params) => d.select(sql, params), t.name, this.keys.get(t.name)!, bounds)
              : Number((await d.select(`SELECT count(*) AS n FROM ${quoteTable(t.name)}`, []))[0]?.n ?? 0);
          if (rows === undefined) return undefined;
          n += rows;
        }
        return n;
      });
      return { status: "ok", ...(records === undefined ? {} : { records }) };
    } catch (error) {
      return { status: "error", reason: (error as Error).message };
    }
  }

  /**
   * Rows whose text columns contain any of the search's needles (at most MAX_SEARCH_NEEDLES),
   * newest first, per table; SQLite within SCAN_BUDGET_MS, in windows.
   */
  search(request: RetrievalRequest): Promise<SourceRecord[]> {
    return this.rows(request);
  }

  /**
   * The newest rows of each table (by its date column, else its id), `limit` in all: a search
   * with no words, of rows whose cells hold at most NEWEST_ROW_BYTES bytes (what is read at once
   * stays bounded; a longer row is embedded when a question meets it).
   */
  newest(limit: number): Promise<SourceRecord[]> {
    return this.rows({ terms: [], phrases: [], limit: Math.ceil(limit / this.config.tables.length) }, NEWEST_ROW_BYTES);
  }

  /** A search's rows, per table; with `maxRowBytes`, only rows whose cells hold at most that many bytes. */
  private async rows(request: RetrievalRequest, maxRowBytes?: number): Promise<SourceRecord[]> {
    const bounds: ScanBounds = { deadline: performance.now() + SCAN_BUDGET_MS, signal: request.signal };
    return this.withDriver(async (d) => {
      const out: SourceRecord[] = [];
      for (const t of this.config.tables) {
        if (request.signal?.aborted) break;
        const read = (q: TableQuery, limit: number) =>
          d.dialect === "sqlite"
            ? d.windows!(windowed(t, q, this.keys.get(t.name)!, limit), bounds)
            : this.serverRows(d, t, q, { ...request, limit });
        let q = this.query(d.dialect, t, request, maxRowBytes);
        // Each engine matches inside words (LIKE, GLOB, ~*); the index matches whole words: so are
        // rows kept. The first rows read may all hold the word inside others ("Denmark" for
        // "Mark"): more are read, up to WHOLE_WORD_READS times the limit, until enough hold it whole.
        // A read cut short by the scan's deadline (SQLite) may keep fewer than the one before it: the most kept are.
        const wholeWords = async (q: TableQuery) => {
          const turns = new Turns();
          let best: Row[] = [];
          for (let limit = request.limit; ; limit *= 4) {
            const rows = await read(q, limit);
            // Folded on the serving thread, a turn of the event loop whenever its budget is spent
            // (D31): 160 rows of 8,000 "ß" are ~0.4 s of folding.
            const kept: Row[] = [];
            for (const row of rows) {
              if (holdsWholeWord(t, row, q.needles)) kept.push(row);
              await turns.maybe();
            }
            if (kept.length >= best.length) best = kept;
            if (kept.length >= request.limit || rows.length < limit || limit * 4 > WHOLE_WORD_READS * request.limit || over(bounds))
              return best.slice(0, request.limit);
          }
        };
        let rows = await wholeWords(q);
        // Sorted, and no row holds the question's other words ("in the shop"): the table's rows
        // in that order (within the time asked), unless one is a name: "the largest invoice of
        // Helena" is not the shop's largest.
        if (!rows.length && q.orderedBy && q.byWords && !request.names?.length && !request.signal?.aborted) {
          q = this.query(d.dialect, t, request, maxRowBytes, false);
          rows = await wholeWords(q);
        }
        rows.forEach((row, i) => {
          out.push(this.toRecord(t, row, q.orderedBy ? { by: q.orderedBy, rank: i + 1 } : undefined));
        });
      }
      return out;
    });
  }

  /**
   * A server's table's rows for a search (PostgreSQL, MySQL). Its newest rows, asked without words,
   * a date range or another column's order (embedding ahead): PostgreSQL's `NULLS LAST` cannot use
   * an ordinary index on the date column (the newest 50 of 200,000 rows read all of them), so the
   * dated rows are asked first (`IS NOT NULL`, the index's own order), then, if they are too few,
   * the undated. Every other search is one statement (words are a scan of the table whatever its order).
   */
  private async serverRows(d: Driver, t: SqlTable, q: TableQuery, request: RetrievalRequest): Promise<Row[]> {
    const limitMark = d.dialect === "postgres" ? `$${q.params.length + 1}` : "?";
    const select = (where: string[], order: string, limit: number) =>
      d.select(
        `SELECT ${q.columns} FROM ${quoteTable(t.name)}${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY ${order} LIMIT ${limitMark}`,
        [...q.params, limit],
      );
    if (!t.date || q.byWords || request.dateFrom || request.dateTo || q.orderedBy) return select(q.where, q.order, request.limit);
    const dated = await select([...q.where, `${quote(t.date)} IS NOT NULL`], `${quote(t.date)} DESC, ${quote(t.id)} DESC`, request.limit);
    if (dated.length >= request.limit || request.signal?.aborted) return dated;
    const undated = await select([...q.where, `${quote(t.date)} IS NULL`], `${quote(t.id)} DESC`, request.limit - dated.length);
    return [...dated, ...undated];
  }

  /** The columns, conditions (values bound) and order of a search of table `t` (`byWords`: of the rows holding its words). */
  private query(dialect: Driver["dialect"], t: SqlTable, request: RetrievalRequest, maxRowBytes?: number, byWords = true): TableQuery {
    const params: unknown[] = [];
    // Binds a value and answers its placeholder in the dialect's syntax.
    const bind = (value: unknown) => {
      params.push(value);
      return dialect === "postgres" ? `$${params.length}` : "?";
    };
    // SQLite compares dates stored as text ("2021-01-01 00:00:00"), as MySQL reads them; PostgreSQL takes dates.
    const dateParam = (date: Date) => bind(dialect === "postgres" ? date : date.toISOString().replace("T", " ").slice(0, 19));
    const where: string[] = [];
    // Asked for the largest or smallest of a quantity the question names: by that column first.
    const orderedBy = request.order ? orderColumn(this.numeric.get(t.name) ?? [], request.terms, t.name) : undefined;
    // Then the words naming the table or its columns say what to sort ("the largest invoice
    // total"), not what a row holds: no row holds "invoice" or "total".
    const named = orderedBy ? schemaWords(t) : undefined;
    const words = byWords ? searchNeedles(request).filter((w) => !named?.has(singular(w))) : [];
    if (words.length) {
      const cells = [...new Set([t.title, ...t.text])].map((c) => asText(dialect, c));
      if (dialect === "sqlite") where.push(sqliteHolds(words, cells, bind));
      else {
        const any: string[] = [];
        for (const w of words) {
          const holds = holdsFolded(dialect, w, bind);
          for (const cell of cells) any.push(holds(cell));
        }
        where.push(`(${any.join(" OR ")})`);
      }
    }
    if (maxRowBytes !== undefined) where.push(`${rowBytes(dialect, t)} <= ${bind(maxRowBytes)}`);
    if (t.date && request.dateFrom) where.push(`${quote(t.date)} >= ${dateParam(request.dateFrom)}`);
    if (t.date && request.dateTo) where.push(`${quote(t.date)} < ${dateParam(request.dateTo)}`);
    const long = this.long.get(t.name);
    const columns = readColumns(t)
      .map((c) =>
        c === t.id || c === t.date
          ? quote(c)
          : dialect === "sqlite"
            ? headOfCell(c)
            : long?.has(c)
              ? `left(${quote(c)}, ${SEARCH_CELL_CHARS}) AS ${quote(c)}`
              : quote(c),
      )
      .join(", ");
    const first = orderedBy ? `${nullsLast(dialect, quote(orderedBy), request.order === "asc" ? "ASC" : "DESC")}, ` : "";
    return {
      columns,
      where,
      params,
      order: `${first}${t.date ? `${quote(t.date)} ${dateOrder(dialect, request)}, ` : ""}${quote(t.id)} DESC`,
      byWords: words.length > 0,
      needles: words,
      ...(orderedBy ? { orderedBy } : {}),
    };
  }

  private toRecord(t: SqlTable, row: Row, ordered?: { by: string; rank: number }): SourceRecord {
    const id = String(row[t.id]);
    const value = (v: unknown) => (v instanceof Date ? v.toISOString() : v === null || v === undefined ? "" : headOf(String(v)));
    const rawDate = t.date ? row[t.date] : undefined;
    const date =
      rawDate instanceof Date
        ? rawDate
        : rawDate
          ? new Date(String(rawDate).replace(" ", "T") + (/[zZ]|[+-]\d\d:?\d\d$/.test(String(rawDate)) ? "" : "Z"))
          : undefined;
    const metadata: SourceRecord["metadata"] = {
      table: t.name,
      ...(ordered ? { [ORDERED_BY]: ordered.by, [ORDER_RANK]: ordered.rank } : {}),
    };
    for (const c of Object.keys(row)) {
      if (c === ORDERED_BY || c === ORDER_RANK) continue;
      const v = row[c];
      metadata[c] =
        v instanceof Date
          ? v.toISOString()
          : typeof v === "number" || typeof v === "boolean" || v === null
            ? v
            : typeof v === "bigint"
              ? Number(v)
              : c === t.id
                ? String(v)
                : value(v);
    }
    const url = t.url
      ? t.url.replaceAll("{id}", encodeURIComponent(id))
      : isServerUrl(this.config.url)
        ? `${bareUrl(this.config.url)}#${t.name}/${encodeURIComponent(id)}`
        : `${pathToFileURL(this.config.url).href}#${t.name}/${encodeURIComponent(id)}`;
    return {
      id: `${t.name}/${id}`,
      title: value(row[t.title]) || `${t.name} ${id}`,
      content: t.text.map((c) => `${c}: ${value(row[c])}`).join("\n"),
      source_url: url,
      date: date && !Number.isNaN(date.getTime()) ? date.toISOString() : null,
      type: "file",
      path: `${t.name}/${id}`,
      metadata,
    };
  }

  /** For tests of D19: a write through the connector's own connection. */
  async attemptWrite(sql: string): Promise<void> {
    const d = await this.open();
    await d.execute(sql);
  }

  async close(): Promise<void> {
    const d = this.driver;
    this.driver = undefined;
    await d?.then((x) => x.close()).catch(() => {});
  }
}

/**
 * The bytes of every column a row is read with, as SQL: SQLite's length() of a text stops at its
 * first NUL and counts characters, so each cell is measured as the bytes it holds (a BLOB's byte
 * reads as up to four characters, "255,": the bound stays within four times).
 */
function rowBytes(dialect: Driver["dialect"], t: SqlTable): string {
  const bytes = (c: string) =>
    dialect === "sqlite" ? `COALESCE(length(CAST(${quote(c)} AS BLOB)), 0)` : `COALESCE(octet_length(${asText(dialect, c)}), 0)`;
  return readColumns(t).map(bytes).join(" + ");
}

/** A cell as text, whatever its type: MySQL casts to CHAR (its TEXT is no type to cast to). */
const asText = (dialect: Driver["dialect"], column: string) => `CAST(${quote(column)} AS ${dialect === "mysql" ? "CHAR" : "TEXT"})`;

/** `column direction` with NULLs last: MySQL has no NULLS LAST (its DESC puts them last by itself). */
function nullsLast(dialect: Driver["dialect"], column: string, direction: "ASC" | "DESC"): string {
  if (dialect !== "mysql") return `${column} ${direction} NULLS LAST`;
  return direction === "DESC" ? `${column} DESC` : `${column} IS NULL, ${column} ASC`;
}

/** A cell's first SEARCH_CELL_CHARS characters, never half of a surrogate pair (text.ts cutText segments graphemes: ~0.2 s a question for 20 such cells). */
function headOf(text: string): string {
  if (text.length <= SEARCH_CELL_CHARS) return text;
  const high = text.charCodeAt(SEARCH_CELL_CHARS - 1);
  return text.slice(0, high >= 0xd800 && high <= 0xdbff ? SEARCH_CELL_CHARS - 1 : SEARCH_CELL_CHARS);
}

/**
 * A SQLite cell as a search reads it (named as the column): a text or BLOB of its first bytes,
 * as many as SEARCH_CELL_CHARS characters take at most (UTF-8), cut to those characters as it
 * arrives (toRecord). By bytes: SQLite's length() and substr() of a text stop at its first NUL.
 */
function headOfCell(column: string): string {
  const c = quote(column);
  const bytes = 4 * SEARCH_CELL_CHARS;
  return `CASE WHEN typeof(${c}) = 'text' AND octet_length(${c}) > ${bytes} THEN CAST(substr(CAST(${c} AS BLOB), 1, ${bytes}) AS TEXT)
    WHEN typeof(${c}) = 'blob' AND length(${c}) > ${bytes} THEN substr(${c}, 1, ${bytes}) ELSE ${c} END AS ${c}`;
}

/**
 * A SQLite table's read for `q` (selectInWindows), as it is posted to the SQLite reader: plain
 * values only (a structured clone), TableQuery's other fields left out.
 */
const windowed = (t: SqlTable, q: TableQuery, key: string, limit: number): WindowedQuery => ({
  table: t.name,
  key,
  columns: q.columns,
  where: q.where,
  params: q.params,
  order: q.order,
  limit,
  bytes: searchedBytes(t),
});

/** The bytes a search's LIKE reads of a SQLite row (its title and text cells), as SQL that reads no cell (octet_length). */
const searchedBytes = (t: SqlTable) => [...new Set([t.title, ...t.text])].map((c) => `COALESCE(octet_length(${quote(c)}), 0)`).join(" + ");

/** The columns a table's rows are read with, each once. */
const readColumns = (t: SqlTable) => [...new Set([t.id, t.title, ...t.text, ...(t.date ? [t.date] : [])])];

/**
 * A server's error about the statement, the connection itself alive. PostgreSQL: any SQLSTATE but a
 * connection exception (08), insufficient resources (53) and the server going away (57P: admin
 * or crash shutdown); a statement cancelled for its time (57014) is about the statement. MySQL:
 * any error number the server sent but those of MYSQL_CONNECTION_ERRORS and SQLSTATE 08.
 */
function answeredByServer(error: unknown): boolean {
  const mysql = mysqlServerError(error);
  if (mysql) return !MYSQL_CONNECTION_ERRORS.has(mysql.errno) && !mysql.sqlState.startsWith("08");
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && !/^(08|53|57P)/.test(code);
}

/** Rows read at most for a table's search, as a multiple of its limit, while too few hold the words whole (holdsWholeWord). */
const WHOLE_WORD_READS = 16;
const WORD_CHARACTER = /[\p{L}\p{N}]/u;
/**
 * Whether a row's searched cells hold one of the needles (none: every row) as a whole word, folded
 * as the index folds words: "France" is no "319 N. Frances Street", "Mark" no "Denmark". The
 * engines' LIKE, GLOB and ~* find a needle inside a word; the row they find is kept only so,
 * or when a cell was read cut (SEARCH_CELL_CHARS): the engine's match may be past what is read.
 */
function holdsWholeWord(t: SqlTable, row: Row, needles: string[]): boolean {
  const cells = [...new Set([t.title, ...t.text])].map((c) => String(row[c] ?? ""));
  if (needles.length === 0 || cells.some((cell) => cell.length >= SEARCH_CELL_CHARS - 1)) return true;
  const text = cells.map(foldText).join("\n");
  return needles.some((needle) => holdsAsWord(text, foldText(needle)));
}

/**
 * Whether `text` holds `word` with no letter or digit either side, in time linear in both (Knuth,
 * Morris and Pratt): a search at each place it starts (indexOf) compared a question's word of
 * 4,000 "a" with all of a cell of 8,000 "a" at each of 4,000 places, ~1.5 s of the serving thread
 * for 20 such rows (D31).
 */
export function holdsAsWord(text: string, word: string): boolean {
  const m = word.length;
  if (m === 0) return false;
  // By length of word read, the longest proper prefix of it that is also its suffix.
  const border = new Int32Array(m);
  for (let i = 1, k = 0; i < m; i++) {
    while (k > 0 && word.charCodeAt(i) !== word.charCodeAt(k)) k = border[k - 1]!;
    if (word.charCodeAt(i) === word.charCodeAt(k)) k++;
    border[i] = k;
  }
  for (let i = 0, k = 0; i < text.length; i++) {
    while (k > 0 && text.charCodeAt(i) !== word.charCodeAt(k)) k = border[k - 1]!;
    if (text.charCodeAt(i) === word.charCodeAt(k)) k++;
    if (k < m) continue;
    const at = i - m + 1;
    if (!WORD_CHARACTER.test(text[at - 1] ?? "") && !WORD_CHARACTER.test(text[i + 1] ?? "")) return true;
    k = border[k - 1]!;
  }
  return false;
}

/**
 * Characters of a needle asked of the engine: a class of forms is up to ~330 bytes a character
 * (fold.ts), and SQLite refuses a GLOB over 50,000 bytes, MariaDB a REGEXP of ~200 KB (a word of
 * 1,500 "ß" failed the question, and closed SQLite's connection, as "cannot be reached"). A
 * longer needle is asked by its start; the rows found hold it all or are dropped (holdsWholeWord).
 */
const MAX_PATTERN_CHARS = 64;

/** The needle asked of the engine (its first MAX_PATTERN_CHARS characters) and its LIKE pattern, folded (fold.ts). */
function likePattern(whole: string): { needle: string; pattern: string } {
  const needle = [...whole].slice(0, MAX_PATTERN_CHARS).join("");
  return { needle, pattern: `%${foldedNeedle(needle).replace(/[\\%_]/g, (m) => `\\${m}`)}%` };
}

/** SQL: whether a cell (as text) holds a character outside ASCII, or a NUL (length() stops there): its characters fewer than its bytes. */
const wide = (cell: string) => `length(${cell}) < octet_length(${cell})`;

/**
 * SQLite: a row's `cells` (as SQL text) hold one of `words`, folded as the index folds them
 * (holdsFolded). SQLite's GLOB of classes costs 20-50 times its LIKE (200,000 rows: ~1.8 s, LIKE
 * ~40 ms): a cell of ASCII alone (its characters as many as its bytes) is compared by LIKE, which
 * folds ASCII's case; only a cell with another character pays the GLOB (10% of them: ~0.23 s), its
 * letters of two that the needle's folding holds written out first (fold.ts spelledIn: letters
 * only, written in the statement). The LIKEs come first, then, only in a row with such a cell
 * (asked once of the row's cells joined), each cell's GLOB: asking each word of each cell whether
 * it was ASCII was 2/3 of the statement's CPU (Chinook's 412 invoices, 4 words: ~1.7 of 2.4 ms).
 */
function sqliteHolds(words: string[], cells: string[], bind: (value: unknown) => string): string {
  const asked = words.map((w) => ({ ...likePattern(w), glob: "" }));
  const likes = asked.flatMap(({ pattern }) => cells.map((cell) => `${cell} LIKE ${bind(pattern)} ESCAPE '\\'`));
  const row = cells.map((cell) => `COALESCE(${cell}, '')`).join(" || ");
  const globs = asked.flatMap(({ needle }) => {
    const spelled = spelledIn(needle);
    const glob = foldedGlob(needle);
    return cells.map((cell) => {
      const written = spelled.reduce((text, [letter, folded]) => `replace(${text}, '${letter}', '${folded}')`, cell);
      return `(${wide(cell)} AND ${written} GLOB ${bind(glob)})`;
    });
  });
  return `(${likes.join(" OR ")} OR (${wide(row)} AND (${globs.join(" OR ")})))`;
}

/**
 * A condition that a cell (as SQL text) holds the needle (its first MAX_PATTERN_CHARS
 * characters), accents and case folded on both sides as the index folds them (fold.ts), in a
 * server's way (SQLite's: sqliteHolds); its values bound with `bind`.
 */
function holdsFolded(dialect: "postgres" | "mysql", whole: string, bind: (value: unknown) => string): (cell: string) => string {
  const { needle, pattern } = likePattern(whole);
  // MySQL: its collation folds accents and case, but keeps "ł" or "ø" a letter of its own and its
  // LIKE compares "ß" with one letter: a cell holding such a letter that the needle's folding may
  // stand for (fold.ts unmarkedIn) is also asked the regular expression PostgreSQL is. A full scan
  // of 200,000 rows, 10% of them with a letter outside ASCII: x1.2 the LIKE alone, where asking
  // each of those 10% the expression was x1.5.
  if (dialect === "mysql") {
    const unmarked = unmarkedIn(needle);
    const regex = unmarked && foldedRegex(needle);
    return (cell) => {
      const text = `CONVERT(${cell} USING utf8mb4) COLLATE utf8mb4_unicode_ci`;
      const like = `${text} LIKE ${bind(pattern)} ESCAPE '\\'`;
      return regex ? `(${like} OR (${text} REGEXP ${bind(unmarked)} AND ${text} REGEXP ${bind(regex)}))` : like;
    };
  }
  // PostgreSQL's placeholders are numbered: the value bound once for every column.
  const regex = bind(foldedRegex(needle));
  return (cell) => `${cell} ~* ${regex}`;
}
