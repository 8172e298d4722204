// A data folder embedded with one model and started with another (fp16 then the shipped int8,
// as an install upgrading): no vector of the old model is used again. The cache, the
// connectors' chunk vectors and the archive's are forgotten at start and computed again with
// the new model; the archived answers are still found by deep search.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createApp } from "../../src/app";
import type { IndexedFolderConnector } from "../../src/connectors/indexed-source";
import { type EmbeddedIndex, indexKeysFor } from "../../src/connectors/local-index";
import { cosine, EMBEDDING_DIM } from "../../src/embedding/embedder";
import { createLogger, memorySink } from "../../src/log";
import { embeddingModel, type ModelAsset } from "../../src/native/assets";
import { createServices } from "../../src/services";
import { bearer, postJson, tempDir, testConfig } from "../helpers";
import { embedWith, variant } from "../support/model-variants";

setDefaultTimeout(120_000);

const ALL = ["corpus:search", "corpus:read", "connectors:read", "connectors:write"];
const models = join(import.meta.dir, "../../models");
const fp16: ModelAsset = { file: join(models, variant("fp16").file), sha256: variant("fp16").sha256 };

const base = tempDir("corpus-model-change-");
const docs = join(base, "alice", "docs");
mkdirSync(docs, { recursive: true });
writeFileSync(join(docs, "dabhol.txt"), "The Dabhol power plant in India had problems with its gas supply all winter.\n");
writeFileSync(join(docs, "storage.md"), "# Storage\n\nNatural gas storage contracts for the Houston hub were renewed in March.\n");
writeFileSync(join(docs, "limits.txt"), "Trading limits were approved by the risk committee on Friday.\n");
const config = testConfig({ CORPUS_CONNECTOR_ROOTS: join(base, "{user}") });
const db = () => started!.services.db;
let started: Awaited<ReturnType<typeof start>> | undefined;

async function start(model: ModelAsset) {
  const logs = memorySink();
  const services = await createServices(config, createLogger("INFO", logs.sink), Date.now, undefined, { model });
  return { services, app: createApp(services), logs };
}

const count = (sql: string) => db().query<{ n: number }, []>(sql).get()!.n;
const docsConnector = async () => (await started!.services.connectors.active("alice", ["docs"]))[0]!.connector as IndexedFolderConnector;
const storedVectors = () =>
  new Map(
    db()
      .query<{ chunk_id: number; embedding: Uint8Array }, []>("SELECT chunk_id, embedding FROM connector_vec WHERE owner = 'alice/docs'")
      .all()
      .map((r) => [
        r.chunk_id,
        new Float32Array(r.embedding.buffer.slice(r.embedding.byteOffset, r.embedding.byteOffset + EMBEDDING_DIM * 4)),
      ]),
  );

afterAll(() => started?.services.close());

describe("a data folder embedded with one model, started with another", () => {
  test("the shipped model's identity is the sha256 of the file the executable carries", () => {
    expect(new Bun.CryptoHasher("sha256").update(readFileSync(embeddingModel.file)).digest("hex")).toBe(embeddingModel.sha256);
  });

  test("every stored vector is the new model's, and archived answers are still found", async () => {
    expect(embeddingModel.sha256).not.toBe(fp16.sha256);
    // 1. fp16: the folder indexed and embedded, a question answered and archived with its vectors.
    started = await start(fp16);
    const token = (await started.services.auth.issuer.issue("alice", ALL as never)).token;
    expect(
      (await started.app.handle(postJson("/v1/connectors", { id: "docs", kind: "files", config: { path: docs } }, bearer(token)))).status,
    ).toBe(200);
    await (await docsConnector()).sync();
    await (await docsConnector()).embedPending();
    const asked = await started.app.handle(postJson("/v1/query", { query: "gas supply problems at the Dabhol plant" }, bearer(token)));
    expect(asked.status).toBe(200);
    const queryId = ((await asked.json()) as { query_id: string }).query_id;
    await started.services.embeddings.idle();
    const chunks = count("SELECT count(*) AS n FROM connector_chunks");
    const archived = count("SELECT count(*) AS n FROM archive_chunks");
    expect(chunks).toBe(3);
    expect(archived).toBeGreaterThan(0);
    expect(count("SELECT count(*) AS n FROM archive_vec")).toBe(archived);
    expect(count("SELECT count(*) AS n FROM embedding_cache")).toBeGreaterThan(0);
    const before = storedVectors();
    expect(before.size).toBe(chunks);
    await started.services.close();

    // 2. The shipped model: nothing fp16 made is left to rank with.
    started = await start(embeddingModel);
    expect(count("SELECT count(*) AS n FROM embedding_cache")).toBe(0);
    expect(count("SELECT count(*) AS n FROM connector_vec")).toBe(0);
    expect(count("SELECT count(*) AS n FROM archive_vec")).toBe(0);
    expect(count("SELECT count(*) AS n FROM connector_chunks WHERE embedded = 0")).toBe(chunks);
    expect(count("SELECT count(*) AS n FROM archive_chunks WHERE embedded = 0")).toBe(archived);
    expect(started.logs.records().some((r) => String(r.msg ?? r.message).includes("embedding model changed"))).toBe(true);

    // The pending chunks, with the texts the connector embeds, are embedded again: with int8.
    const pending = ((await docsConnector()) as unknown as { index: EmbeddedIndex }).index.pendingChunks(100);
    expect(pending.length).toBe(chunks);
    await (await docsConnector()).embedPending();
    const after = storedVectors();
    const rotation = indexKeysFor(started.services.userKeys, "alice", "docs", false).rotation();
    for (const { chunk, text } of pending) {
      const [int8Vector] = await embedWith(variant("int8").file, [text]);
      const [fp16Vector] = await embedWith(variant("fp16").file, [text]);
      // What fp16 stored, and what is stored now, are each model's vector of that text.
      expect(cosine(before.get(chunk)!, rotation.apply(fp16Vector!))).toBeGreaterThan(0.99999);
      expect(cosine(after.get(chunk)!, rotation.apply(int8Vector!))).toBeGreaterThan(0.99999);
      expect(cosine(after.get(chunk)!, rotation.apply(fp16Vector!))).toBeLessThan(0.9995);
    }

    // The archive: every chunk embedded again, and the answer found by deep search.
    expect(await started.services.archive.resumePending()).toBe(archived);
    expect(count("SELECT count(*) AS n FROM archive_vec")).toBe(archived);
    const found = await started.app.handle(
      postJson("/v1/deep_search", { query: "problems with the gas supply of an Indian power plant" }, bearer(token)),
    );
    expect(found.status).toBe(200);
    expect(
      ((await found.json()) as { archive_results: Array<{ original_query_id: string }> }).archive_results.map((m) => m.original_query_id),
    ).toContain(queryId);
    await started.services.close();

    // 3. Started again with the same model: nothing forgotten.
    started = await start(embeddingModel);
    expect(count("SELECT count(*) AS n FROM connector_vec")).toBe(chunks);
    expect(count("SELECT count(*) AS n FROM archive_vec")).toBe(archived);
    expect(count("SELECT count(*) AS n FROM connector_chunks WHERE embedded = 0")).toBe(0);
  });
});
