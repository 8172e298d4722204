// The connectors of every user, and the operator's (CORPUS_CONNECTORS_FILE) that every user
// sees (D18): adding, changing and removing them, their live instances, and what is shown of
// them. What a kind is and does comes from its record (kinds.ts); stored rows (rows.ts), the
// operator file (operator-file.ts), what an owner may reach (owner-access.ts) and statuses
// (status-cache.ts) each live in their own file.
import type { Database } from "bun:sqlite";
import { isDeepStrictEqual } from "node:util";
import { OPERATOR_OWNER } from "../auth/subjects";
import type { Config } from "../config";
import { NoUserKey, type UserKeys } from "../crypto/user-keys";
import type { EmbeddingService } from "../embedding/service";
import { DomainError } from "../errors";
import { type BackgroundGuard, errorSummary } from "../jobs/guard";
import type { NodeLeases } from "../jobs/leases";
import type { Logger } from "../log";
import type { DiskSpace } from "../store/disk-space";
import { Scrub } from "../store/scrub";
import { type Awaitable, andThen, atOnce } from "../store/shared";
import { changedConfig, type Definition, publicConfig, validateConfig } from "./definition";
import { AHEAD_PAUSED, AHEAD_REFRESH_MS, AHEAD_RETRY_MS, embedAhead } from "./embed-ahead";
import { ConnectorExists, ConnectorNotFound, ConnectorsClosing, OperatorConnector } from "./errors";
import { grantBinding, type ImapConfig, signsInWithOAuth } from "./imap/config";
import { type IndexedFolderConnector, type IndexedOptions, indexLeaseName } from "./indexed-source";
import type { KindContext } from "./kind";
import { CONNECTOR_KINDS, type ConnectorKind, KINDS } from "./kinds";
import { EmbeddedIndexes, type IndexRoom, indexKeysFor } from "./local-index";
import type { ConnectorViewT, CreateConnector, UpdateConnector } from "./model";
import { ConnectorGrants, type GrantBinding, type GrantState } from "./oauth/grants";
import { loadProviders } from "./oauth/providers";
import { loadOperatorFile, operatorFileError } from "./operator-file";
import { OwnerAccess } from "./owner-access";
import { sharedRoots } from "./paths";
import type { PhaseProgress } from "./progress";
import { sharedReader } from "./reading/reader";
import { checkRemoteHost, remoteTarget } from "./remote";
import { type ConnectorRecords, ConnectorRows, SqliteConnectorRecords } from "./rows";
import { StatusCache } from "./status-cache";
import type { Connector, ConnectorStatus, SourceRecord } from "./types";

export { CHECKING, firstCheckWaitMs } from "./status-cache";
export { publicConfig };

const OPERATOR = OPERATOR_OWNER;

/** What an operator connector's grant is bound to, when it signs in with OAuth. */
function operatorBinding(d: Definition): GrantBinding | undefined {
  const config = d.config as ImapConfig;
  return d.kind === "imap" && signsInWithOAuth(config) ? grantBinding(config) : undefined;
}

/** A connector ready to search, with what the user calls it. */
export interface ActiveConnector {
  id: string;
  kind: ConnectorKind;
  label: string;
  owner: "user" | "operator";
  /** Its records' dates are file times: a question's planned dates do not narrow it (its kind's record). */
  datesAreFileTimes: boolean;
  connector: Connector;
}

export interface RegistryOptions {
  db: Database;
  keys: UserKeys;
  config: Config;
  log: Logger;
  /** Without them, nothing is embedded ahead of time. */
  embeddings?: EmbeddingService;
  /** The texts a record is embedded as (retrieval's chunking, injected so that connectors do not depend on it). */
  chunker?: (record: SourceRecord) => string[];
  /** The clock of indexing progress (rates, times left, when a phase started) and of statuses. */
  now?: () => number;
  /** Free space and the background guard: indexing pauses while the disk cannot take writes (D29). */
  storage?: { disk: DiskSpace; guard: BackgroundGuard };
  /** What a removal still owes once committed (word index purge, WAL truncated). */
  scrub?: Scrub;
  /** Several nodes on one database (D33): a connector is indexed by the node holding its lease. None: this node alone. */
  leases?: NodeLeases;
  /** Where the connectors' rows are kept (D33): the shared PostgreSQL's store, or (by default) the embedded database's. */
  records?: ConnectorRecords;
  /** Where the local connectors' indexes are kept (D33): the shared PostgreSQL's, or (by default) the embedded database's. */
  indexes?: IndexRoom;
}

