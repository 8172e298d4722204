// The operator console in headless Chromium (D35): an operator signs in by keyboard,
// sees health and disk, adds a user, revokes a user's token (refused by the API at once), starts
// a backup (a real `corpus backup` child, then `corpus verify`) and sees it written and verified,
// removes an older one, signs out; by keyboard alone (Tab and Enter) adds a user and revokes their access; a user who is no operator is refused. The pages obey their CSP (no violation reported); each is screenshotted
// into test-output/console/.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { BACKUP_FOLDER } from "../../src/console/backups";
import { createFetch } from "../../src/server";
import { bearer, tempDir, testApp, tokenFor } from "../helpers";
import { launchChromium } from "../support/chromium";
import { freePort } from "../support/tcp";
import { until } from "../support/wait";

setDefaultTimeout(60_000);

const OUTPUT = join(import.meta.dir, "../../test-output/console");

describe("the console in Chromium", () => {
  let t: Awaited<ReturnType<typeof testApp>>;
  let server: ReturnType<typeof Bun.serve>;
  let browser: Browser;
  let url: string;
  let aliceToken: string;

  beforeAll(async () => {
    mkdirSync(OUTPUT, { recursive: true });
    const port = await freePort();
    const roots = tempDir("corpus-console-roots-");
    mkdirSync(join(roots, "alice"));
    t = await testApp({ CORPUS_PORT: String(port), CORPUS_CONNECTOR_ROOTS: roots });
    await t.services.accounts.add("root", "the operator's password", { operator: true });
    await t.services.accounts.add("alice", "alice's long password");
    aliceToken = await tokenFor(t.services, "alice", ["connectors:read"]);
    await t.services.connectors.add("alice", {
      id: "notes",
      kind: "files",
      label: "Alice's private label",
      config: { path: join(roots, "alice") },
    });
    server = Bun.serve({ hostname: "127.0.0.1", port, development: false, fetch: createFetch(t.app.fetch, t.config, t.log) });
    url = `http://127.0.0.1:${port}`;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    server?.stop(true);
    await t?.services.close();
  });

  const aliceConnectors = async () => (await fetch(`${url}/v1/connectors`, { headers: bearer(aliceToken) })).status;

  /** A page that records every CSP violation the browser reports. */
  async function newPage(): Promise<{ page: Page; violations: string[] }> {
    const page = await (await browser.newContext()).newPage();
    const violations: string[] = [];
    page.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    return { page, violations };
  }

  /** The name a backup started now gets (console/backups.ts). */
  const backupName = () => `corpus-${new Date().toISOString().slice(0, 19).replaceAll(":", "-")}Z.backup`;

  /** Reloads the backups page until the last backup is written and verified (`corpus backup` and `corpus verify` run as children). */
  async function backupEnded(page: Page) {
    for (let i = 0; i < 600 && (await page.getByText(/^(written and verified|failed)$/).count()) === 0; i++) {
      await Bun.sleep(50);
      await page.reload(); // a GET: the start was answered by a redirect to the list
    }
    expect(await page.getByText("written and verified", { exact: true }).count()).toBe(1);
  }

  /** Signs in with the keyboard alone: the user name field first, Tab to the password, Enter. */
  async function keyboardSignIn(page: Page, user: string, password: string) {
    await page.goto(`${url}/console`);
    await page.getByRole("heading", { name: "corpus console" }).waitFor();
    await page.getByLabel("User name").focus();
    await page.keyboard.type(user);
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("password");
    await page.keyboard.type(password);
    await page.keyboard.press("Enter");
  }

  test("an operator signs in, sees health, adds a user, revokes a token, signs out", async () => {
    const { page, violations } = await newPage();
    await page.goto(`${url}/console`);
    await page.screenshot({ path: join(OUTPUT, "1-sign-in.png"), fullPage: true });
    await keyboardSignIn(page, "root", "the operator's password");
    await page.getByRole("heading", { name: "Health" }).waitFor();
    expect(await page.getByText("free in the data folder").count()).toBe(1);
    await page.screenshot({ path: join(OUTPUT, "2-health.png"), fullPage: true });

    await page.getByRole("link", { name: "Users" }).click();
    await page.getByRole("heading", { name: "Users" }).waitFor();
    await page.screenshot({ path: join(OUTPUT, "3-users.png"), fullPage: true });
    await page.getByLabel("User name").fill("bob");
    await page.getByLabel(/^Password/).fill("bob's long password");
    await page.getByRole("button", { name: "Add" }).click();
    await page.getByRole("status").filter({ hasText: "added user bob" }).waitFor();
    expect(t.services.accounts.exists("bob")).toBe(true);
    await page.screenshot({ path: join(OUTPUT, "4-user-added.png"), fullPage: true });

    expect(await aliceConnectors()).toBe(200);
    await page.getByRole("button", { name: "Revoke the tokens and apps of alice" }).click();
    await page.getByRole("status").filter({ hasText: "revoked every token of alice" }).waitFor();
    expect(await aliceConnectors()).toBe(401);
    await page.screenshot({ path: join(OUTPUT, "5-token-revoked.png"), fullPage: true });

    await page.getByRole("link", { name: "Connectors" }).click();
    await page.getByRole("heading", { name: "Connectors", exact: true }).waitFor();
    const aliceRow = page.getByRole("row").filter({ has: page.getByRole("cell", { name: "alice", exact: true }) });
    expect(await aliceRow.getByRole("cell").nth(1).textContent()).toBe("1");
    expect(await aliceRow.getByRole("cell").nth(2).textContent()).toBe("files");
    expect(await page.getByText("Alice's private label").count()).toBe(0);
    await page.screenshot({ path: join(OUTPUT, "6-connectors.png"), fullPage: true });

    await page.getByRole("link", { name: "Backups" }).click();
    await page.getByRole("heading", { name: "Backups" }).waitFor();
    await page.getByRole("button", { name: "Start a backup" }).click();
    await page.getByText(/^corpus-.*\.backup, started .*: (running|written)/).waitFor();
    await page.screenshot({ path: join(OUTPUT, "7-backup-started.png"), fullPage: true });
    // `corpus backup` runs as a child process; the page says when it is written.
    await backupEnded(page);
    const files = readdirSync(join(t.config.CORPUS_DATA_DIR, BACKUP_FOLDER)).filter((f) => f.endsWith(".backup"));
    expect(files).toHaveLength(1);
    expect(await page.getByRole("cell", { name: files[0] }).count()).toBe(1);
    await page.screenshot({ path: join(OUTPUT, "8-backup-written.png"), fullPage: true });
    const downloading = page.waitForEvent("download");
    await page.getByRole("link", { name: files[0] }).click();
    const saved = join(OUTPUT, "downloaded.backup");
    await (await downloading).saveAs(saved);
    expect(Buffer.compare(readFileSync(saved), readFileSync(join(t.config.CORPUS_DATA_DIR, BACKUP_FOLDER, files[0]!)))).toBe(0);

    // The only backup has no Remove button; with a second one (names are by the second), the older can go.
    expect(await page.getByRole("button", { name: /^Remove / }).count()).toBe(0);
    await until("a new second for the next backup's name", () => (backupName() !== files[0] ? true : undefined));
    await page.getByRole("button", { name: "Start a backup" }).click();
    await backupEnded(page);
    await page.getByRole("button", { name: `Remove ${files[0]}` }).click();
    await page
      .getByRole("status")
      .filter({ hasText: `Removed ${files[0]}.` })
      .waitFor();
    const left = readdirSync(join(t.config.CORPUS_DATA_DIR, BACKUP_FOLDER));
    expect(left).toHaveLength(1);
    expect(left[0]).not.toBe(files[0]);
    await page.screenshot({ path: join(OUTPUT, "8b-backup-removed.png"), fullPage: true });

    await page.getByRole("link", { name: "Last errors" }).click();
    await page.getByRole("heading", { name: "Last errors" }).waitFor();
    await page.screenshot({ path: join(OUTPUT, "9-last-errors.png"), fullPage: true });

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Signed out" }).waitFor();
    await page.screenshot({ path: join(OUTPUT, "10-signed-out.png"), fullPage: true });
    await page.goto(`${url}/console/users`);
    await page.getByRole("heading", { name: "corpus console" }).waitFor();
    expect(violations).toEqual([]);
  });

  test("by keyboard alone: Tab to the users page, add a user, revoke their access; focus never lost on the way", async () => {
    const { page, violations } = await newPage();
    await keyboardSignIn(page, "root", "the operator's password");
    await page.getByRole("heading", { name: "Health" }).waitFor();
    /** Presses Tab until the focused element is `wanted` (by its accessible text or id), at most 80 times. */
    const tabTo = async (wanted: (e: { id: string; text: string; label: string }) => boolean) => {
      for (let i = 0; i < 80; i++) {
        await page.keyboard.press("Tab");
        const e = await page.evaluate(() => {
          const a = document.activeElement as HTMLElement | null;
          return { id: a?.id ?? "", text: a?.textContent?.trim() ?? "", label: a?.getAttribute("aria-label") ?? "", tag: a?.tagName ?? "" };
        });
        expect(e.tag, "focus left the page's controls").not.toBe("BODY");
        if (wanted(e)) return;
      }
      throw new Error("never focused by Tab");
    };
    await tabTo((e) => e.text === "Users");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Users" }).waitFor();
    await tabTo((e) => e.id === "new-user");
    await page.keyboard.type("dora");
    await page.keyboard.press("Tab");
    await page.keyboard.type("dora's long password");
    await page.keyboard.press("Enter");
    await page.getByRole("status").filter({ hasText: "added user dora" }).waitFor();
    expect(t.services.accounts.exists("dora")).toBe(true);
    const doraToken = await tokenFor(t.services, "dora", ["connectors:read"]);
    expect((await fetch(`${url}/v1/connectors`, { headers: bearer(doraToken) })).status).toBe(200);
    await tabTo((e) => e.label === "Revoke the tokens and apps of dora");
    await page.keyboard.press("Enter");
    await page.getByRole("status").filter({ hasText: "revoked every token of dora" }).waitFor();
    expect((await fetch(`${url}/v1/connectors`, { headers: bearer(doraToken) })).status).toBe(401);
    await page.screenshot({ path: join(OUTPUT, "12-keyboard-revoked.png"), fullPage: true });
    expect(violations).toEqual([]);
  });

  test("a user who is not an operator is refused, and sees no console page", async () => {
    const { page, violations } = await newPage();
    await keyboardSignIn(page, "alice", "alice's long password");
    await page.getByRole("heading", { name: "Forbidden" }).waitFor();
    expect(await page.getByText("not an operator").count()).toBe(1);
    await page.screenshot({ path: join(OUTPUT, "11-not-an-operator.png"), fullPage: true });
    const users = await page.goto(`${url}/console/users`);
    expect(users?.status()).toBe(401);
    expect(violations).toEqual([]);
  });
});
