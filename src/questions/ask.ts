// A question asked, however it comes (POST /v1/query or MCP corpus_search): searched, checked,
// archived, in one order of checks for both wires. The route only translates: the question and
// its options in, the chosen chunks (with the ids the archive gave them) or a refusal out.
import type postgres from "postgres";
import { archiveAnswer, type CitedRanked, citeChunks } from "../archive/answer";
import type { Archive } from "../archive/store";
import type { AuthService } from "../auth/service";
import type { Principal } from "../auth/verifier";
import { ID_PREFIX, newId } from "../ids";
import type { QueryService } from "../retrieval/search";
import type { QueryOptions, QueryOutcome, RankedChunk } from "../retrieval/types";
import type { Awaitable } from "../store/shared";
import { type QuestionStageTimes, timed } from "./stages";

export interface AskServices {
  query: QueryService;
  archive: Archive;
  auth: AuthService;
  /** How long each stage of a question took (the operator's metrics, D35). */
  questionStages?: QuestionStageTimes;
}

/** Why an answer that was searched is not given: each wire says it in its own shape. */
export type AskRefusal = "timed_out" | "revoked";

export class AskRefused extends Error {
  constructor(readonly reason: AskRefusal) {
    super(reason === "timed_out" ? "request timed out" : "token has been revoked");
  }
}

export interface AskRequest extends Omit<QueryOptions, "stillAllowed"> {
  /** The verified token, when there is one (not with CORPUS_AUTH_DISABLED). */
  principal?: Principal;
  /** How many of the ranked chunks are returned and archived. */
  limit: number;
  /** Whether the request timeout has already answered the asker. */
  timedOut?: () => boolean;
  /** Only ranked chunks it keeps are returned and archived (the tools' record kinds). */
  keep?: (c: RankedChunk) => boolean;
}

export interface Asked {
  queryId: string;
  outcome: QueryOutcome;
  /** The chunks returned, each with the ids the archive keeps it and its document under, and its text's sha256 (D36). */
  chosen: CitedRanked[];
}

export async function ask(s: AskServices, request: AskRequest): Promise<Asked> {
  const { principal, limit, timedOut, keep, ...options } = request;
  // Whether the asker's token still stands (D25): the embedded store answers at once, in the step
  // that writes; the shared one later, awaited before each write (D33), and background work the
  // search starts, which asks synchronously, gets its last answer.
  let standing = true;
  const stands = principal
    ? (): Awaitable<boolean> => {
        const revoked = s.auth.revoked(principal);
        if (!(revoked instanceof Promise)) return !revoked;
        return revoked.then((r) => (standing = !r));
      }
    : undefined;
  const stillAllowed = stands
    ? () => {
        const now = stands();
        if (!(now instanceof Promise)) return now;
        now.catch(() => {});
        return standing;
      }
    : undefined;
  const returned = { limit, ...(keep ? { keep } : {}) };
  // Its stages (plan, gather, rank, a books answer) are timed where they run.
  const outcome = await s.query.run({ ...options, returned, stages: s.questionStages, ...(stillAllowed ? { stillAllowed } : {}) });
  // The archive's rotation made in turns, not at once in the archiving turn below (D31); a new
  // user's key made for it as archiving would, only while they are still allowed (D25).
  await s.archive.prepareRotation(request.user, !stands || (await stands()));
  // Answered 503 by the request timeout meanwhile: the asker never sees this answer, so it is not archived.
  if (timedOut?.()) throw new AskRefused("timed_out");
  // D12: archived before the answer is sent; D25: not for a user deleted while the search ran.
  const standsNow = stands?.();
  if (standsNow === false || (standsNow instanceof Promise && !(await standsNow))) throw new AskRefused("revoked");
  const queryId = newId(ID_PREFIX.query);
  const chosen = citeChunks(s.archive, request.user, (keep ? outcome.chunks.filter(keep) : outcome.chunks).slice(0, limit));
  // Checked again where it is written (D33): a deletion on another node since the check above
  // leaves no answer behind. What the shared store's write left to embed starts once it committed.
  let afterCommit: Array<() => void> = [];
  const archive = (tx?: postgres.TransactionSql) => {
    afterCommit = [];
    return archiveAnswer(s.archive, request.user, queryId, request.question, chosen, tx && { tx, afterCommit });
  };
  await timed(s.questionStages, "archive", () =>
    principal ? s.auth.whileStanding(principal, archive, () => new AskRefused("revoked")) : archive(),
  );
  for (const start of afterCommit) start();
  return { queryId, outcome, chosen };
}
