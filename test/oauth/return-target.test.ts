// Where a sign-in leads back to (`return` of /oauth/login, D36): only this server's own pages.
// Whatever a link puts there (another site in any spelling, a script URL, control characters, a
// character a header cannot hold) leads to the connected-apps page, signed in or not, on the
// GET and on the form's POST, and never fails the request.
import { beforeAll, describe, expect, test } from "bun:test";
import { req, testApp } from "../helpers";
import { cookieOf, field, formPost, signIn } from "./support";

const HOSTILE = [
  "https://evil.example/",
  "//evil.example/",
  "/\\evil.example/",
  "/%2F%2Fevil.example",
  "javascript:alert(1)",
  " /oauth/apps",
  "/oauth/authorize?x=1\r\nSet-Cookie: corpus_session=planted",
  "/oauth/authorize?x=\u0000",
  "/oauth/authorize?x=\u2028",
  "/oauth/authorize?x=\u00e9\u4e2d",
  "/oauth/authorize?x=\t",
];

let t: Awaited<ReturnType<typeof testApp>>;
let session: string;

beforeAll(async () => {
  t = await testApp();
  await t.services.accounts.add("alice", "a long enough password");
  session = await signIn(t.app, "alice", "a long enough password");
});

describe("a sign-in's return target", () => {
  test("signed in: GET /oauth/login sends every hostile return to the connected apps, never elsewhere, never a 500", async () => {
    for (const back of HOSTILE) {
      const r = await t.app.handle(req(`/oauth/login?return=${encodeURIComponent(back)}`, { headers: { cookie: session } }));
      expect({ back, status: r.status, location: r.headers.get("location") }).toEqual({ back, status: 303, location: "/oauth/apps" });
    }
  });

  test("not signed in: the form carries the connected apps as its return", async () => {
    for (const back of HOSTILE) {
      const r = await t.app.handle(req(`/oauth/login?return=${encodeURIComponent(back)}`));
      expect(r.status).toBe(200);
      expect(field(await r.text(), "return")).toBe("/oauth/apps");
    }
  });

  test("the form's POST: a hostile return leads to the connected apps after signing in", async () => {
    const page = await t.app.handle(req("/oauth/apps"));
    const loginCookie = cookieOf(page, "corpus_login")!;
    const csrf = field(await page.text(), "csrf")!;
    const r = await t.app.handle(
      formPost(
        "/oauth/login",
        { user: "alice", password: "a long enough password", csrf, return: "/oauth/authorize?x=\u2028\r\n" },
        { cookie: loginCookie },
      ),
    );
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/oauth/apps");
  });
});
