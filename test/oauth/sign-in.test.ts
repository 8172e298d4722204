// Password sign-in under concurrent guessing (issue 35 item 2): each attempt is counted by the
// throttle before its argon2id hash is computed, and hashes wait for the process's gate, so
// guesses sent at once get no more password checks than the throttle allows, and never more
// than HASHES_RUNNING at once, one at a time per client address. Hashes are counted where they
// happen (Bun.password), not timed. Client addresses are given as the listener gives them
// (beginRequest), so one test can be several clients.
import { afterEach, beforeEach, describe, expect, spyOn, test } from "bun:test";
import { HASHES_RUNNING, passwordHashes } from "../../src/accounts/hash-gate";
import { beginRequest } from "../../src/http/request-context";
import {
  ACCOUNT_ADDRESS_FAILURES,
  ACCOUNT_FAILURES,
  ADDRESS_FAILURES,
  type LoginThrottle,
  SPRAYED_ACCOUNT_MS,
} from "../../src/oauth/throttle";
import { req, testApp } from "../helpers";
import { cookieOf, field, formPost } from "./support";

/** Every argon2id hash and verification in the process while a test runs: how many, and the most at once. */
const hashes = { calls: 0, running: 0, peak: 0 };
const spies: Array<{ mockRestore(): void }> = [];

beforeEach(() => {
  Object.assign(hashes, { calls: 0, running: 0, peak: 0 });
  for (const name of ["hash", "verify"] as const) {
    const original = Bun.password[name] as (...args: unknown[]) => Promise<unknown>;
    spies.push(
      spyOn(Bun.password, name).mockImplementation((async (...args: unknown[]) => {
        hashes.calls++;
        hashes.peak = Math.max(hashes.peak, ++hashes.running);
        try {
          return await original.apply(Bun.password, args);
        } finally {
          hashes.running--;
        }
      }) as never),
    );
  }
});

afterEach(() => {
  for (const spy of spies.splice(0)) spy.mockRestore();
});

/** A fresh server with `accounts`, and a way to post its sign-in form (one browser; from one address unless told). */
async function signInForm(accounts: Record<string, string> = {}) {
  const t = await testApp();
  for (const [user, password] of Object.entries(accounts)) await t.services.accounts.add(user, password);
  const page = await t.app.handle(req("/oauth/apps"));
  const cookie = cookieOf(page, "corpus_login")!;
  const csrf = field(await page.text(), "csrf")!;
  /** `device`: the browser's device cookie (`corpus_device=…`), sent with the login cookie. */
  const post = (user: string, password: string, from?: string, device?: string) => {
    const r = formPost(
      "/oauth/login",
      { user, password, csrf, return: "/oauth/apps" },
      { cookie: device ? `${cookie}; ${device}` : cookie },
    );
    if (from) beginRequest(r, from);
    return t.app.handle(r);
  };
  return { t, post };
}

