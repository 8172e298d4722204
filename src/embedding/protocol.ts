// Messages between the embedding service (request thread) and its worker (worker.ts). The
// service decides what the worker gets: every question at once, and one background job at a
// time. The worker runs a job's batches one after another without waiting for the request
// thread (which may be busy answering), and before each batch takes a question that came in
// first: a question waits for the one batch under way at most.
import type { EmbedderOptions } from "./embedder";

export type ToWorker =
  | ({ type: "init" } & EmbedderOptions)
  /** Embeds `texts`: tokenised, sorted and cut into batches by token count; `urgent` (a question) goes first. */
  | { type: "run"; seq: number; texts: string[]; urgent: boolean }
  /** Exit: at once between two model runs, else right after the one under way. */
  | { type: "stop" };

export type FromWorker =
  | { type: "ready" }
  /** Loading failed; `code` is the system's (ENOSPC: no room for the model's copies, D29). */
  | { type: "failed"; message: string; code?: string }
  /**
   * One batch of run `seq`: `indices` into its texts, their vectors one after another; `done` on its
   * last. `runs`: the model runs it counts for (questions run together share one: 1 on the first
   * of them, 0 on the others; absent, 1 unless empty).
   */
  | { type: "batch"; seq: number; indices: number[]; vectors: Float32Array; done: boolean; tokens: number; padded: number; runs?: number }
  | { type: "error"; seq: number; message: string };
