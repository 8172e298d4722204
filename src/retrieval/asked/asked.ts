// What a question asks, read once (D32): the one entry point for the answer layer. The language
// tables' reading (kindOf: question words, money and tax nouns, the grammar of conditions) decides
// where it reads a kind; the model decides the rest (who, how many, which ones, yes or no, and
// phrasings the tables do not hold). Measured on the evaluation's train half (scripts/eval/
// answers.ts): the tables read 0.59 of the kinds, the model alone 0.79, the tables where they
// read a kind and the model otherwise 0.90 (when the tables read one, they were right 47 times
// in 48; letting the model choose amount or count under "how much" instead read 0.88).
import { OPERATOR_OWNER } from "../../auth/subjects";
import type { EmbeddingService } from "../../embedding/service";
import { kindOf } from "../answer";
import { AskedPrototypes } from "./classify";
import { type AskedKind, prototypesOf } from "./prototypes";

export type Flags = ReturnType<typeof kindOf>;

export interface Asked extends Flags {
  kind: AskedKind;
  /** Who read the kind: the language tables, or the model (the tables read none). */
  by: "tables" | "model";
  /** The model's margin over its runner-up (AskedByModel), when the model read the kind. */
  confidence?: number;
  runnerUp?: AskedKind;
}

/** The kind the tables' flags read, in kindOf's order (a due date's "when" before its amount), or none. */
export function kindOfFlags(flags: Flags): AskedKind | undefined {
  if (flags.when) return "date";
  if (flags.where) return "place";
  if (flags.much) return "amount";
  if (flags.bought) return "item";
  return undefined;
}

/**
 * What `question` asks. Without a vector or prototypes (the model could not be loaded, or its
 * prototypes are not embedded yet) the tables alone read it ("open" where they read nothing). The
 * flags are kindOf's, with the model's kind's own added (a date asked: `when`).
 */
export function askedOf(question: string, vector?: Float32Array, prototypes?: AskedPrototypes): Asked {
  const flags = kindOf(question);
  const tables = kindOfFlags(flags);
  if (tables || !vector || !prototypes) return { ...flags, kind: tables ?? "open", by: "tables" };
  const model = prototypes.classify(vector);
  // A tax's amount is the grammar's to read (asksTaxAmount, in flags.much): the model read "What's
  // the story with the VAT?" and "What is the VAT rate …?" as amounts (the evaluation's intents).
  const kind = model.kind === "amount" && flags.tax ? model.runnerUp : model.kind;
  // The tables read no kind: none of their flags of a kind is set, only the model's own.
  return {
    ...flags,
    when: kind === "date",
    where: kind === "place",
    much: kind === "amount",
    bought: kind === "item",
    contact: flags.contact || kind === "place",
    kind,
    by: "model",
    confidence: model.confidence,
    runnerUp: kind === model.kind ? model.runnerUp : model.kind,
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
  read(question: string, vector?: Float32Array): Asked {
    return askedOf(question, vector, this.prototypes);
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