describe("sign-in under concurrent guesses", () => {
  test("29 wrong passwords and the right one sent at once: only the throttle's allowance is checked, the right one refused", async () => {
    const { t, post } = await signInForm({ carol: "carol's long password" });
    hashes.calls = 0;
    const answers = await Promise.all([
      ...Array.from({ length: 29 }, (_, i) => post("carol", `wrong guess ${i}`)),
      post("carol", "carol's long password"),
    ]);
    const statuses = answers.map((r) => r.status);
    expect(hashes.calls).toBeLessThanOrEqual(ACCOUNT_ADDRESS_FAILURES);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(ACCOUNT_ADDRESS_FAILURES);
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    await t.services.close();
  });

  test("200 guesses at once from one address: at most its allowance checked, never more than the gate's hashes at once", async () => {
    const { t, post } = await signInForm();
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => post(`guesser-${i}`, `guess number ${i}`)));
    const statuses = answers.map((r) => r.status);
    // An unknown account is checked against a decoy hash (made once): one more hash than checks.
    expect(hashes.calls).toBeLessThanOrEqual(ADDRESS_FAILURES + 1);
    expect(hashes.peak).toBeLessThanOrEqual(HASHES_RUNNING);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(200 - ADDRESS_FAILURES);
    for (const r of answers.filter((a) => a.status === 429)) expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    await t.services.close();
  });

  test("a sign-in refused because the hashes are busy does not count against the account", async () => {
    const { t, post } = await signInForm({ dave: "dave's long password" });
    // The process's gate full: its running slots and its queue held by hashes that wait on us.
    let release!: () => void;
    const held = new Promise<void>((go) => {
      release = go;
    });
    const holders = Array.from({ length: passwordHashes.maxRunning + passwordHashes.maxWaiting }, () => passwordHashes.run(() => held));
    const busy: Response[] = [];
    for (let i = 0; i < ACCOUNT_ADDRESS_FAILURES + 2; i++) busy.push(await post("dave", "dave's long password"));
    expect(busy.map((r) => r.status)).toEqual(busy.map(() => 429));
    expect(await busy[0]!.text()).toContain("at once");
    release();
    await Promise.all(holders);
    expect((await post("dave", "dave's long password")).status).toBe(303);
    await t.services.close();
  });

  test("five wrong passwords for bob from a stranger's address do not refuse bob's right one from his own", async () => {
    const { t, post } = await signInForm({ bob: "bob's long password" });
    for (let i = 0; i < ACCOUNT_ADDRESS_FAILURES; i++) expect((await post("bob", `wrong ${i}`, "198.51.100.66")).status).toBe(401);
    expect((await post("bob", "bob's long password", "198.51.100.66")).status).toBe(429);
    expect((await post("bob", "bob's long password", "192.0.2.10")).status).toBe(303);
    await t.services.close();
  });

  test("attack: bob's account sprayed from 20 addresses: bob signs in from where he did before, and from his browser elsewhere; a new address waits seconds, not 15 minutes", async () => {
    const { t, post } = await signInForm({ bob: "bob's long password" });
    const home = await post("bob", "bob's long password", "192.0.2.10");
    expect(home.status).toBe(303);
    const device = cookieOf(home, "corpus_device")!;
    expect(device).toMatch(/^corpus_device=[A-Za-z0-9_-]{43}$/);
    // The strangers' wrong passwords, counted as the sign-in counts them (without their 100 hashes).
    const throttle = (t.services.oauth as unknown as { signIn: { throttle: LoginThrottle } }).signIn.throttle;
    let guesses = 0;
    const spray = (n: number) => {
      for (let i = 0; i < n; i++, guesses++) {
        const counted = throttle.attempt("bob", `203.0.113.${Math.floor(guesses / ACCOUNT_ADDRESS_FAILURES)}`);
        if (!("attempt" in counted)) throw new Error(`refused at ${guesses}`);
      }
    };
    spray(ACCOUNT_FAILURES);
    // Before: 429 for the window, from everywhere, the right password included.
    expect((await post("bob", "bob's long password", "192.0.2.10")).status).toBe(303);
    spray(1); // the strangers go on
    const elsewhere = await post("bob", "bob's long password", "198.51.100.7");
    expect(elsewhere.status).toBe(429);
    expect(Number(elsewhere.headers.get("retry-after"))).toBeLessThanOrEqual(SPRAYED_ACCOUNT_MS / 1000);
    expect(await elsewhere.text()).toContain("seconds");
    // His browser on another network (a phone's address changes): known by its device cookie.
    expect((await post("bob", "bob's long password", "198.51.100.8", device)).status).toBe(303);
    // A device cookie of the stranger's own making is no known browser of bob's.
    spray(1);
    expect((await post("bob", "bob's long password", "198.51.100.9", `corpus_device=${"A".repeat(43)}`)).status).toBe(429);
    await t.services.close();
  });

  test("attack: a device cookie put in bob's browser by a stranger (a sibling site's cookie) is not made known by bob's sign-in", async () => {
    const { t, post } = await signInForm({ bob: "bob's long password" });
    const planted = `corpus_device=${"Pl4nted_by-a-stranger".padEnd(43, "x")}`;
    const home = await post("bob", "bob's long password", "192.0.2.10", planted);
    expect(home.status).toBe(303);
    // A sign-in issues a device id of its own, as a session id is (fixation).
    const issued = cookieOf(home, "corpus_device")!;
    expect(issued).toMatch(/^corpus_device=[A-Za-z0-9_-]{43}$/);
    expect(issued).not.toBe(planted);
    const throttle = (t.services.oauth as unknown as { signIn: { throttle: LoginThrottle } }).signIn.throttle;
    for (let i = 0; i < ACCOUNT_FAILURES; i++)
      if (!("attempt" in throttle.attempt("bob", `203.0.113.${Math.floor(i / ACCOUNT_ADDRESS_FAILURES)}`)))
        throw new Error(`refused at ${i}`);
    // Before: the planted id was known to bob's account, and its maker guessed unslowed (401) from every new address.
    expect((await post("bob", "a guess", "198.51.100.9", planted)).status).toBe(429);
    expect((await post("bob", "bob's long password", "198.51.100.10", issued)).status).toBe(303);
    await t.services.close();
  });

  test("one address (an IPv6 /64) guessing at once holds one hash at a time: alice signs in meanwhile, and its busy refusals cost it", async () => {
    const { t, post } = await signInForm({ alice: "alice's long password" });
    await post("nobody", "warm the decoy hash", "192.0.2.1");
    Object.assign(hashes, { calls: 0, peak: 0 });
    // 40 guesses for unknown names from one /64 (each a different address in it), then alice from elsewhere.
    const answers = await Promise.all([
      ...Array.from({ length: 40 }, (_, i) => post(`stranger-${i}`, "a guess", `2001:db8:40:1::${(i + 1).toString(16)}`)),
      post("alice", "alice's long password", "192.0.2.10"),
    ]);
    const guesses = answers.slice(0, -1).map((r) => r.status);
    // The gate had room: this /64 held at most one of its slots, and every other guess was refused at once.
    expect(answers.at(-1)!.status).toBe(303);
    expect(hashes.calls).toBeLessThanOrEqual(2);
    expect(guesses.filter((s) => s === 401).length).toBeLessThanOrEqual(1);
    expect(guesses.every((s) => s === 401 || s === 429)).toBe(true);
    // Each busy refusal was counted against the /64: it is now throttled, a real account's right password included.
    const after = await post("alice", "alice's long password", "2001:db8:40:1::ffff");
    expect(after.status).toBe(429);
    expect(await after.text()).toContain("failed sign-ins");
    await t.services.close();
  });
});
