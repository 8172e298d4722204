// Step 1: every connector asked in parallel, each within a timeout (a slow or failing one yields
// a note, never a failed query); a time asked for that nothing meets is asked again without it.
import type { ActiveConnector } from "../connectors/registry";
import type { SearchHit } from "../connectors/types";
import { elapsedMs, type Question } from "./types";

export const CONNECTOR_TIMEOUT_MS = 8_000;

export type Answer = PromiseSettledResult<{ a: ActiveConnector; hits: SearchHit[] }>;

/** `work` within `ms`; once the time is up, its signal tells the connector to drop what it has not done. */
function withTimeout<T>(work: (signal: AbortSignal) => Promise<T>, ms: number, label: string): Promise<T> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new Error(`${label}: no answer within ${ms / 1000} s`));
    }, ms);
  });
  return Promise.race([work(controller.signal), late]).finally(() => clearTimeout(timer));
}

/** Each connector's candidates (in `active`'s order), and the note when the time asked was dropped. */
export async function gather(q: Question, active: ActiveConnector[]): Promise<{ answers: Answer[]; notes: string[] }> {
  const { options: o, plan } = q;
  let answers = await askAll(q, active, true);
  // A time asked for that no record meets: answered from any date, with a note, never empty.
  const planDated = !o.dateFrom && !o.dateTo && (plan.dateFrom || plan.dateTo);
  const dated = (x: Answer) => x.status === "fulfilled" && !x.value.a.datesAreFileTimes;
  if (planDated && answers.some(dated) && answers.every((x) => !dated(x) || (x.status === "fulfilled" && x.value.hits.length === 0))) {
    answers = await askAll(q, active, false);
    return { answers, notes: [`nothing is dated ${describeRange(plan.dateFrom, plan.dateTo)}; showing results from any date`] };
  }
  return { answers, notes: [] };
}

function askAll(q: Question, active: ActiveConnector[], withPlannedDates: boolean): Promise<Answer[]> {
  return Promise.allSettled(active.map((a) => ask(q, a, withPlannedDates)));
}

/** The dates a connector is asked for: the filters given, else the question's (not where a date is a file's time). */
function datesFor(q: Question, a: ActiveConnector, withPlannedDates: boolean): { dateFrom?: Date; dateTo?: Date } {
  const { options: o, plan } = q;
  if (o.dateFrom || o.dateTo) return storedRange(o.dateFrom, o.dateTo);
  // Dates named in the question narrow mail and tables, whose records carry their own dates;
  // a document's date is only its file time, so there they do not (explicit filters do).
  return withPlannedDates && !a.datesAreFileTimes ? storedRange(plan.dateFrom, plan.dateTo) : {};
}

/**
 * The first and last instants the sources compare: ISO 8601 dates of four-digit year (records'
 * dates), from year 1 (PostgreSQL has no year 0: a bound in it fails the query).
 */
const FIRST_STORED = Date.parse("0001-01-01T00:00:00.000Z");
const LAST_STORED = Date.parse("9999-12-31T23:59:59.999Z");

/**
 * A range as the sources compare it, as ISO text: bounds past year 9999 or before year 1 write
 * themselves "+010000-…" or "-000001-…" (compared as text below every date), or name a year
 * PostgreSQL does not have. An end past the
 * last instant bounds nothing (`date_to` 9999-12-31 is the end of that day); a start past it
 * still excludes every record, as does an end before the first.
 */
function storedRange(from: Date | undefined, to: Date | undefined): { dateFrom?: Date; dateTo?: Date } {
  const clamp = (d: Date) => new Date(Math.min(Math.max(d.getTime(), FIRST_STORED), LAST_STORED));
  return {
    ...(from && from.getTime() > FIRST_STORED ? { dateFrom: clamp(from) } : {}),
    ...(to && to.getTime() <= LAST_STORED ? { dateTo: clamp(to) } : {}),
  };
}

async function ask(q: Question, a: ActiveConnector, withPlannedDates: boolean): Promise<{ a: ActiveConnector; hits: SearchHit[] }> {
  const { options: o, plan } = q;
  const work = (signal: AbortSignal) => {
    const request = {
      terms: q.terms,
      phrases: plan.phrases,
      ...datesFor(q, a, withPlannedDates),
      limit: o.candidates ?? Math.max(20, o.perConnector * 3),
      vector: q.vector,
      signal,
      caller: o.user,
      order: plan.order,
      names: plan.names,
    };
    return a.connector.rank
      ? a.connector.rank(request)
      : a.connector.search(request).then((rs) => rs.map((record): SearchHit => ({ record })));
  };
  const asked = performance.now();
  const searched = (outcome: string, hits: number) =>
    q.debug?.debug("connector searched", {
      request_id: o.requestId ?? null,
      connector: a.id,
      kind: a.kind,
      owner: a.owner,
      outcome,
      ms: elapsedMs(asked),
      hits,
    });
  try {
    const hits = await withTimeout(work, o.timeoutMs ?? CONNECTOR_TIMEOUT_MS, a.id);
    searched("ok", hits.length);
    return { a, hits };
  } catch (error) {
    // Not the reason: a source's error may quote what it holds.
    const late = error instanceof Error && error.message.startsWith(`${a.id}: no answer within`);
    searched(late ? "timed out" : "failed", 0);
    throw error;
  }
}

function describeRange(from?: Date, to?: Date): string {
  const day = (d: Date) => d.toISOString().slice(0, 10);
  if (from && to) return `from ${day(from)} to ${day(new Date(to.getTime() - 1))}`;
  return from ? `since ${day(from)}` : `before ${day(to!)}`;
}