/** A try at embedding a connector's newest records ahead (embed-ahead.ts), as its status shows it. */
/** One connector as the operator's metrics count it: its kind, state and progress, nothing that names it. */
export interface ConnectorStateCount {
  kind: string;
  state: string;
  /** A local index's chunks, and how many of them are embedded. */
  chunks?: number;
  embedded?: number;
  /** The phase under way. */
  progress?: { phase: string; unit: string; done: number; total: number };
}

interface AheadRun {
  connector: Connector;
  work: Promise<void>;
  /** Set once its records are read. */
  progress?: PhaseProgress;
  /**
   * Shown in the connector's status: not a try a question started on the operator's source (a
   * refresh, a retry), whose start would tell every user when someone asked it.
   */
  shown: boolean;
  /** Stopped part-way (a page refused): kept, to show where, until the next try starts. */
  paused: boolean;
}

export class ConnectorRegistry {
  private readonly db: Database;
  private readonly keys: UserKeys;
  private readonly config: Config;
  private readonly log: Logger;
  private readonly embeddings?: EmbeddingService;
  private readonly chunker?: (record: SourceRecord) => string[];
  private readonly now: () => number;
  private readonly storage?: { disk: DiskSpace; guard: BackgroundGuard };
  private readonly scrub: Scrub;
  private readonly leases?: NodeLeases;
  private readonly rows: ConnectorRows;
  /** Every local connector's index (the embedded database's, or the shared PostgreSQL's). */
  readonly indexes: IndexRoom;
  private readonly access: OwnerAccess;
  private readonly statuses: StatusCache;
  private readonly operators: Definition[];
  /** Users' OAuth grants for connectors that sign in with one (issue 38). */
  readonly grants: ConnectorGrants;
  /**
   * Connectors being removed or re-pointed (closed, their index about to go), with the last of
   * the forgets asked for each: one runs after the other, and the id stays hidden and taken
   * until the last has ended.
   */
  private readonly forgetting = new Map<string, Promise<void>>();
  /** Set by close(): nothing is started again. */
  private closing = false;
  private readonly live = new Map<string, Connector>();
  /** The definition each live user connector was started with, and when (a count of starts): dropStale compares them with the rows. */
  private readonly running = new Map<string, { definition: Definition; started: number }>();
  private started = 0;
  /** Connectors whose newest records are being embedded ahead, or whose try stopped part-way, by key (a connector re-pointed meanwhile has its own). */
  private readonly ahead = new Map<string, AheadRun>();
  /** When a connector's newest records are next embedded ahead (this.now()): after a failed try, or to refresh. */
  private readonly aheadNextAt = new Map<string, number>();

  constructor(options: RegistryOptions) {
    ({ db: this.db, keys: this.keys, config: this.config, log: this.log, embeddings: this.embeddings, chunker: this.chunker } = options);
    this.now = options.now ?? Date.now;
    this.storage = options.storage;
    this.leases = options.leases;
    this.indexes = options.indexes ?? new EmbeddedIndexes(this.db);
    this.scrub = options.scrub ?? new Scrub(this.db, [() => this.indexes.purgeTerms()], this.now);
    this.rows = new ConnectorRows(options.records ?? new SqliteConnectorRecords(this.db), this.keys);
    this.access = new OwnerAccess(this.config);
    this.statuses = new StatusCache(this.now, this.config.CORPUS_REQUEST_TIMEOUT);
    this.operators = this.config.CORPUS_CONNECTORS_FILE ? loadOperatorFile(this.config.CORPUS_CONNECTORS_FILE) : [];
    this.grants = new ConnectorGrants({
      rows: this.rows,
      providers: this.config.CORPUS_IMAP_OAUTH_PROVIDERS_FILE ? loadProviders(this.config.CORPUS_IMAP_OAUTH_PROVIDERS_FILE) : new Map(),
      pin: (owner) => this.access.pin(owner),
      publicUrl: this.config.resourceUrl,
      now: this.now,
      log: this.log.child("oauth"),
    });
    // An operator connector that signs in with OAuth names a provider of the providers file,
    // whose tokens may go to its host: one that cannot stops the start, as any bad entry (D1).
    for (const d of this.operators) {
      const binding = operatorBinding(d);
      if (!binding) continue;
      const problem = this.grants.problem(binding);
      if (problem) throw operatorFileError(this.config.CORPUS_CONNECTORS_FILE!, `connector ${d.id}: ${problem}`);
    }
    for (const root of sharedRoots(this.config.connectorRoots))
      this.log.warning("CORPUS_CONNECTOR_ROOTS entry without {user} is shared: every user may connect and read what is under it", {
        root,
      });
  }

