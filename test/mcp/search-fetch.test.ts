// Issue 40 (D36), against a real corpus over HTTP with the official v2 SDK client pinned to
// 2026-07-28: `search` then `fetch` opens the whole cited document for a mail, a PDF invoice, a
// receipt and a table row; a citation's sha256 is that of the text fetch returns; ids are stable
// across re-indexing of unchanged content and new for changed content, while the archive still
// opens (and verifies) the old quote; another user's ids and a deleted user's ids open nothing
// on fetch, resources/read, GET /v1/documents/{id} and /d/<id>.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { openDocument } from "../../src/documents/open";
import { createLogger, memorySink } from "../../src/log";
import { type Running, startServer } from "../../src/server";
import { connectorsSettled, tempDir, testConfig } from "../helpers";
import { chinookOperatorFile } from "../support/chinook";
import { SHARED_DATA } from "../support/servers";

setDefaultTimeout(180_000);

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

const MAIL_BODY = [
  "Hello Marta,",
  "The Zanzibar lighthouse keepers asked for a new lantern housing before the monsoon season.",
  "Their quote for the lantern housing and the brass fittings is 12,400 EUR, payable in two parts.",
  "Please approve the lighthouse budget by Friday so that the order can go out next week.",
  "Mind the <b>deadline</b> & reply to <jonas@harbour.example>.",
  "Kind regards,\nJonas",
].join("\n\n");

const MAIL = `From: Jonas Berg <jonas@harbour.example>
To: Marta Lind <marta@harbour.example>
Subject: Zanzibar lighthouse lantern housing quote
Date: Tue, 05 Mar 2024 09:12:00 +0000
Message-ID: <lighthouse-4711@harbour.example>
Content-Type: text/plain; charset=utf-8

${MAIL_BODY}
`;

const RECEIPT = (JSON.parse(readFileSync(join(SHARED_DATA, "receipts", "receipts.jsonl"), "utf8").split("\n")[0]!) as { text: string })
  .text;

let running: Running;
let roots: string;
const tokens: Record<string, string> = {};

