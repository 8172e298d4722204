// PATCH /v1/connectors/{id} (D5 "adding, changing or removing"; D22 "add, remove and configure";
// issue 18, gap 1): the label alone changes nothing else; a changed folder is read afresh (the
// old one's records are gone); a new path is checked like an added one; secrets left out, or
// sent back as shown (***), are kept; the operator's connectors and another user's are out of reach.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { IndexedFolderConnector } from "../../src/connectors/indexed-source";
import { bearer, patchJson, postJson, req, tempDir, testApp } from "../helpers";
import { type TestServers, testServers } from "../support/servers";
import { ANSWERING, imapConfig } from "../support/sources";

setDefaultTimeout(60_000);

let servers: TestServers;
beforeAll(async () => {
  servers = await testServers();
});

async function setup() {
  const roots = tempDir("corpus-update-roots-");
  const operatorFile = join(tempDir(), "operators.json");
  writeFileSync(operatorFile, JSON.stringify([{ id: "shared", kind: "files", config: { path: roots } }]));
  const t = await testApp({
    CORPUS_CONNECTOR_ROOTS: join(roots, "{user}"),
    CORPUS_CONNECTOR_ALLOW_HOSTS: "127.0.0.1",
    CORPUS_CONNECTORS_FILE: operatorFile,
  });
  const token = async (user: string) =>
    (await t.services.auth.issuer.issue(user, ["connectors:read", "connectors:write", "corpus:search"])).token;
  return { ...t, roots, token };
}

const patch = (tok: string, id: string, body: unknown) => patchJson(`/v1/connectors/${id}`, body, bearer(tok));

