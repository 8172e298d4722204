// The connectors of every user, and the operator's (CORPUS_CONNECTORS_FILE) that every user
// sees (D18). A user's connector configs are stored sealed with the user's data key, since
// they hold passwords and database URLs (D20); what is shown is the config without secrets.
// Local paths that users add must lie under their own CORPUS_CONNECTOR_ROOTS ({user}), never in
// the data dir; they are kept as their realpath and checked again on every scan and read (D23).
import type { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { isAbsolute } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { Value } from "@sinclair/typebox/value";
import { OPERATOR_OWNER } from "../auth/subjects";
import { type Config, ConfigError } from "../config";
import { NoUserKey, type UserKeys } from "../crypto/user-keys";
import type { EmbeddingService } from "../embedding/service";
import { DomainError } from "../errors";
import { type BackgroundGuard, errorSummary } from "../jobs/guard";
import type { Logger } from "../log";
import { type Pin, pinner } from "../net/pin";
import { embeddingText, recordChunks } from "../retrieval/chunk";
import type { DiskSpace } from "../store/disk-space";
import type { Migration } from "../store/migrations";
import { Scrub } from "../store/scrub";
import { ConnectorExists, ConnectorNotFound, OperatorConnector } from "./errors";
import { createFilesConnector } from "./files/connector";
import { type ImapConfig, ImapConnector } from "./imap/connector";
import type { IndexedOptions } from "./indexed-source";
import { dropIndex, indexKeysFor, indexOwesWork, LocalIndex, owedChunks, purgeTerms } from "./local-index";
import { createMaildirConnector } from "./maildir/connector";
import { CONFIG_SCHEMAS, CONNECTOR_ID_PATTERN, type ConnectorViewT, type CreateConnector, type UpdateConnector } from "./model";
import { type Confine, confine, type PathPolicy, PathRefused, recheck, rootsFor, sharedRoots } from "./paths";
import { checkRemoteForm, checkRemoteHost, OPERATOR_PIN, userHostPolicy } from "./remote";
import { isPostgresUrl, redactUrl, type SqlConfig, SqlConnector } from "./sql/connector";
import { CONNECTOR_KINDS, type Connector, type ConnectorKind, type ConnectorStatus } from "./types";

export const registryMigrations: Migration[] = [
  {
    id: "connectors-002-registry",
    up(db) {
      db.exec(`CREATE TABLE connectors (
        user_id TEXT NOT NULL,
        id TEXT NOT NULL,
        kind TEXT NOT NULL,
        label TEXT NOT NULL,
        config BLOB NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (user_id, id)
      )`);
    },
  },
];

const OPERATOR = OPERATOR_OWNER;
/** What the stored IMAP password is bound to: changing any of these needs the password again. */
const IMAP_SECRET_BOUND = ["host", "port", "secure", "user"] as const;
const STATUS_TTL_MS = 10_000;
const HEALTH_TIMEOUT_MS = 8_000;
/**
 * How long a request waits for a connector's first check before answering "checking": the whole
 * check, unless half of CORPUS_REQUEST_TIMEOUT is shorter, so that an add or the first list
 * never runs into the request timeout (a retry of that add then found the connector saved: 409).
 */
export const firstCheckWaitMs = (requestTimeoutSeconds: number) => Math.min(HEALTH_TIMEOUT_MS, (requestTimeoutSeconds * 1000) / 2);
export const CHECKING: ConnectorStatus = Object.freeze({ status: "checking", reason: "the connection is being checked" });

interface Definition {
  owner: string;
  id: string;
  kind: ConnectorKind;
  label: string;
  config: Record<string, unknown>;
  created_at?: string;
}

/** A connector ready to search, with what the user calls it. */
export interface ActiveConnector {
  id: string;
  kind: ConnectorKind;
  label: string;
  owner: "user" | "operator";
  connector: Connector;
}

/** The config as shown: no password, no credentials in URLs. */
export function publicConfig(kind: ConnectorKind, config: Record<string, unknown>): Record<string, unknown> {
  if (kind === "imap") {
    const { password: _password, ...rest } = config;
    return rest;
  }
  if (kind === "sql") return { ...config, url: redactUrl(String(config.url)) };
  return config;
}

function validateConfig(kind: ConnectorKind, config: unknown, where: string): Record<string, unknown> {
  const schema = CONFIG_SCHEMAS[kind];
  const withDefaults = Value.Default(schema, structuredClone(config));
  const error = Value.Errors(schema, withDefaults).First();
  if (error) {
    const field = error.path ? `${where}${error.path.replaceAll("/", ".")}` : where;
    throw new DomainError("invalid", `${field}: ${error.message.charAt(0).toLowerCase()}${error.message.slice(1)}`);
  }
  checkRemoteForm(kind, withDefaults as Record<string, unknown>);
  return withDefaults as Record<string, unknown>;
}

/** The config field that holds a local path (files, maildir, a SQLite file), if any. */
function localPathOf(kind: ConnectorKind, config: Record<string, unknown>): "path" | "url" | undefined {
  if (kind === "maildir" || kind === "files") return "path";
  if (kind === "sql" && !isPostgresUrl(String(config.url))) return "url";
  return undefined;
}

export class ConnectorRegistry {
  private readonly operators: Definition[];
  private readonly live = new Map<string, Connector>();
  private readonly statuses = new Map<string, { at: number; status: ConnectorStatus }>();
  /** Health checks under way, by connector. */
  private readonly checking = new Map<string, Promise<ConnectorStatus>>();
  /** Users' IMAP and PostgreSQL hosts: public, or listed in CORPUS_CONNECTOR_ALLOW_HOSTS (D26). */
  private readonly userPin: Pin;

  constructor(
    private readonly db: Database,
    private readonly keys: UserKeys,
    private readonly config: Config,
    private readonly log: Logger,
    private readonly embeddings?: EmbeddingService,
    /** The clock of indexing progress (rates, times left, when a phase started). */
    private readonly now: () => number = Date.now,
    /** Free space and the background guard: indexing pauses while the disk cannot take writes (D29). */
    private readonly storage?: { disk: DiskSpace; guard: BackgroundGuard },
    /** What a removal still owes once committed (word index purge, WAL truncated). */
    private readonly scrub: Scrub = new Scrub(db, [() => purgeTerms(db, true)], now),
  ) {
    this.userPin = pinner(userHostPolicy(config.CORPUS_CONNECTOR_ALLOW_HOSTS));
    this.operators = config.CORPUS_CONNECTORS_FILE ? this.loadOperatorFile(config.CORPUS_CONNECTORS_FILE) : [];
    for (const root of sharedRoots(config.connectorRoots))
      log.warning("CORPUS_CONNECTOR_ROOTS entry without {user} is shared: every user may connect and read what is under it", { root });
  }

  private loadOperatorFile(path: string): Definition[] {
    let list: unknown;
    try {
      list = JSON.parse(readFileSync(path, "utf8"));
    } catch {
      throw new ConfigError(`CORPUS_CONNECTORS_FILE=${JSON.stringify(path)} is not allowed: expected a readable JSON file`);
    }
    if (!Array.isArray(list))
      throw new ConfigError(`CORPUS_CONNECTORS_FILE=${JSON.stringify(path)} is not allowed: expected a JSON array of connectors`);
    const seen = new Set<string>();
    return list.map((item, i) => {
      const c = item as Partial<CreateConnector>;
      const fail = (why: string) =>
        new ConfigError(`CORPUS_CONNECTORS_FILE=${JSON.stringify(path)} is not allowed: connector ${i + 1}: ${why}`);
      if (typeof c.id !== "string" || !new RegExp(CONNECTOR_ID_PATTERN).test(c.id)) throw fail(`id must match ${CONNECTOR_ID_PATTERN}`);
      if (seen.has(c.id)) throw fail(`id ${c.id} is listed twice`);
      seen.add(c.id);
      if (!CONNECTOR_KINDS.includes(c.kind as ConnectorKind)) throw fail(`kind must be one of ${CONNECTOR_KINDS.join(", ")}`);
      let config: Record<string, unknown>;
      try {
        config = validateConfig(c.kind as ConnectorKind, c.config, "config");
      } catch (error) {
        throw fail((error as Error).message);
      }
      return { owner: OPERATOR, id: c.id, kind: c.kind as ConnectorKind, label: c.label ?? c.id, config };
    });
  }

  private userDefinitions(user: string): Definition[] {
    return this.db
      .query<{ id: string; kind: ConnectorKind; label: string; config: Uint8Array; created_at: string }, [string]>(
        "SELECT id, kind, label, config, created_at FROM connectors WHERE user_id = ? ORDER BY created_at, id",
      )
      .all(user)
      .map((r) => ({
        owner: user,
        id: r.id,
        kind: r.kind,
        label: r.label,
        created_at: r.created_at,
        config: JSON.parse(this.keys.openFor(user, r.config, `connector/${r.id}`).toString("utf8")),
      }));
  }

  private definitions(user: string): Definition[] {
    return [...this.operators, ...this.userDefinitions(user)];
  }

  /** The user's valid connector ids (operator ones included), for messages (D10). */
  ids(user: string): string[] {
    return this.definitions(user).map((d) => d.id);
  }

  private instance(d: Definition): Connector {
    const key = `${d.owner}/${d.id}`;
    let c = this.live.get(key);
    if (c) return c;
    const embeddings = this.embeddings;
    const index = () =>
      new LocalIndex(
        this.db,
        key,
        // Only the operator's index may make its key: a user's is made when they add a connector.
        indexKeysFor(this.keys, d.owner, d.id, d.owner === OPERATOR),
        embeddings ? (r) => recordChunks(r, embeddings.tokenizer).map((c) => embeddingText(r.title, c)) : undefined,
      );
    switch (d.kind) {
      case "maildir":
        c = createMaildirConnector(String(d.config.path), index(), this.indexedOptions(d));
        break;
      case "files":
        c = createFilesConnector(String(d.config.path), index(), this.indexedOptions(d));
        break;
      case "imap":
        c = new ImapConnector(d.config as unknown as ImapConfig, { pin: this.pinFor(d.owner) });
        break;
      case "sql":
        c = new SqlConnector(d.config as unknown as SqlConfig, this.checkerFor(d.owner), { pin: this.pinFor(d.owner) });
        break;
    }
    this.live.set(key, c);
    return c;
  }

  private indexedOptions(d: Definition): IndexedOptions {
    const storage = this.storage;
    return {
      embeddings: this.embeddings?.forOwner(d.owner),
      log: this.log.child(`connectors.${d.id}`),
      check: this.checkerFor(d.owner),
      now: this.now,
      ...(storage
        ? {
            space: storage.disk,
            schedule: storage.guard.schedule,
            report: (error?: unknown) => storage.guard.report(`connector_indexing ${d.id}`, error),
          }
        : {}),
    };
  }

  /**
   * A connector's status. A remote source's check can take up to HEALTH_TIMEOUT_MS: once one is
   * known, it is served at once and, when older than STATUS_TTL_MS, checked again in the
   * background (one check at a time per connector), so that a list never waits on the slowest
   * source (issue 18 gap 8). Only a connector never checked in this process, or `fresh`, waits.
   */
  private async status(d: Definition, fresh = false): Promise<ConnectorStatus> {
    const key = `${d.owner}/${d.id}`;
    const cached = this.statuses.get(key);
    // Local indexes answer from memory and their own tables: always asked, so progress is live.
    const local = this.instance(d).progress !== undefined;
    if (local) return this.check(d);
    if (!fresh && cached) {
      if (this.now() - cached.at >= STATUS_TTL_MS) void this.check(d).catch(() => {});
      return cached.status;
    }
    // Never checked (or asked fresh, when added): the check's answer if it comes soon, else "checking".
    let timer: ReturnType<typeof setTimeout> | undefined;
    const soon = new Promise<ConnectorStatus>(
      (r) => (timer = setTimeout(() => r(cached?.status ?? CHECKING), firstCheckWaitMs(this.config.CORPUS_REQUEST_TIMEOUT))),
    );
    return Promise.race([this.check(d), soon]).finally(() => clearTimeout(timer));
  }

  /** Asks the source (bounded by HEALTH_TIMEOUT_MS); concurrent asks of one connector share the answer. */
  private check(d: Definition): Promise<ConnectorStatus> {
    const key = `${d.owner}/${d.id}`;
    const running = this.checking.get(key);
    if (running) return running;
    const instance = this.instance(d);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const checked = Promise.race([
      instance.health(),
      new Promise<ConnectorStatus>(
        (r) =>
          (timer = setTimeout(() => r({ status: "error", reason: `no answer within ${HEALTH_TIMEOUT_MS / 1000} s` }), HEALTH_TIMEOUT_MS)),
      ),
    ])
      .then((status) => {
        const before = this.statuses.get(key);
        // A connector removed while it was being checked keeps no status.
        if (this.live.get(key) === instance) this.statuses.set(key, { at: this.now(), status });
        // Only the log says why an operator connector fails: the health route and the users' list do not.
        if (d.owner === OPERATOR && status.status === "error" && before?.status.status !== "error") {
          this.log.warning("operator connector in error", { connector: d.id, reason: status.reason ?? null });
        }
        return status;
      })
      .finally(() => {
        clearTimeout(timer);
        if (this.checking.get(key) === checked) this.checking.delete(key);
      });
    this.checking.set(key, checked);
    return checked;
  }

  private async view(d: Definition, fresh = false): Promise<ConnectorViewT> {
    const s = await this.status(d, fresh);
    // The operator's connectors are shown to every user: what they are and whether they work,
    // never their config or the reason of an error (it names hosts, users and URLs).
    if (d.owner === OPERATOR) {
      return {
        id: d.id,
        kind: d.kind,
        label: d.label,
        owner: "operator",
        status: s.status,
        ...(s.records !== undefined ? { records: s.records } : {}),
        ...this.progressOf(d, s),
      };
    }
    return {
      id: d.id,
      kind: d.kind,
      label: d.label,
      owner: d.owner === OPERATOR ? "operator" : "user",
      status: s.status,
      ...(s.reason ? { reason: s.reason } : {}),
      ...(s.records !== undefined ? { records: s.records } : {}),
      ...this.progressOf(d, s),
      config: publicConfig(d.kind, d.config),
      ...(d.created_at ? { created_at: d.created_at } : {}),
    };
  }

  /**
   * Counts of indexed connectors (chunks embedded of total) and the phase under way. Only
   * counts, rates and times: shown for the operator's connectors too, they name no host or path.
   */
  private progressOf(d: Definition, s: ConnectorStatus): Pick<ConnectorViewT, "indexed" | "progress"> {
    const p = this.live.get(`${d.owner}/${d.id}`)?.progress?.();
    return { ...(p ? { indexed: { chunks: p.total, embedded: p.embedded } } : {}), ...(s.progress ? { progress: s.progress } : {}) };
  }

  async list(user: string): Promise<ConnectorViewT[]> {
    return Promise.all(this.definitions(user).map((d) => this.view(d)));
  }

  /** Where `owner` may point local connectors (D23): the operator anywhere but the data folder. */
  private pathPolicy(owner: string): PathPolicy {
    const dataDir = this.config.CORPUS_DATA_DIR;
    return owner === OPERATOR ? { dataDir } : { dataDir, ...rootsFor(this.config.connectorRoots, owner) };
  }

  /** How `owner`'s network connectors resolve and check their host: the operator's may reach any address. */
  private pinFor(owner: string): Pin {
    return owner === OPERATOR ? OPERATOR_PIN : this.userPin;
  }

  /** The check a connector asks before each scan, read or open. Users' paths are kept as their realpath. */
  private checkerFor(owner: string): Confine {
    return owner === OPERATOR ? (path) => confine(path, this.pathPolicy(owner)) : (path) => recheck(path, this.pathPolicy(owner));
  }

  /** The realpath of a local path `user` adds: it must exist and lie under their roots. */
  private checkLocalPath(user: string, path: string): string {
    if (!isAbsolute(path)) throw new DomainError("invalid", "config: the path must be absolute");
    try {
      return confine(path, this.pathPolicy(user));
    } catch (error) {
      if (error instanceof PathRefused) throw new DomainError(error.status === 403 ? "forbidden" : "invalid", error.message);
      throw error;
    }
  }

  /**
   * `stillAllowed` is called right before the insert (the caller's revocation check): the host
   * check awaits a name lookup, and a deletion of the user may land meanwhile.
   */
  async add(user: string, input: CreateConnector, stillAllowed: () => void = () => {}): Promise<ConnectorViewT> {
    const existing = this.userDefinitions(user).find((x) => x.id === input.id);
    if (!existing) this.assertIdFree(user, input.id);
    const config = validateConfig(input.kind, input.config, "config");
    const local = localPathOf(input.kind, config);
    if (local) config[local] = this.checkLocalPath(user, String(config[local]));
    // The same connector sent again (a retry after a timeout or a lost answer: the first was
    // saved) is answered as it stands, not refused: only another connector under a taken id is 409.
    if (existing) {
      if (existing.kind === input.kind && existing.label === (input.label ?? input.id) && isDeepStrictEqual(existing.config, config))
        return this.view(existing);
      this.assertIdFree(user, input.id);
    }
    await checkRemoteHost(input.kind, config, this.pinFor(user));
    // Decided again right before the insert, with no await between: a concurrent add of the
    // same id, one past the cap, or a deletion of the user cannot slip in.
    stillAllowed();
    this.assertIdFree(user, input.id);
    this.assertBelowCap(user);
    const d: Definition = {
      owner: user,
      id: input.id,
      kind: input.kind,
      label: input.label ?? input.id,
      config,
      created_at: new Date().toISOString(),
    };
    this.db
      .query("INSERT INTO connectors (user_id, id, kind, label, config, created_at) VALUES (?, ?, ?, ?, ?, ?)")
      .run(user, d.id, d.kind, d.label, this.keys.sealFor(user, JSON.stringify(config), `connector/${d.id}`), d.created_at!);
    const view = await this.view(d, true);
    this.log.info("connector added", { connector: d.id, kind: d.kind, status: view.status });
    return view;
  }

  /**
   * Changes a user's connector (D5, D22 "configure"): its label, and its config merged over the
   * stored one, so a secret left out (the IMAP password) or sent back as shown (a database
   * URL's `***`) is kept. A changed config is checked as on add and the source is read afresh
   * (its old index dropped); a label alone changes nothing else.
   */
  async update(user: string, id: string, input: UpdateConnector, stillAllowed: () => void = () => {}): Promise<ConnectorViewT> {
    if (this.operators.some((o) => o.id === id)) throw new OperatorConnector(id, "changed in");
    const stored = this.userDefinitions(user).find((x) => x.id === id);
    if (!stored) throw new ConnectorNotFound(id, this.ids(user));
    let config = stored.config;
    if (input.config) {
      const given = { ...input.config };
      // A kept secret goes only where it went before: a token that may change connectors must
      // not be able to send the stored password to another server, or over plain text.
      if (
        stored.kind === "sql" &&
        typeof given.url === "string" &&
        given.url.includes("***") &&
        redactUrl(given.url) === redactUrl(String(stored.config.url))
      )
        given.url = stored.config.url;
      if (stored.kind === "imap" && given.password === undefined) {
        const moved = IMAP_SECRET_BOUND.filter((k) => k in given && !Bun.deepEquals(given[k], stored.config[k]));
        if (moved.length)
          throw new DomainError(
            "invalid",
            `config.password: give the password again to change ${moved.join(", ")}; the stored one is sent only where it was sent before`,
          );
      }
      config = validateConfig(stored.kind, { ...stored.config, ...given }, "config");
      const local = localPathOf(stored.kind, config);
      if (local) config[local] = this.checkLocalPath(user, String(config[local]));
      await checkRemoteHost(stored.kind, config, this.pinFor(user));
    }
    const sourceChanged = !Bun.deepEquals(config, stored.config);
    const d: Definition = { ...stored, label: input.label ?? stored.label, config };
    stillAllowed();
    const row = this.db
      .query("UPDATE connectors SET label = ?, config = ? WHERE user_id = ? AND id = ?")
      .run(d.label, this.keys.sealFor(user, JSON.stringify(config), `connector/${id}`), user, id);
    if (row.changes === 0) throw new ConnectorNotFound(id);
    if (sourceChanged) await this.forget(user, id);
    const view = await this.view(d, sourceChanged);
    this.log.info("connector changed", { connector: id, kind: d.kind, source_changed: sourceChanged, status: view.status });
    return view;
  }

  private assertIdFree(user: string, id: string): void {
    if (this.ids(user).includes(id)) throw new ConnectorExists(id);
  }

  /** CORPUS_MAX_CONNECTORS_PER_USER: the user's own connectors (the operator's are not theirs). */
  private assertBelowCap(user: string): void {
    const max = this.config.CORPUS_MAX_CONNECTORS_PER_USER;
    const { n } = this.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM connectors WHERE user_id = ?").get(user)!;
    if (n >= max)
      throw new DomainError(
        "conflict",
        `you have ${n} connectors, the most allowed (CORPUS_MAX_CONNECTORS_PER_USER=${max}); remove one before adding another`,
      );
  }

  async remove(user: string, id: string): Promise<void> {
    if (this.operators.some((o) => o.id === id)) throw new OperatorConnector(id, "removed from");
    const d = this.userDefinitions(user).find((x) => x.id === id);
    if (!d) throw new ConnectorNotFound(id, this.ids(user));
    await this.forget(user, d.id, () => this.db.query("DELETE FROM connectors WHERE user_id = ? AND id = ?").run(user, id));
    this.log.info("connector removed", { connector: id });
  }

  /**
   * Drops a connector's index (with `alsoRemove`, in the same transaction) and owes the scrub
   * there too: the word index rewritten without its terms, and old page images of the index out
   * of the WAL. Paid right after, or at the next start (D29).
   */
  private async forget(owner: string, id: string, alsoRemove: () => void = () => {}): Promise<void> {
    const key = `${owner}/${id}`;
    const c = this.live.get(key);
    this.live.delete(key);
    this.statuses.delete(key);
    this.checking.delete(key);
    await c?.close().catch(() => {});
    this.db.transaction(() => {
      dropIndex(this.db, key);
      alsoRemove();
      this.scrub.owe();
    })();
    try {
      // On a full disk the reserve is freed for it, as for a user's deletion.
      if (this.storage) this.storage.disk.withReserve(() => this.scrub.pay());
      else this.scrub.pay();
    } catch (error) {
      this.log.warning("connector scrub owed; tried again shortly", errorSummary(error));
    }
  }

  /** The user's connectors to search: all, or those named (unknown ids are 400, D10). */
  active(user: string, ids?: string[]): ActiveConnector[] {
    const all = this.definitions(user);
    if (ids) {
      const unknown = ids.filter((i) => !all.some((d) => d.id === i));
      if (unknown.length)
        throw new DomainError(
          "invalid",
          `connectors: unknown connector id ${unknown.join(", ")}; valid ids: ${all.map((d) => d.id).join(", ") || "none"}`,
        );
    }
    return all
      .filter((d) => !ids || ids.includes(d.id))
      .map((d) => ({
        id: d.id,
        kind: d.kind,
        label: d.label,
        owner: d.owner === OPERATOR ? "operator" : "user",
        connector: this.instance(d),
      }));
  }

  /**
   * Starts now, rather than at their first use, every local connector (the operator's and every
   * user's) whose index still owes work (D29): chunks without a vector, or no record yet (a first
   * scan cut short). Starting one scans its folder and embeds what waits. Returns how many started.
   */
  resumeOwed(): number {
    const local = (kind: ConnectorKind) => kind === "files" || kind === "maildir";
    const owed = (owner: string, id: string) => !this.live.has(`${owner}/${id}`) && indexOwesWork(this.db, `${owner}/${id}`);
    const due: Definition[] = this.operators.filter((d) => local(d.kind) && owed(d.owner, d.id));
    const rows = this.db
      .query<{ user_id: string; id: string }, []>(
        "SELECT user_id, id FROM connectors WHERE kind IN ('files', 'maildir') ORDER BY user_id, created_at",
      )
      .all();
    const users = new Set(rows.filter((r) => owed(r.user_id, r.id)).map((r) => r.user_id));
    for (const user of users) {
      try {
        due.push(...this.userDefinitions(user).filter((d) => local(d.kind) && owed(d.owner, d.id)));
      } catch (error) {
        // A user deleted meanwhile owes nothing; anything else waits for the connector's first use.
        if (!(error instanceof NoUserKey)) this.log.warning("owed connector work not resumed", errorSummary(error));
      }
    }
    for (const d of due) this.instance(d);
    return due.length;
  }

  /** Chunks of every connector still waiting for their vector (D29). */
  owedChunks(): number {
    return owedChunks(this.db);
  }

  /**
   * Operator connectors in error make the connectors service unhealthy. The route needs no
   * token, so the reason is only a count: which ones fail and why is in the log (WARNING).
   */
  async operatorHealth(): Promise<{ healthy: boolean; reason?: string }> {
    const statuses = await Promise.all(this.operators.map((d) => this.status(d)));
    const failing = statuses.filter((s) => s.status === "error").length;
    return failing
      ? { healthy: false, reason: `${failing} of ${statuses.length} operator connectors in error; see the log` }
      : { healthy: true };
  }

  /** Closes the live connections of `user`'s connectors (after their rows are deleted). */
  async closeUser(user: string): Promise<void> {
    for (const [key, c] of [...this.live]) {
      // Exactly this owner: ids never hold "/", so the owner is what precedes the last one.
      if (key.slice(0, key.lastIndexOf("/")) !== user) continue;
      this.live.delete(key);
      this.statuses.delete(key);
      this.checking.delete(key);
      await c.close().catch(() => {});
    }
  }

  /** After a user's indexes were dropped: their terms leave the word index for good. */
  purgeRemovedTerms(): void {
    purgeTerms(this.db, true);
  }

  /** The connector rows and index entries of `user` (a deletion asks every room, after it erased, that nothing is left). */
  rowsOf(user: string): number {
    return this.db
      .query<{ n: number }, [string]>(
        "SELECT (SELECT count(*) FROM connectors WHERE user_id = ?1) + (SELECT count(*) FROM connector_docs WHERE substr(owner, 1, length(?1) + 1) = ?1 || '/') AS n",
      )
      .get(user)!.n;
  }

  /** Every connector row and index entry of `user` (D13), inside the caller's transaction. */
  deleteUserRows(user: string): number {
    const ids = this.db.query<{ id: string }, [string]>("SELECT id FROM connectors WHERE user_id = ?").all(user);
    for (const { id } of ids) dropIndex(this.db, `${user}/${id}`);
    return this.db.query("DELETE FROM connectors WHERE user_id = ?").run(user).changes;
  }

  async close(): Promise<void> {
    await Promise.all([...this.live.values()].map((c) => c.close().catch(() => {})));
    this.live.clear();
  }
}