async function connect(user: string) {
  const client = new Client(
    { name: "corpus-test-search-fetch", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${running.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${tokens[user]}` } },
    }),
  );
  return client;
}

type Result = { id: string; title: string; url: string; text: string; sha256: string };
type Fetched = { id: string; title: string; text: string; url: string; metadata: Record<string, string | number | boolean | null> };

async function search(client: Client, query: string): Promise<Result[]> {
  const r = await client.callTool({ name: "search", arguments: { query } });
  expect(r.isError).toBeFalsy();
  const content = r.content as Array<{ type: string; text: string }>;
  // OpenAI's shape: exactly one text item, the results object as JSON, the same as structuredContent.
  expect(content.length).toBe(1);
  expect(JSON.parse(content[0]!.text)).toEqual(r.structuredContent);
  return (r.structuredContent as { results: Result[] }).results;
}

async function fetchDoc(client: Client, id: string): Promise<Fetched> {
  const r = await client.callTool({ name: "fetch", arguments: { id } });
  if (r.isError) throw new Error(JSON.stringify(r.content));
  const content = r.content as Array<{ type: string; text: string }>;
  expect(content.length).toBe(1);
  expect(JSON.parse(content[0]!.text)).toEqual(r.structuredContent);
  return r.structuredContent as Fetched;
}

const words = (s: string) => s.split(/\s+/).filter(Boolean).join(" ");

beforeAll(async () => {
  roots = tempDir("corpus-search-fetch-");
  for (const d of ["mail", "docs"]) mkdirSync(join(roots, "alice", d), { recursive: true });
  writeFileSync(join(roots, "alice", "mail", "lighthouse.eml"), MAIL);
  cpSync(join(SHARED_DATA, "invoices", "AmazonWebServices.pdf"), join(roots, "alice", "docs", "AmazonWebServices.pdf"));
  writeFileSync(join(roots, "alice", "docs", "receipt-000.txt"), RECEIPT);
  writeFileSync(
    join(roots, "alice", "docs", "harbour-audit.txt"),
    "Harbour audit: the pallet count on the quay was 40 crates of Cordoba tiles.",
  );
  running = await startServer(
    testConfig({
      CORPUS_PORT: "0",
      CORPUS_CONNECTOR_ROOTS: join(roots, "{user}"),
      CORPUS_CONNECTORS_FILE: chinookOperatorFile(),
      // Every test here asks /mcp from one loopback address: its per-address bucket (60 a minute)
      // is another suite's subject, and a quiet machine spends it within this file's minute.
      CORPUS_RATE_LIMIT_REQUESTS_PER_MINUTE: "100000",
    }),
    createLogger("ERROR", memorySink().sink),
  );
  const s = running.services;
  for (const user of ["alice", "bob"])
    tokens[user] = (await s.auth.issuer.issue(user, ["corpus:search", "corpus:read", "connectors:read", "connectors:write"])).token;
  await s.connectors.add("alice", { id: "mail", kind: "maildir", label: "Harbour mail", config: { path: join(roots, "alice", "mail") } });
  await s.connectors.add("alice", { id: "docs", kind: "files", label: "Papers", config: { path: join(roots, "alice", "docs") } });
  await connectorsSettled(s, "alice");
});

afterAll(async () => {
  await running.stop();
});

/** alice's citations, for the isolation and deletion tests. */
const cited: Result[] = [];

describe("search then fetch (official v2 client, 2026-07-28)", () => {
  test("tools/list: search and fetch with a title annotation, read-only", async () => {
    const client = await connect("alice");
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of ["search", "fetch"]) {
      expect(byName.get(name)!.annotations).toMatchObject({ title: expect.any(String), readOnlyHint: true });
      expect(byName.get(name)!.outputSchema).toBeDefined();
    }
    await client.close();
  });

  test("a mail, a PDF invoice, a receipt and a table row: each result opens whole, its hash that of the text fetch returns", async () => {
    const client = await connect("alice");
    const cases: Array<{ query: string; kind: string; pick: (r: Result) => boolean; whole: (f: Fetched) => void }> = [
      {
        query: "Zanzibar lighthouse lantern housing quote",
        kind: "mail",
        pick: (r) => r.title.includes("Zanzibar lighthouse"),
        whole: (f) => {
          for (const paragraph of MAIL_BODY.split("\n\n")) expect(words(f.text)).toContain(words(paragraph));
          expect(f.metadata.connector).toBe("mail");
        },
      },
      {
        query: "Amazon Web Services invoice 42183017",
        kind: "document",
        pick: (r) => r.title.includes("AmazonWebServices"),
        whole: (f) => {
          expect(f.text).toContain("42183017");
          // The PDF's last line: the whole document, not the passage cited.
          expect(words(f.text)).toContain("All AWS Services are sold by Amazon Web Services, Inc.");
        },
      },
      {
        query: "KF modelling clay kiddy fish receipt",
        kind: "document",
        pick: (r) => r.title.includes("receipt-000"),
        whole: (f) => expect(words(f.text)).toBe(words(RECEIPT)),
      },
      {
        query: "invoice billed to Theodor-Heuss-Straße Stuttgart",
        kind: "row",
        pick: (r) => r.text.includes("Stuttgart"),
        whole: (f) => {
          expect(f.text).toContain("Theodor-Heuss-Straße");
          expect(f.metadata.connector).toBe("shop");
        },
      },
    ];
    for (const c of cases) {
      const results = await search(client, c.query);
      const hit = results.find(c.pick);
      expect(hit).toBeDefined();
      expect(hit!.id).toMatch(/^chnk_[0-9a-f]{32}$/);
      // No public URL configured: the page under the address bound (CORPUS_PORT=0 is its real port).
      expect(hit!.url).toBe(`http://127.0.0.1:${running.server.port}/d/${hit!.id}`);
      const f = await fetchDoc(client, hit!.id);
      expect(f).toMatchObject({ id: hit!.id, title: hit!.title, url: hit!.url });
      expect(f.metadata).toMatchObject({ kind: c.kind, chunk_id: hit!.id });
      expect(String(f.metadata.document_id)).toMatch(/^doc_[0-9a-f]{32}$/);
      // The citation verifies: the passage fetch returns hashes to what search carried, and lies in the document.
      expect(sha256(String(f.metadata.cited_text))).toBe(hit!.sha256);
      expect(words(f.text)).toContain(words(String(f.metadata.cited_text)));
      expect(f.metadata.document_sha256).toBe(sha256(f.text));
      c.whole(f);
      // The document's own id opens the same text.
      const whole = await fetchDoc(client, String(f.metadata.document_id));
      expect(whole.text).toBe(f.text);
      expect(whole.metadata.cited_text).toBeUndefined();
      cited.push(hit!);
    }
    await client.close();
  });

  test("resources/read opens a cited id (corpus://doc/<id>); corpus_search links it", async () => {
    const client = await connect("alice");
    const r = await client.callTool({
      name: "corpus_search",
      arguments: { query: "Zanzibar lighthouse lantern housing quote", maxResults: 2 },
    });
    const links = (r.content as Array<{ type: string; uri?: string }>).filter((c) => c.type === "resource_link");
    const results = (r.structuredContent as { results: Array<{ id: string; sha256: string }> }).results;
    expect(links.map((l) => l.uri)).toEqual(results.map((x) => `corpus://doc/${x.id}`));
    const read = await client.readResource({ uri: links[0]!.uri! });
    const fetched = await fetchDoc(client, results[0]!.id);
    expect(read.contents[0]).toMatchObject({ uri: links[0]!.uri, text: fetched.text });
    await client.close();
  });

  test("unchanged content keeps its ids when read again; a changed source gets new ones, and the old quote still opens and verifies", async () => {
    const client = await connect("alice");
    const file = join(roots, "alice", "docs", "harbour-audit.txt");
    const query = "harbour audit pallet count Cordoba tiles";
    const first = (await search(client, query)).find((r) => r.title.includes("harbour-audit"))!;
    expect(first).toBeDefined();
    // Read again (a new mtime), the same words: the same ids.
    const later = new Date(Date.now() + 5_000);
    utimesSync(file, later, later);
    await connectorsSettled(running.services, "alice");
    const again = (await search(client, query)).find((r) => r.title.includes("harbour-audit"))!;
    expect(again.id).toBe(first.id);
    expect(again.sha256).toBe(first.sha256);
    // Changed: a new id and hash.
    writeFileSync(file, "Harbour audit: the pallet count on the quay was 41 crates of Cordoba tiles.");
    const changedAt = new Date(Date.now() + 10_000);
    utimesSync(file, changedAt, changedAt);
    await connectorsSettled(running.services, "alice");
    const changed = (await search(client, query)).find((r) => r.title.includes("harbour-audit"))!;
    expect(changed.text).toContain("41 crates");
    expect(changed.id).not.toBe(first.id);
    expect(changed.sha256).not.toBe(first.sha256);
    // The archive still opens the old quote, exactly as it was returned: its hash verifies.
    const old = await fetchDoc(client, first.id);
    expect(old.text).toContain("40 crates");
    expect(sha256(String(old.metadata.cited_text))).toBe(first.sha256);
    await client.close();
    // The archive searched by meaning gives both quotes back with their ids and hashes.
    await running.services.archive.settled();
    const r = await fetch(`${running.url}/v1/deep_search`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.alice}`, "content-type": "application/json" },
      body: JSON.stringify({ query: "pallet count harbour audit", max_results: 50 }),
    });
    const archived = (
      (await r.json()) as { archive_results: Array<{ matched_chunk: { content: string; chunk_id?: string; sha256?: string } }> }
    ).archive_results.map((a) => a.matched_chunk);
    for (const quote of [first, changed]) {
      const m = archived.find((a) => a.chunk_id === quote.id)!;
      expect(m.sha256).toBe(quote.sha256);
      expect(sha256(m.content)).toBe(quote.sha256);
    }
  });
});

describe("a Maildir message read since", () => {
  test("keeps its ids: moved from new/ to cur/ and flagged seen, its content unchanged", async () => {
    const client = await connect("alice");
    const box = join(roots, "alice", "mail", "INBOX");
    for (const d of ["new", "cur", "tmp"]) mkdirSync(join(box, d), { recursive: true });
    const name = "1700000000.M1P1.harbour,S=512";
    writeFileSync(
      join(box, "new", name),
      MAIL.replace("Zanzibar lighthouse lantern housing quote", "Helsingborg buoy maintenance contract")
        .replace("lighthouse-4711@", "buoys-4712@")
        .replace(MAIL_BODY, "The Helsingborg buoy maintenance contract renews in May at 3,150 EUR a quarter."),
    );
    await connectorsSettled(running.services, "alice");
    const query = "Helsingborg buoy maintenance contract renewal";
    const arrived = (await search(client, query)).find((r) => r.title.includes("Helsingborg buoy"))!;
    expect(arrived).toBeDefined();
    const arrivedDocument = (await fetchDoc(client, arrived.id)).metadata.document_id;
    // A mail client reads it: Maildir moves it to cur/ and writes the Seen flag into its name.
    renameSync(join(box, "new", name), join(box, "cur", `${name}:2,S`));
    await connectorsSettled(running.services, "alice");
    const read = (await search(client, query)).find((r) => r.title.includes("Helsingborg buoy"))!;
    expect(read.url).toBe(arrived.url);
    expect(read.id).toBe(arrived.id);
    expect(read.sha256).toBe(arrived.sha256);
    expect((await fetchDoc(client, read.id)).metadata.document_id).toBe(arrivedDocument);
    await client.close();
    rmSync(box, { recursive: true });
    await connectorsSettled(running.services, "alice");
  });
});

describe("corpus_search's filters: the REST schemas and rules", () => {
  type Found = { results: Array<{ connector: string; title: string; date: string | null; id: string }> };
  const ask = async (client: Client, args: Record<string, unknown>) => {
    const r = await client.callTool({ name: "corpus_search", arguments: { query: "Zanzibar lighthouse invoice Stuttgart", ...args } });
    return r;
  };

  test("connectors, kinds, a date range and the number of results narrow what is returned", async () => {
    const client = await connect("alice");
    const shop = (await ask(client, { connectors: ["shop"], maxResults: 3 })).structuredContent as Found;
    expect(shop.results.length).toBeGreaterThan(0);
    expect(shop.results.length).toBeLessThanOrEqual(3);
    expect(shop.results.every((r) => r.connector === "shop")).toBe(true);
    const mail = (await ask(client, { kinds: ["mail"] })).structuredContent as Found;
    expect(mail.results.map((r) => r.connector)).toEqual(["mail"]);
    const rows = (await ask(client, { kinds: ["row", "books"] })).structuredContent as Found;
    expect(rows.results.length).toBeGreaterThan(0);
    for (const r of rows.results) expect((await fetchDoc(client, r.id)).metadata.kind).toBe("row");
    const march = (await ask(client, { kinds: ["mail"], date_from: "2024-03-01", date_to: "2024-03-31" })).structuredContent as Found;
    expect(march.results.map((r) => r.title)).toEqual(["Zanzibar lighthouse lantern housing quote"]);
    const before = (await ask(client, { kinds: ["mail"], date_to: "2024-03-04" })).structuredContent as Found;
    expect(before.results).toEqual([]);
    await client.close();
  });

  test("bad filters are refused in REST's words, before the search counts", async () => {
    const client = await connect("alice");
    const text = async (args: Record<string, unknown>) => {
      const r = await ask(client, args);
      expect(r.isError).toBe(true);
      return (r.content as Array<{ text: string }>)[0]!.text;
    };
    expect(await text({ connectors: ["nope"] })).toContain("Invalid filter: connectors: unknown connector id nope; valid ids: ");
    expect(await text({ connectors: ["Not An Id"] })).toContain("connectors/0");
    expect(await text({ date_from: "yesterday" })).toBe("Invalid filter: date_from: must be an ISO 8601 date (YYYY-MM-DD) or date-time");
    expect(await text({ date_from: "2024-04-01", date_to: "2024-03-01" })).toBe("Invalid filter: date_from: must be before date_to");
    expect(await text({ kinds: ["spreadsheet"] })).toContain("kinds/0");
    expect(await text({ kinds: ["mail", "mail"] })).toContain("kinds");
    await client.close();
  });
});

describe("only their owner opens them", () => {
  const rest = (id: string, user: string) =>
    fetch(`${running.url}/v1/documents/${id}`, { headers: { authorization: `Bearer ${tokens[user]}` } });
  const pageAs = (id: string, headers: Record<string, string>) => fetch(`${running.url}/d/${id}`, { headers, redirect: "manual" });

  test("the owner: GET /v1/documents/{id} and /d/<id> (token or session), the passage marked, everything escaped", async () => {
    const mail = cited[0]!;
    const r = await rest(mail.id, "alice");
    expect(r.status).toBe(200);
    const body = (await r.json()) as Fetched;
    expect(sha256(String(body.metadata.cited_text))).toBe(mail.sha256);
    const byToken = await pageAs(mail.id, { authorization: `Bearer ${tokens.alice}` });
    expect(byToken.status).toBe(200);
    expect(byToken.headers.get("cache-control")).toBe("no-store");
    expect(byToken.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await byToken.text();
    expect(html).toContain('<mark id="cited">');
    expect(html).toContain(mail.sha256);
    // The mail's markup and address in angle brackets: escaped, never markup.
    expect(html).toContain("&lt;b&gt;deadline&lt;/b&gt; &amp; reply to &lt;jonas@harbour.example&gt;");
    expect(html).not.toContain("<b>deadline");
    await running.services.accounts.add("alice", "a long enough password");
    const session = await running.services.oauth.createSession("alice");
    const bySession = await pageAs(mail.id, { cookie: `corpus_session=${session.id}` });
    expect(bySession.status).toBe(200);
    // Nobody: to sign in, and back.
    const nobody = await pageAs(mail.id, {});
    expect(nobody.status).toBe(303);
    expect(nobody.headers.get("location")).toBe(`/oauth/login?return=${encodeURIComponent(`/d/${mail.id}`)}`);
  });

  test("a citation's link in a browser: sign in, back to the page, the session cookie opens it; no open redirect", async () => {
    const mail = cited[0]!;
    const back = `/d/${mail.id}`;
    const form = await fetch(`${running.url}/oauth/login?return=${encodeURIComponent(back)}`, { redirect: "manual" });
    expect(form.status).toBe(200);
    const loginCookie = form.headers
      .getSetCookie()
      .find((c) => c.startsWith("corpus_login="))!
      .split(";")[0]!;
    const html = await form.text();
    const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
    expect(hidden("return")).toBe(back);
    const signedIn = await fetch(`${running.url}/oauth/login`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: loginCookie },
      body: new URLSearchParams({ user: "alice", password: "a long enough password", csrf: hidden("csrf")!, return: back }).toString(),
    });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get("location")).toBe(back);
    const session = signedIn.headers.getSetCookie().find((c) => c.startsWith("corpus_session="))!;
    expect(session).toContain("Path=/;");
    const opened = await fetch(`${running.url}${back}`, { headers: { cookie: session.split(";")[0]! } });
    expect(opened.status).toBe(200);
    expect(await opened.text()).toContain('<mark id="cited">');
    // Anywhere else than this server's own pages: back to the connected apps, never away.
    for (const away of ["https://evil.example/", "//evil.example/d/x", "/d/../oauth/token", `/d/${mail.id}/../x`]) {
      const r = await fetch(`${running.url}/oauth/login?return=${encodeURIComponent(away)}`, { redirect: "manual" });
      expect(/name="return" value="([^"]*)"/.exec(await r.text())?.[1]).toBe("/oauth/apps");
    }
  });

  test("a document opens with corpus:search on MCP (fetch, resources/read) and with corpus:read through REST and the page; each wire refuses the other scope alone", async () => {
    const s = running.services;
    const searchOnly = (await s.auth.issuer.issue("alice", ["corpus:search"])).token;
    const readOnly = (await s.auth.issuer.issue("alice", ["corpus:read"])).token;
    const id = cited[0]!.id;
    const viaRest = (token: string) => fetch(`${running.url}/v1/documents/${id}`, { headers: { authorization: `Bearer ${token}` } });
    expect((await viaRest(readOnly)).status).toBe(200);
    expect((await pageAs(id, { authorization: `Bearer ${readOnly}` })).status).toBe(200);
    const refused = await viaRest(searchOnly);
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toContain('scope="corpus:read"');
    expect((await pageAs(id, { authorization: `Bearer ${searchOnly}` })).status).toBe(403);
    tokens.searchOnly = searchOnly;
    const client = await connect("searchOnly");
    expect((await client.callTool({ name: "fetch", arguments: { id } })).isError).toBeFalsy();
    expect((await client.readResource({ uri: `corpus://doc/${id}` })).contents.length).toBe(1);
    await client.close();
    // MCP: a corpus:read token alone is 403 with the scope to step up to, for the tool and the resource.
    for (const [method, params] of [
      ["tools/call", { name: "fetch", arguments: { id } }],
      ["resources/read", { uri: `corpus://doc/${id}` }],
    ] as const) {
      const r = await fetch(`${running.url}/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${readOnly}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
      expect(r.status).toBe(403);
      expect(r.headers.get("www-authenticate")).toContain('scope="corpus:search"');
    }
  });

  test("another user's ids are not found on fetch, resources/read, GET /v1/documents/{id} and /d/<id>", async () => {
    const client = await connect("bob");
    await running.services.accounts.add("bob", "another long password");
    const bobSession = await running.services.oauth.createSession("bob");
    for (const c of cited) {
      const r = await client.callTool({ name: "fetch", arguments: { id: c.id } });
      expect(r.isError).toBe(true);
      expect((r.content as Array<{ text: string }>)[0]!.text).toStartWith("Document not found");
      await expect(client.readResource({ uri: `corpus://doc/${c.id}` })).rejects.toThrow("Document not found");
      const viaRest = await rest(c.id, "bob");
      expect(viaRest.status).toBe(404);
      expect(await viaRest.json()).toMatchObject({ type: "not_found" });
      expect((await pageAs(c.id, { authorization: `Bearer ${tokens.bob}` })).status).toBe(404);
      expect((await pageAs(c.id, { cookie: `corpus_session=${bobSession.id}` })).status).toBe(404);
    }
    // Made-up and hostile ids: the same answer.
    for (const id of ["doc_00000000000000000000000000000000", "chnk_ffffffffffffffffffffffffffffffff", "..%2F..%2Fetc%2Fpasswd"]) {
      expect((await rest(id, "bob")).status).toBe(404);
      expect((await pageAs(id, { authorization: `Bearer ${tokens.bob}` })).status).toBe(404);
    }
    await client.close();
  });

  test("a deleted user's ids open nothing", async () => {
    const session = await running.services.oauth.createSession("alice");
    const r = await fetch(`${running.url}/v1/delete_my_data`, { method: "DELETE", headers: { authorization: `Bearer ${tokens.alice}` } });
    expect(r.status).toBe(200);
    for (const c of cited) {
      expect(running.services.archive.citedChunk("alice", c.id.slice("chnk_".length))).toBeUndefined();
      const page = await fetch(`${running.url}/d/${c.id}`, { headers: { cookie: `corpus_session=${session.id}` }, redirect: "manual" });
      expect(page.status).not.toBe(200);
      expect((await fetch(`${running.url}/v1/documents/${c.id}`, { headers: { authorization: `Bearer ${tokens.alice}` } })).status).toBe(
        401,
      );
    }
    expect(running.services.archive.rowsOf("alice")).toBe(0);
    for (const c of cited) expect(await openDocument(running.services.archive, "alice", c.id)).toBeUndefined();
  });
});