  /**
   * The user's connectors: the operator's and their own, but none being removed (a question
   * meanwhile must not start it again). A connector of the user's under an id the operator file
   * took later stays theirs (they can still change and remove it): the operator's is not shown them.
   */
  private async definitions(user: string): Promise<Definition[]> {
    if (this.closing) throw new ConnectorsClosing();
    const asked = this.started;
    const own = await this.rows.of(user);
    if (this.closing) throw new ConnectorsClosing();
    await this.dropStale(user, own, asked);
    const operators = this.operators.filter((o) => !own.some((d) => d.id === o.id));
    return [...operators, ...own].filter((d) => !this.forgetting.has(`${d.owner}/${d.id}`));
  }

  /** An operator connector the user sees under `id` (not one of their own that holds the id). */
  private async operatorsOnly(user: string, id: string): Promise<boolean> {
    return this.operators.some((o) => o.id === id) && !(await this.rows.of(user)).some((d) => d.id === id);
  }

  /** The user's valid connector ids (operator ones included), for messages (D10). */
  async ids(user: string): Promise<string[]> {
    return (await this.definitions(user)).map((d) => d.id);
  }

  /**
   * Several nodes (D33), or another process on the embedded database (`corpus user remove
   * --delete-data`): a connector of `user` changed or removed there still runs here under its old
   * definition (a user of the same name added again would be answered from the earlier one's
   * source). Stopped (its index dropped, as its own node did) once the rows read show it so:
   * changed now, or gone from rows read after it started (`asked`: the start count when the read
   * began; one added meanwhile is not taken for gone).
   */
  private async dropStale(user: string, own: Definition[], asked: number): Promise<void> {
    const changed: Promise<void>[] = [];
    for (const [key, run] of [...this.running]) {
      if (key.slice(0, key.lastIndexOf("/")) !== user || this.forgetting.has(key)) continue;
      const now = own.find((d) => d.id === run.definition.id);
      if (!now) {
        // Gone: hidden at once (forgetting), stopped in the background; the answer does not wait for its close.
        if (run.started <= asked)
          this.forget(user, run.definition.id).catch((error) =>
            this.log.warning("connector removed on another node not stopped", errorSummary(error)),
          );
      } else if (now.created_at !== run.definition.created_at || !Bun.deepEquals(now.config, run.definition.config))
        changed.push(this.forget(user, run.definition.id));
    }
    // Awaited: the connector as it is now starts only once the old one's index is gone.
    await Promise.all(changed);
  }

  private instance(d: Definition): Connector {
    const key = `${d.owner}/${d.id}`;
    let c = this.live.get(key);
    if (!c) {
      // A request still in flight at close would start it again, on the closed database.
      if (this.closing) throw new ConnectorsClosing();
      c = KINDS[d.kind].create(d.config, this.contextFor(d));
      this.live.set(key, c);
      if (d.owner !== OPERATOR) this.running.set(key, { definition: d, started: ++this.started });
      this.embedAheadOf(d, c);
    }
    return c;
  }

  /**
   * A source read live: its newest records embedded in the background (embed-ahead.ts) when the
   * connector starts; again AHEAD_RETRY_MS after a try that failed (its database down, a full
   * disk), and AHEAD_REFRESH_MS after one that did not, when a question next asks it (`byQuestion`).
   */
  private embedAheadOf(d: Definition, c: Connector, byQuestion = false): void {
    const { embeddings, chunker } = this;
    const key = `${d.owner}/${d.id}`;
    const before = this.ahead.get(key);
    if (!embeddings || !chunker || !c.newest || (before?.connector === c && !before.paused)) return;
    if (this.now() < (this.aheadNextAt.get(key) ?? 0)) return;
    const live = () => !this.closing && this.live.get(key) === c;
    const ownerStill = this.ownerCheck(d.owner);
    const embed = (texts: string[], wanted: () => boolean) => {
      // The cache keeps vectors under their owner's key only: the operator's is made here, as
      // its folders' indexes make it (a user's exists once they added a connector). A write:
      // on a full disk it fails, and this try with it (reads go on, D29).
      if (d.owner === OPERATOR) this.keys.keyFor(OPERATOR);
      return embeddings.embed(d.owner, texts, "background", wanted);
    };
    const work = embedAhead(c, {
      // Each page after the owner's key was read again (D33): a deletion on another node ends the try there.
      embed: (texts, wanted) => {
        const checking = ownerStill();
        return checking ? checking.then(() => embed(texts, wanted)) : embed(texts, wanted);
      },
      chunks: (records) => sharedReader().chunks(records),
      live,
      started: (progress) => {
        const run = this.ahead.get(key);
        if (run?.work === work) run.progress = progress;
      },
      now: this.now,
      log: this.log.child(`connectors.${d.id}`),
    })
      .then((done) => {
        // A connector removed or changed meanwhile leaves nothing behind (its next start begins anew).
        if (!live()) return;
        this.aheadNextAt.set(key, this.now() + (done ? AHEAD_REFRESH_MS : AHEAD_RETRY_MS));
        const run = this.ahead.get(key);
        if (!done && run?.work === work && run.progress) run.paused = true;
      })
      .finally(() => {
        const run = this.ahead.get(key);
        if (run?.work === work && !run.paused) this.ahead.delete(key);
      });
    this.ahead.set(key, { connector: c, work, shown: d.owner !== OPERATOR || !byQuestion, paused: false });
  }

