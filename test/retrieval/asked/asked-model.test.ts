// What is asked, read with the real model through the embedding worker (D32): questions of every
// kind, in the languages of the tables, none of them a prototype or an evaluation question; the
// kinds the tables cannot read (who, how many, which ones, yes or no) are read by the model; and
// with no model (its worker cannot start) the tables read every question, none is refused.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { OPERATOR_OWNER } from "../../../src/auth/subjects";
import { UserKeys } from "../../../src/crypto/user-keys";
import { EmbeddingService } from "../../../src/embedding/service";
import { MIGRATIONS } from "../../../src/migrations";
import { askedOf } from "../../../src/retrieval/asked";
import { AskedReader, askedReaderOf } from "../../../src/retrieval/asked/asked";
import type { AskedPrototypes } from "../../../src/retrieval/asked/classify";
import { type AskedKind, prototypesOf } from "../../../src/retrieval/asked/prototypes";
import { openDatabase } from "../../../src/store/database";
import { tempDir } from "../../helpers";
import { soon } from "../../support/wait";

// The model loads in a worker: longer than 5 s on a busy two-core machine.
setDefaultTimeout(60_000);

const open: EmbeddingService[] = [];
function service(entry?: string): EmbeddingService {
  const dir = tempDir();
  const db = openDatabase(dir, MIGRATIONS);
  const s = new EmbeddingService(db, new UserKeys(db, randomBytes(32)), dir, { threads: 1, worker: entry ? { entry } : undefined });
  open.push(s);
  return s;
}
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()));
});

const QUESTIONS: Record<AskedKind, string[]> = {
  amount: [
    "How much was the Vattenfall bill in April?",
    "Hoeveel heb ik bij Gamma uitgegeven?",
    "Quel est le montant de la facture SFR ?",
    "Ile kosztowała pralka?",
  ],
  date: [
    "When was the Sonos speaker delivered?",
    "Wanneer verloopt mijn verzekering?",
    "Wann kam die Lieferung von Otto?",
    "Kiedy zapłaciłem za mieszkanie?",
  ],
  place: [
    "Where is the Ikea I went to?",
    "Waar woont de klant Pieters?",
    "Où est le bureau de la société Fnac ?",
    "Gdzie jest sklep Rossmann?",
  ],
  person: [
    "Who approved the travel expenses?",
    "Who is the buyer on the Staples invoice?",
    "Wer hat das Angebot unterschrieben?",
    "Qui est le gérant du magasin ?",
  ],
  item: [
    "What did I buy at Walmart last Tuesday?",
    "Which camera did I order from Amazon?",
    "Wat heb ik bij de Hema gekocht?",
    "Was habe ich bei Lidl gekauft?",
  ],
  count: [
    "How many pizzas did we order?",
    "How many customers are from Chile?",
    "Hoeveel pakketten zijn er verstuurd?",
    "Wie viele Mitarbeiter hat das Büro?",
  ],
  list: [
    "Which customers are based in Portugal?",
    "List all receipts from the pharmacy.",
    "Welke leveranciers stuurden een factuur?",
    "Quels employés travaillent à Nantes ?",
  ],
  "yes/no": [
    "Did the landlord return the deposit?",
    "Is the Sonos invoice paid?",
    "Heeft de verhuurder de borg terugbetaald?",
    "Czy rachunek za wodę jest opłacony?",
  ],
  open: [
    "What is the IBAN of the landlord?",
    "Why was the order cancelled?",
    "Wat is het e-mailadres van de verhuurder?",
    "Quel est le numéro de la commande Fnac ?",
  ],
};

let embeddings: EmbeddingService;
let reader: AskedReader;
let prototypes: AskedPrototypes | undefined;
beforeAll(async () => {
  embeddings = service();
  reader = askedReaderOf(embeddings);
  prototypes = await reader.prepare();
});

test("the prototypes are embedded once through the worker; a second prepare reuses them", async () => {
  expect(prototypes).toBeDefined();
  const texts = embeddings.stats.texts;
  expect(await reader.prepare()).toBe(prototypes!);
  expect(embeddings.stats.texts).toBe(texts);
});

test("a question asked while the prototypes embed runs before their further batches, not after all of them", async () => {
  const fresh = service();
  await fresh.warm();
  const preparing = askedReaderOf(fresh).prepare();
  // The prototypes' first batch is in the worker: then a question comes.
  await soon("the prototypes' first batch", () => fresh.stats.batches > 0);
  await fresh.embed("alice", ["Who signed the lease for the new office?"]);
  // Counted when the question's vector came: far from the ~540 prototypes' texts (as "urgent", all of them were).
  expect(fresh.stats.texts).toBeLessThan(prototypesOf().length / 2);
  expect(await preparing).toBeDefined();
});

test("questions of every kind and language are read by kind, far more of them than by the tables, every kind at least once", async () => {
  const all = Object.entries(QUESTIONS).flatMap(([kind, qs]) => qs.map((q) => ({ kind, q })));
  const vectors = await embeddings.embed(
    "alice",
    all.map((x) => x.q),
  );
  const read = all.map(({ kind, q }, i) => ({ q, kind, asked: reader.read(q, vectors[i]!), tables: askedOf(q).asks }));
  // Where the tables read no kind ("open"), the model did.
  expect(read.filter((r) => (r.tables === "open") !== (r.asked.by === "model"))).toEqual([]);
  const right = read.filter((r) => r.asked.asks === r.kind);
  const rightByTables = read.filter((r) => r.tables === r.kind);
  // Measured with kindOf's tables: 24 of 36 (the tables alone 14).
  expect(right.length / read.length).toBeGreaterThanOrEqual(0.6);
  expect(right.length).toBeGreaterThan(rightByTables.length);
  expect(Object.keys(QUESTIONS).filter((kind) => !right.some((r) => r.kind === kind))).toEqual([]);
});

test("without the model (its worker cannot start), every question is read by the tables, none refused", async () => {
  const noModel = service(join(import.meta.dir, "../../embedding/workers/throws-at-start.ts"));
  let tries = 0;
  const broken = new AskedReader((texts) => {
    tries++;
    return noModel.embed(OPERATOR_OWNER, texts);
  });
  expect(await broken.prepare()).toBeUndefined();
  for (const q of [...QUESTIONS.date, ...QUESTIONS.person]) {
    const asked = broken.read(q);
    expect({ q, kind: asked.asks, by: asked.by }).toEqual({ q, kind: askedOf(q).asks, by: "tables" });
  }
  // Tried again at the next prepare, not given up for good: still no model, still no prototypes.
  expect(await broken.prepare()).toBeUndefined();
  expect(tries).toBe(2);
});
