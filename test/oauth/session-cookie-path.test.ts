// The session cookie moved from Path=/oauth to Path=/ (D36: a document's page /d/<id> opens for
// the signed-in person). A browser signed in before the move holds the old cookie, which it
// sends to /oauth/* but not to /d/*: the page sent it to sign in, the sign-in found the session
// and sent it back, without a cookie the page could see, for as long as the session lived (a
// redirect loop). And signing out must end that cookie's session too. Driven here as a browser
// would, with a cookie jar that honours Path and Max-Age.
import { beforeAll, describe, expect, test } from "bun:test";
import { BASE, testApp } from "../helpers";
import { cookieOf, field, formPost } from "./support";

type Jar = Map<string, { name: string; value: string; path: string }>;

/** Takes a response's Set-Cookie headers into the jar (Max-Age=0 removes). */
function keep(jar: Jar, r: Response) {
  for (const line of r.headers.getSetCookie()) {
    const [pair, ...attrs] = line.split(";").map((x) => x.trim());
    const eq = pair!.indexOf("=");
    const name = pair!.slice(0, eq);
    const path = attrs.find((a) => /^path=/i.test(a))?.slice(5) ?? "/";
    const key = `${name} ${path}`;
    if (attrs.some((a) => /^max-age=0$/i.test(a))) jar.delete(key);
    else jar.set(key, { name, value: pair!.slice(eq + 1), path });
  }
}

/** The Cookie header a browser sends to `path`: the cookies whose Path covers it, the longest path first. */
const cookieFor = (jar: Jar, path: string) =>
  [...jar.values()]
    .filter((c) => path === c.path || path.startsWith(c.path.endsWith("/") ? c.path : `${c.path}/`))
    .sort((a, b) => b.path.length - a.path.length)
    .map((c) => `${c.name}=${c.value}`)
    .join("; ");

let t: Awaited<ReturnType<typeof testApp>>;

beforeAll(async () => {
  t = await testApp();
  await t.services.accounts.add("alice", "a long enough password");
});

/** GETs `path` as the browser holding `jar`, following up to `hops` redirects; answers the last response and the paths visited. */
async function browse(jar: Jar, path: string, hops = 6) {
  const visited: string[] = [];
  for (let i = 0; i <= hops; i++) {
    visited.push(path);
    const cookie = cookieFor(jar, path.split("?")[0]!);
    const r = await t.app.handle(new Request(`${BASE}${path}`, { headers: cookie ? { cookie } : {} }));
    keep(jar, r);
    const location = r.headers.get("location");
    if (r.status !== 303 || !location) return { r, visited };
    path = location;
  }
  return { r: undefined, visited };
}

/** A browser signed in before the cookie moved: its session cookie is at Path=/oauth. */
async function oldBrowser(): Promise<Jar> {
  const { id } = await t.services.oauth.createSession("alice");
  return new Map([["corpus_session /oauth", { name: "corpus_session", value: id, path: "/oauth" }]]);
}

const PAGE = "/d/doc_0123456789abcdef0123456789abcdef";

describe("a session cookie set at Path=/oauth", () => {
  test("a document's page signs in and comes back once, opened by the session (no redirect loop)", async () => {
    const jar = await oldBrowser();
    const { r, visited } = await browse(jar, PAGE);
    // Was /d → /oauth/login → /d → /oauth/login … until the browser gave up.
    expect(visited.length).toBeLessThanOrEqual(3);
    // Opened for alice: an id that is not hers is "not found", not a sign-in.
    expect(r?.status).toBe(404);
    expect(await r!.text()).toContain("No document of yours has this id");
  });

  test("signing out ends the session the old cookie names, and the old cookie", async () => {
    const jar = await oldBrowser();
    await browse(jar, PAGE);
    const apps = await browse(jar, "/oauth/apps");
    const csrf = field(await apps.r!.text(), "csrf")!;
    const out = await t.app.handle(formPost("/oauth/logout", { csrf }, { cookie: cookieFor(jar, "/oauth/logout") }));
    expect(out.status).toBe(200);
    keep(jar, out);
    // Signed out everywhere: the apps page asks to sign in, the document's page sends there.
    const after = await browse(jar, "/oauth/apps");
    expect(after.r!.status).toBe(200);
    expect(field(await after.r!.text(), "return")).toBe("/oauth/apps");
    expect(cookieOf(after.r!, "corpus_session")).toBeUndefined();
    const page = await browse(jar, PAGE, 1);
    expect(page.visited).toEqual([PAGE, `/oauth/login?return=${encodeURIComponent(PAGE)}`]);
    expect(page.r!.status).toBe(200);
  });
});