  /** Resolves once the records being embedded ahead now are (tests, and what must see their outcome). */
  async embeddedAhead(): Promise<void> {
    await Promise.all([...this.ahead.values()].map((a) => a.work));
  }

  /** What a kind's `create` is given for `d`: its owner's policies and, when asked, a local index. */
  private contextFor(d: Definition): KindContext {
    const key = `${d.owner}/${d.id}`;
    return {
      // Only the operator's index may make its key: a user's is made when they add a connector.
      index: () => this.indexes.open(key, indexKeysFor(this.keys, d.owner, d.id, d.owner === OPERATOR), this.chunker),
      indexed: this.indexedOptions(d),
      pin: this.access.pin(d.owner),
      check: this.access.checker(d.owner),
      oauth: this.grants.forConnector(d.owner, d.id),
    };
  }

  private indexedOptions(d: Definition): IndexedOptions {
    const storage = this.storage;
    const leases = this.leases;
    return {
      ...(leases ? { lease: { ...leases, name: indexLeaseName(`${d.owner}/${d.id}`) } } : {}),
      embeddings: this.embeddings?.forOwner(d.owner),
      ownerCheck: this.ownerCheck(d.owner),
      log: this.log.child(`connectors.${d.id}`),
      check: this.access.checker(d.owner),
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
   * A job's check of its owner's key (UserKeys.recheck, D33), bound to the key it first found:
   * the user deleted on another node, or deleted and back since, stops it. Undefined on the
   * embedded store (nothing to wait for).
   */
  private ownerCheck(owner: string): () => Promise<unknown> | undefined {
    let began: Buffer | undefined;
    return () =>
      this.keys.recheck(owner, began)?.then((key) => {
        began = key;
      });
  }

  private status(d: Definition, fresh = false): Promise<ConnectorStatus> {
    const key = `${d.owner}/${d.id}`;
    const connector = this.instance(d);
    return this.statuses.status(
      {
        key,
        connector,
        isCurrent: () => this.live.get(key) === connector,
        // Only the log says why an operator connector fails: the health route and the users' list do not.
        onAnswer: (status, before) => {
          if (d.owner === OPERATOR && status.status === "error" && before?.status !== "error")
            this.log.warning("operator connector in error", { connector: d.id, reason: status.reason ?? null });
        },
      },
      fresh,
    );
  }

  private async view(d: Definition, fresh = false): Promise<ConnectorViewT> {
    const s = this.withAhead(d, await this.status(d, fresh));
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
      owner: "user",
      status: s.status,
      ...(s.reason ? { reason: s.reason } : {}),
      ...(s.records !== undefined ? { records: s.records } : {}),
      ...this.progressOf(d, s),
      ...(await this.grantOf(d)),
      config: publicConfig(d.kind, d.config),
      ...(d.created_at ? { created_at: d.created_at } : {}),
    };
  }

  /** An IMAP connector that signs in with OAuth: its grant's state (issue 38). */
  private async grantOf(d: Definition): Promise<Pick<ConnectorViewT, "grant">> {
    const config = d.config as ImapConfig;
    // The operator's grant is the console's to show: a user's view of it names no host or reason.
    if (d.owner === OPERATOR || d.kind !== "imap" || !signsInWithOAuth(config)) return {};
    return { grant: await this.grants.state(d.owner, d.id, grantBinding(config)) };
  }

  /**
   * A live source answering while its newest records are embedded ahead: `embedding`, with their
   * progress, until they are (its answers rank them by meaning only from then on).
   */
  private withAhead(d: Definition, s: ConnectorStatus): ConnectorStatus {
    const key = `${d.owner}/${d.id}`;
    const run = this.ahead.get(key);
    if (s.status !== "ok" || !run?.progress || !run.shown || run.connector !== this.live.get(key)) return s;
    return { ...s, status: "embedding", ...(run.paused ? { reason: AHEAD_PAUSED } : {}), progress: run.progress.view() };
  }

  /**
   * Counts of indexed connectors (chunks embedded of total) and the phase under way. Only
   * counts, rates and times: shown for the operator's connectors too, they name no host or path.
   */
  private progressOf(d: Definition, s: ConnectorStatus): Pick<ConnectorViewT, "indexed" | "progress"> {
    const p = this.live.get(`${d.owner}/${d.id}`)?.progress?.();
    return { ...(p ? { indexed: { chunks: p.total, embedded: p.embedded } } : {}), ...(s.progress ? { progress: s.progress } : {}) };
  }

  /**
   * Every connector's state and progress, by kind only (the operator's metrics, D35): never its
   * id, owner, label, reason or path. What is known now, without reaching a source: a local
   * index's own status (from memory and its tables), a remote source's last checked one,
   * "unknown" before its first check; a live source's newest records embedded ahead as "embedding".
   */
  async states(): Promise<ConnectorStateCount[]> {
    // Shutting down: the connectors are being closed, and a scrape then counts none.
    if (this.closing) return [];
    const all = [
      ...this.operators.map((d) => ({ key: `${d.owner}/${d.id}`, kind: d.kind as string })),
      ...(await this.rows.everyOne()).map((r) => ({ key: `${r.user_id}/${r.id}`, kind: r.kind as string })),
    ].filter(({ key }) => !this.forgetting.has(key));
    return Promise.all(
      all.map(async ({ key, kind }): Promise<ConnectorStateCount> => {
        const c = this.live.get(key);
        const known = c?.progress !== undefined ? await c.health().catch(() => undefined) : this.statuses.peek(key);
        const run = this.ahead.get(key);
        const ahead = known?.status === "ok" && run?.progress && run.shown && run.connector === c ? run.progress.view() : undefined;
        const progress = ahead ?? known?.progress;
        const indexed = c?.progress?.();
        return {
          kind,
          state: ahead ? "embedding" : (known?.status ?? "unknown"),
          ...(indexed ? { chunks: indexed.total, embedded: indexed.embedded } : {}),
          ...(progress ? { progress: { phase: progress.phase, unit: progress.unit, done: progress.done, total: progress.total } } : {}),
        };
      }),
    );
  }

  async list(user: string): Promise<ConnectorViewT[]> {
    return Promise.all((await this.definitions(user)).map((d) => this.view(d)));
  }

  /** `config`'s local path (if its kind has one) replaced by its realpath, checked against `user`'s roots. */
  private confineLocalPath(user: string, kind: ConnectorKind, config: Record<string, unknown>): void {
    const field = KINDS[kind].localPath(config);
    if (field) config[field] = this.access.localPath(user, String(config[field]));
  }

  /**
   * `stillAllowed` is called right before the insert (the caller's revocation check): the host
   * check awaits a name lookup, and a deletion of the user may land meanwhile.
   */
  async add(user: string, input: CreateConnector, stillAllowed: () => Awaitable<void> = () => {}): Promise<ConnectorViewT> {
    const existing = (await this.rows.of(user)).find((x) => x.id === input.id);
    if (!existing) this.assertIdFree(user, input.id);
    const config = validateConfig(input.kind, input.config, "config");
    this.confineLocalPath(user, input.kind, config);
    // The same connector sent again (a retry after a timeout or a lost answer: the first was
    // saved) is answered as it stands, not refused: only another connector under a taken id is 409.
    if (existing) {
      if (existing.kind === input.kind && existing.label === (input.label ?? input.id) && isDeepStrictEqual(existing.config, config))
        return this.view(existing);
      throw new ConnectorExists(input.id);
    }
    await checkRemoteHost(
      remoteTarget(() => KINDS[input.kind].remoteHost(config)),
      this.access.pin(user),
    );
    // Decided again right before the insert, with no await between, and the id and the cap by
    // the insert itself (on every node, D33): a concurrent add of the same id, one past the cap,
    // or a deletion of the user cannot slip in (the shared store's answer awaited: D33).
    const allowed = stillAllowed();
    if (allowed instanceof Promise) await allowed;
    this.assertIdFree(user, input.id);
    const d = { owner: user, id: input.id, kind: input.kind, label: input.label ?? input.id, config, created_at: new Date().toISOString() };
    const max = this.config.CORPUS_MAX_CONNECTORS_PER_USER;
    const outcome = await this.rows.insert(d, max);
    if ("taken" in outcome) throw new ConnectorExists(d.id);
    if ("full" in outcome)
      throw new DomainError(
        "conflict",
        `you have ${outcome.full} connectors, the most allowed (CORPUS_MAX_CONNECTORS_PER_USER=${max}); remove one before adding another`,
      );
    const view = await this.view(d, true);
    this.log.info("connector added", { connector: d.id, kind: d.kind, status: view.status });
    return view;
  }

  /**
   * Changes a user's connector (D5, D22 "configure"): its label, and its config merged over the
   * stored one, so a secret left out (the IMAP password) or sent back as shown (a database
   * URL's `***`) is kept, where its kind allows. A changed config is checked as on add and the
   * source is read afresh (its old index dropped); a label alone changes nothing else.
   */
  async update(user: string, id: string, input: UpdateConnector, stillAllowed: () => Awaitable<void> = () => {}): Promise<ConnectorViewT> {
    if (await this.operatorsOnly(user, id)) throw new OperatorConnector(id, "changed in");
    const stored = (await this.rows.of(user)).find((x) => x.id === id);
    if (!stored) throw new ConnectorNotFound(id, await this.ids(user));
    let config = stored.config;
    if (input.config) {
      config = changedConfig(stored, input.config);
      this.confineLocalPath(user, stored.kind, config);
      await checkRemoteHost(
        remoteTarget(() => KINDS[stored.kind].remoteHost(config)),
        this.access.pin(user),
      );
    }
    const sourceChanged = !Bun.deepEquals(config, stored.config);
    const d: Definition = { ...stored, label: input.label ?? stored.label, config };
    const allowed = stillAllowed();
    if (allowed instanceof Promise) await allowed;
    if (!(await this.rows.update(d))) throw new ConnectorNotFound(id);
    if (sourceChanged) await this.forget(user, id);
    // Removed meanwhile (a DELETE, the user's deletion): nothing is started again for it.
    if (!(await this.rows.of(user)).some((x) => x.id === id)) throw new ConnectorNotFound(id);
    const view = await this.view(d, sourceChanged);
    this.log.info("connector changed", { connector: id, kind: d.kind, source_changed: sourceChanged, status: view.status });
    return view;
  }

  /** `user`'s own connector `id` (404 listing theirs; 403 for an operator's). */
  async own(user: string, id: string): Promise<Definition> {
    if (await this.operatorsOnly(user, id)) throw new OperatorConnector(id, "changed in");
    const d = (await this.rows.of(user)).find((x) => x.id === id);
    if (!d || this.forgetting.has(`${user}/${id}`)) throw new ConnectorNotFound(id, await this.ids(user));
    return d;
  }

  /** After access was granted to `user`'s (or the operator's) connector `id`: it signs in afresh, and is checked now. */
  async granted(user: string, id: string): Promise<ConnectorViewT> {
    await this.forget(user, id);
    if (user !== OPERATOR) return this.view(await this.own(user, id), true);
    const d = this.operatorWithOAuth(id);
    // The operator is shown why it fails (the users' view of it says only that it does).
    const s = await this.status(d, true);
    return { ...(await this.view(d)), ...(s.reason ? { reason: s.reason } : {}) };
  }

  /** The operator's connector `id` that signs in with OAuth; 404 (or 400 for one that does not) otherwise. */
  private operatorWithOAuth(id: string): Definition {
    const d = this.operators.find((o) => o.id === id);
    if (!d)
      throw new ConnectorNotFound(
        id,
        this.operators.map((o) => o.id),
      );
    if (!operatorBinding(d))
      throw new DomainError("invalid", `connector ${id} does not sign in with OAuth: it is not an imap connector with config.oauth`);
    return d;
  }

  /**
   * Starts the grant of the operator's connector `id` (issue 38): by `corpus connector grant` in
   * a terminal, or an operator at the console (`asker`), for as long as `stillAllowed` holds.
   */
  beginOperatorGrant(
    id: string,
    stillAllowed: () => Awaitable<void>,
    options: { statePrefix?: string; asker?: string } = {},
  ): { authorize_url: string; expires_at: string; redirect_uri: string } {
    const binding = operatorBinding(this.operatorWithOAuth(id))!;
    return { ...this.grants.begin(OPERATOR, id, binding, stillAllowed, options), redirect_uri: this.grants.redirectUri };
  }

  /** The operator's connector `id` checked now, on a connection of its own (not the one searches use), then closed. */
  async checkOperatorConnector(id: string): Promise<ConnectorStatus> {
    const d = this.operatorWithOAuth(id);
    const c = KINDS[d.kind].create(d.config as never, this.contextFor(d));
    try {
      return await c.health();
    } finally {
      await c.close().catch(() => {});
    }
  }

  /**
   * Drops the grants of operator connectors no longer in the file, or no longer signing in with
   * OAuth: a refresh token is kept no longer than its connector. Called when serving (a command
   * run with another environment must not drop what the server's file still lists); how many.
   */
  dropStaleOperatorGrants(): Awaitable<number> {
    const keep = this.operators.filter((d) => operatorBinding(d)).map((d) => d.id);
    return andThen(this.rows.dropGrantsExcept(OPERATOR, keep), (dropped) => {
      if (dropped) this.log.info("operator OAuth grants of connectors gone from the operator file dropped", { grants: dropped });
      return dropped;
    });
  }

  /** The operator's connectors that sign in with OAuth, each with its grant (the console's, never a user's view). */
  async operatorGrants(): Promise<Array<{ id: string; label: string; grant: GrantState }>> {
    const grants = await Promise.all(
      this.operators.map(async (d) => {
        const binding = operatorBinding(d);
        return binding ? [{ id: d.id, label: d.label, grant: await this.grants.state(OPERATOR, d.id, binding) }] : [];
      }),
    );
    return grants.flat();
  }

  /**
   * An id the operator's file takes, or one of `user`'s being removed (it holds its id until its
   * rows are gone); one of the user's own rows is refused by the insert (CORPUS_MAX_CONNECTORS_PER_USER too).
   */
  private assertIdFree(user: string, id: string): void {
    if (this.operators.some((o) => o.id === id) || this.forgetting.has(`${user}/${id}`)) throw new ConnectorExists(id);
  }

  async remove(user: string, id: string): Promise<void> {
    if (await this.operatorsOnly(user, id)) throw new OperatorConnector(id, "removed from");
    const d = (await this.rows.of(user)).find((x) => x.id === id);
    if (!d) throw new ConnectorNotFound(id, await this.ids(user));
    await this.forget(user, d.id, () => this.rows.delete(user, id));
    this.log.info("connector removed", { connector: id });
  }

  /**
   * Drops a connector's index (with `alsoRemove`, in the same transaction) and owes the scrub
   * there too: the word index rewritten without its terms, and old page images of the index out
   * of the WAL. Paid right after, or at the next start (D29).
   */
  private async forget(owner: string, id: string, alsoRemove: () => Awaitable<void> = () => {}): Promise<void> {
    const key = `${owner}/${id}`;
    const run = (this.forgetting.get(key) ?? Promise.resolve()).then(async () => {
      const c = this.live.get(key);
      this.live.delete(key);
      this.running.delete(key);
      this.statuses.forget(key);
      this.forgetAhead(key);
      await c?.close().catch(() => {});
      // The embedded store removes the row in this transaction; the shared one once it has
      // committed (the index goes first: a row left by a failure is indexed again, never an index left without its row).
      const removed = this.db.transaction(() => {
        const removing = andThen(this.indexes.drop(key), () => alsoRemove());
        this.scrub.owe();
        return removing;
      })();
      await removed;
    });
    const last = run.catch(() => {});
    this.forgetting.set(key, last);
    try {
      await run;
    } finally {
      if (this.forgetting.get(key) === last) this.forgetting.delete(key);
    }
    try {
      // On a full disk the reserve is freed for it, as for a user's deletion.
      if (this.storage) this.storage.disk.withReserve(() => this.scrub.pay());
      else this.scrub.pay();
    } catch (error) {
      this.log.warning("connector scrub owed; tried again shortly", errorSummary(error));
    }
  }

  /** The user's connectors to search: all, or those named (unknown ids are 400, D10). */
  async active(user: string, ids?: string[]): Promise<ActiveConnector[]> {
    const all = await this.definitions(user);
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
        datesAreFileTimes: KINDS[d.kind].datesAreFileTimes,
        connector: this.asked(d),
      }));
  }

  /**
   * A connector a question asks: embedding ahead is tried again when due (its first try was at
   * its start). Only questions do: a listing or the unauthenticated health probe never re-reads a source.
   */
  private asked(d: Definition): Connector {
    const c = this.instance(d);
    this.embedAheadOf(d, c, true);
    return c;
  }

  /**
   * Starts now, rather than at their first use, every local connector (the operator's and every
   * user's) whose index still owes work (D29): chunks without a vector, or no record yet (a first
   * scan cut short). Starting one scans its folder and embeds what waits. Returns how many started.
   */
  async resumeOwed(): Promise<number> {
    const indexed = CONNECTOR_KINDS.filter((k) => KINDS[k].indexedLocally);
    // Several nodes (D33): one live here whose sync was left to another node's lease is synced
    // again (taking the lease once its holder is gone: a node killed mid-indexing); alone, a live one is at work already.
    const owes = async (owner: string, id: string) =>
      (this.leases !== undefined || !this.live.has(`${owner}/${id}`)) && (await this.indexes.owesWork(`${owner}/${id}`));
    const owed = async (d: Definition) => indexed.includes(d.kind) && (await owes(d.owner, d.id));
    const owing = async (ds: Definition[]) => {
      const owe = await Promise.all(ds.map(owed));
      return ds.filter((_, i) => owe[i]);
    };
    const due = await owing(this.operators);
    const users = new Set<string>();
    for (const r of await this.rows.idsOfKinds(indexed)) if (!users.has(r.user_id) && (await owes(r.user_id, r.id))) users.add(r.user_id);
    for (const user of users) {
      try {
        // Background work makes no key, and reads the user's again (D33): this node may never have met them.
        const ready = this.keys.ready(user);
        if (ready) await ready;
        due.push(...(await owing(await this.rows.of(user))));
      } catch (error) {
        // A user deleted meanwhile owes nothing; anything else waits for the connector's first use.
        if (!(error instanceof NoUserKey)) this.log.warning("owed connector work not resumed", errorSummary(error));
      }
    }
    for (const d of due) {
      const live = this.live.get(`${d.owner}/${d.id}`);
      if (!live) this.instance(d);
      else (live as Partial<Pick<IndexedFolderConnector, "sync">>).sync?.call(live).catch(() => {});
    }
    return due.length;
  }

  /** Chunks of every connector still waiting for their vector (D29). */
  owedChunks(): Awaitable<number> {
    return this.indexes.owedChunks();
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
    this.grants.forgetOwner(user);
    for (const [key, c] of [...this.live]) {
      // Exactly this owner: ids never hold "/", so the owner is what precedes the last one.
      if (key.slice(0, key.lastIndexOf("/")) !== user) continue;
      this.live.delete(key);
      this.running.delete(key);
      this.statuses.forget(key);
      this.forgetAhead(key);
      await c.close().catch(() => {});
    }
  }

  /** A connector stopped: the next one under its key embeds ahead anew. */
  private forgetAhead(key: string): void {
    this.aheadNextAt.delete(key);
    if (this.ahead.get(key)?.paused) this.ahead.delete(key);
  }

  /** After a user's indexes were dropped: their terms leave the word index for good. */
  purgeRemovedTerms(): void {
    this.indexes.purgeTerms();
  }

  /** Where the connectors' rows are kept (a shared deletion erases them in its PostgreSQL transaction: users/deletion.ts). */
  get records(): ConnectorRecords {
    return this.rows.records;
  }

  /** The connector rows and index entries of `user` (a deletion asks every room, after it erased, that nothing is left). */
  rowsOf(user: string): Awaitable<number> {
    return andThen(this.records.rowsOf(user), (n) => andThen(this.indexes.rowsOf(user), (m) => n + m));
  }

  /** Every connector row and index entry of `user` (D13), inside the caller's embedded transaction (the embedded store's rows). */
  deleteUserRows(user: string): number {
    this.dropIndexesOf(user, atOnce(this.records.idsOf(user), "connectors"));
    return atOnce(this.records.deleteUser(user), "connectors");
  }

  /** The indexes of `user`'s connectors `ids`, inside the caller's embedded transaction (a shared deletion erased their rows in its own). */
  dropIndexesOf(user: string, ids: string[]): void {
    for (const id of ids) atOnce(this.indexes.drop(`${user}/${id}`), "the local index");
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.live.values()].map((c) => c.close().catch(() => {})));
    this.live.clear();
    this.running.clear();
  }
}
