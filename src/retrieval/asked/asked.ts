// What a question asks, read with the model (D32). The language tables' reading (asked.ts
// askedOf: question words, nouns of a kind, the grammar of conditions) decides where it reads a
// kind; the model decides the rest (questions the tables read as "open"). Measured on the
// evaluation's train half (scripts/eval/answers.ts) with the tables of 28 Nov morning: tables 0.59,
// the model alone 0.79, the tables where they read a kind and the model otherwise 0.90; the
// tables of askedOf since then read more kinds themselves (answers-asked.ts prints all three).
import { OPERATOR_OWNER } from "../../auth/subjects";
import type { EmbeddingService } from "../../embedding/service";
import { TAX } from "../amounts";
import { type Asked, askedOf } from "../asked";
import { AskedPrototypes } from "./classify";
import { prototypesOf } from "./prototypes";

export interface AskedWithModel extends Asked {
  /** Who read the kind: the language tables, or the model (the tables read none). */
  by: "tables" | "model";
  /** The model's margin over its runner-up, when the model read the kind. */
  confidence?: number;
  runnerUp?: Asked["asks"];
}

/**
 * What `question` asks. Without a vector or prototypes (the model could not be loaded, or its
 * prototypes are not embedded yet) the tables alone read it ("open" where they read nothing).
 */
export function askedWithModel(question: string, vector?: Float32Array, prototypes?: AskedPrototypes): AskedWithModel {
  const tables = askedOf(question);
  if (tables.asks !== "open" || !vector || !prototypes) return { ...tables, by: "tables" };
  const model = prototypes.classify(vector);
  // A tax's amount is the grammar's to read (the tables read it where it is asked): the model read "What's the story
  // with the VAT?" and "What is the VAT rate …?" as amounts (the evaluation's intents).
  const asks = model.kind === "amount" && TAX.test(question) ? model.runnerUp : model.kind;
  return {
    ...tables,
    asks,
    contact: tables.contact || asks === "place",
    by: "model",
    confidence: model.confidence,
    runnerUp: asks === model.kind ? model.runnerUp : model.kind,
  };
}

/** Embeds texts with the model ranking uses (its worker), in order. */
export type EmbedTexts = (texts: string[]) => Promise<Float32Array[]>;

/**
 * The prototypes' vectors, embedded once, on first need, through the embedding worker and kept
 * (540 short texts: 32 batches, 4.5-7 s of one busy thread, once per process). Until they are,
 * and when the model cannot be loaded, questions are read by the tables; a failed embedding is
 * tried again at the next prepare().
 */
export class AskedReader {
  private prototypes?: AskedPrototypes;
  private preparing?: Promise<AskedPrototypes | undefined>;

  constructor(private readonly embed: EmbedTexts) {}

  /** The prototypes' vectors, embedded now if they are not yet; undefined when the model failed. */
  prepare(): Promise<AskedPrototypes | undefined> {
    if (this.prototypes) return Promise.resolve(this.prototypes);
    if (this.preparing) return this.preparing;
    const all = prototypesOf();
    const preparing = Promise.resolve()
      .then(() => this.embed(all.map((p) => p.text)))
      .then(
        (vectors) => {
          this.prototypes = new AskedPrototypes(all, vectors);
          return this.prototypes;
        },
        () => undefined,
      )
      .finally(() => {
        if (this.preparing === preparing) this.preparing = undefined;
      });
    this.preparing = preparing;
    return preparing;
  }

  /**
   * What `question` asks, by its vector once the prototypes are ready. Measured with the
   * question's own vector; ranking embeds a follow-up with up to two earlier turns, whose kind
   * that vector carries too.
   */
  read(question: string, vector?: Float32Array): AskedWithModel {
    return askedWithModel(question, vector, this.prototypes);
  }
}

/**
 * The reader of a server's embedding service: the prototypes are the service's own text, kept
 * in the operator's cache (D25: never a user's), so a restart finds them there. In the
 * background: a question waits for one batch at most (76 ms measured while they embedded), where
 * as a question's own priority they held one for 4.2 s, until all of them were done.
 */
export const askedReaderOf = (embeddings: Pick<EmbeddingService, "embed">) =>
  new AskedReader((texts) => embeddings.embed(OPERATOR_OWNER, texts, "background"));