function folder(roots: string, user: string, name: string, text: string): string {
  const dir = join(roots, user, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.txt`), text);
  return dir;
}

describe("PATCH /v1/connectors/{id} (D5, D22)", () => {
  test("a new label only: the same index, not read again; a new folder: read afresh, the old one's records gone", async () => {
    const { app, roots, token, services } = await setup();
    const tok = await token("alice");
    const first = folder(roots, "alice", "first", "The glimmerquist contract renews in May.");
    const second = folder(roots, "alice", "second", "The plorbington lease ends in June.");
    expect((await app.handle(postJson("/v1/connectors", { id: "docs", kind: "files", config: { path: first } }, bearer(tok)))).status).toBe(
      200,
    );
    const before = (await services.connectors.active("alice", ["docs"]))[0]!.connector as IndexedFolderConnector;
    await before.sync();

    const renamed = await app.handle(patch(tok, "docs", { label: "Contracts" }));
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toMatchObject({ id: "docs", label: "Contracts", config: { path: first } });
    expect((await services.connectors.active("alice", ["docs"]))[0]!.connector).toBe(before);

    const moved = await app.handle(patch(tok, "docs", { config: { path: second } }));
    expect(moved.status).toBe(200);
    expect(await moved.json()).toMatchObject({ id: "docs", label: "Contracts", config: { path: second } });
    const after = (await services.connectors.active("alice", ["docs"]))[0]!.connector as IndexedFolderConnector;
    expect(after).not.toBe(before);
    await after.sync();
    const answer = (await (
      await app.handle(postJson("/v1/query", { query: "plorbington lease glimmerquist contract", connectors: ["docs"] }, bearer(tok)))
    ).json()) as { results: unknown };
    const found = JSON.stringify(answer.results);
    expect(found).toContain("plorbington");
    expect(found).not.toContain("glimmerquist");
  });

  test("a path outside the user's roots is refused and the stored config is unchanged; bad fields are 400", async () => {
    const { app, roots, token } = await setup();
    const tok = await token("alice");
    const mine = folder(roots, "alice", "mine", "Alice's notes.");
    const bobs = folder(roots, "bob", "private", "Bob's confidential salary list.");
    await app.handle(postJson("/v1/connectors", { id: "docs", kind: "files", config: { path: mine } }, bearer(tok)));
    const refused = await app.handle(patch(tok, "docs", { config: { path: bobs } }));
    expect(refused.status).toBe(403);
    const [listed] = (
      (await (await app.handle(req("/v1/connectors", { headers: bearer(tok) }))).json()) as { connectors: Array<Record<string, any>> }
    ).connectors.filter((c) => c.id === "docs");
    expect(listed!.config).toEqual({ path: mine });
    for (const body of [{}, { kind: "imap" }, { id: "other" }, { config: { path: 42 } }, { label: "" }]) {
      const r = await app.handle(patch(tok, "docs", body));
      expect(r.status).toBe(400);
    }
  });

  test("secrets are kept: an IMAP password left out, a database URL sent back as shown", async () => {
    const { app, token } = await setup();
    const tok = await token("alice");
    const imap = imapConfig(servers.imap);
    expect(
      ((await (await app.handle(postJson("/v1/connectors", { id: "mail", kind: "imap", config: imap }, bearer(tok)))).json()) as any)
        .status,
    ).toBe("ok");
    const relabelled = (await (await app.handle(patch(tok, "mail", { label: "Inbox", config: { mailbox: "INBOX" } }))).json()) as any;
    expect(relabelled).toMatchObject({ label: "Inbox", status: "ok" });
    expect(JSON.stringify(relabelled)).not.toContain(servers.imap.password);
    // The stored password goes nowhere new: another host, port, user or plain text needs it again.
    for (const moved of [{ host: "localhost" }, { port: 10993 }, { secure: true }, { user: "someone-else" }]) {
      const r = await app.handle(patch(tok, "mail", { config: moved }));
      expect(r.status).toBe(400);
      expect(((await r.json()) as { message: string }).message).toStartWith("config.password: give the password again to change");
    }
    const wrong = (await (await app.handle(patch(tok, "mail", { config: { password: "not-the-password" } }))).json()) as any;
    expect(wrong.status).toBe("error");

    const tables = [{ name: "invoice", id: "invoice_id", title: "billing_city", text: ["billing_country"] }];
    const added = (await (
      await app.handle(postJson("/v1/connectors", { id: "shop", kind: "sql", config: { url: servers.pgUrl, tables } }, bearer(tok)))
    ).json()) as any;
    expect(added.status).toMatch(ANSWERING);
    expect(added.config.url).toContain("***");
    // The config as GET shows it, sent back with one change: the password behind *** is kept.
    const changed = (await (
      await app.handle(
        patch(tok, "shop", { config: { ...added.config, tables: [{ ...tables[0], text: ["billing_country", "billing_city"] }] } }),
      )
    ).json()) as any;
    expect(changed.status).toMatch(ANSWERING);
    expect(changed.config.url).toBe(added.config.url);
  });

  test("the operator's connectors are 403; another user's, or none, 404", async () => {
    const { app, roots, token } = await setup();
    const alice = await token("alice");
    const bob = await token("bob");
    await app.handle(
      postJson("/v1/connectors", { id: "docs", kind: "files", config: { path: folder(roots, "alice", "d", "x") } }, bearer(alice)),
    );
    expect((await app.handle(patch(alice, "shared", { label: "mine now" }))).status).toBe(403);
    expect((await app.handle(patch(bob, "docs", { label: "mine now" }))).status).toBe(404);
    expect((await app.handle(patch(alice, "nothing", { label: "x" }))).status).toBe(404);
  });

  test("it needs connectors:write", async () => {
    const { app, roots, token, services } = await setup();
    await app.handle(
      postJson(
        "/v1/connectors",
        { id: "docs", kind: "files", config: { path: folder(roots, "alice", "d", "x") } },
        bearer(await token("alice")),
      ),
    );
    const reader = (await services.auth.issuer.issue("alice", ["connectors:read"])).token;
    expect((await app.handle(patch(reader, "docs", { label: "x" }))).status).toBe(403);
  });
});
