// Messages between the embedding service (request thread) and its worker (worker.ts). One
// request is outstanding at a time: the service decides what runs next (a question before
// background work), the worker only runs what it is told, one model run per `step`.
import type { EmbedderOptions } from "./embedder";

export type ToWorker =
  | ({ type: "init" } & EmbedderOptions)
  /**
   * Runs the next batch of job `job`; `texts` registers the job (tokenised, sorted and cut
   * into batches by token count) and is sent only once.
   */
  | { type: "step"; seq: number; job: number; texts?: string[] }
  /** Forgets a job (failed, or its caller gone). */
  | { type: "drop"; job: number };

export type FromWorker =
  | { type: "ready" }
  | { type: "failed"; message: string }
  /** `indices` into the job's texts (as registered), their vectors one after another. */
  | { type: "batch"; seq: number; indices: number[]; vectors: Float32Array; done: boolean; tokens: number; padded: number }
  | { type: "error"; seq: number; message: string };
