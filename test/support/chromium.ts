// The headless Chromium of the browser tests (Debian `chromium`, which `npm test` as root installs),
// driven by playwright-core, with no network of its own beyond what a test asks for.
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`a headless Chromium is needed at ${CHROMIUM} (Debian package chromium: sudo npm test installs it)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
