// Holds a service's background embedding where the connector registry gets it
// (EmbeddingService.forOwner), so a test can watch indexing progress batch by batch; what is
// let through runs the real model.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { EmbeddingService, OwnerEmbeddings } from "../../src/embedding/service";

export interface EmbeddingGate {
  /** Resolves once a batch waits at the gate. */
  arrived(): Promise<void>;
  /** Lets the oldest waiting batch through. */
  one(): void;
  /** Lets everything through, now and from now on. */
  open(): void;
  /** Opens the gate and gives the service back its own forOwner. */
  restore(): void;
}

export function embeddingGate(service: EmbeddingService): EmbeddingGate {
  const own = service.forOwner;
  const forOwner = own.bind(service);
  const waiting: Array<() => void> = [];
  const arrivals: Array<() => void> = [];
  let open = false;
  service.forOwner = (owner) => {
    const real = forOwner(owner);
    return {
      embed: async (texts, priority) => {
        if (!open) {
          await new Promise<void>((pass) => {
            waiting.push(pass);
            for (const arrived of arrivals.splice(0)) arrived();
          });
        }
        return real.embed(texts, priority);
      },
    } satisfies OwnerEmbeddings;
  };
  const gate: EmbeddingGate = {
    arrived: () => (waiting.length ? Promise.resolve() : new Promise<void>((r) => arrivals.push(r))),
    one: () => waiting.shift()!(),
    open: () => {
      open = true;
      for (const pass of waiting.splice(0)) pass();
    },
    restore: () => {
      gate.open();
      service.forOwner = own;
    },
  };
  return gate;
}

/** `n` text documents of a few chunks each, every sentence its own (no vector comes from a cache). */
export function writeDocs(dir: string, n: number): void {
  mkdirSync(dir, { recursive: true });
  for (let f = 1; f <= n; f++) {
    const sentences = Array.from(
      { length: 36 },
      (_, s) =>
        `Report ${f}, note ${s + 1}: the ${s % 2 ? "pallets" : "containers"} for warehouse ${f * 100 + s} arrived at the harbour on day ${s + 1} of the audit.`,
    );
    writeFileSync(join(dir, `report-${f}.txt`), sentences.join(" "));
  }
}
