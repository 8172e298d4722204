// Installs stay silent and make no request but to the package registry (issue 13, item 13):
// each dependency's install script is allowed or denied by name in package.json's allowScripts,
// the telemetry one is denied (and switched off by scarfSettings for package managers that
// run it anyway), and npm sees no project config it does not know.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  allowScripts?: Record<string, boolean>;
  scarfSettings?: { enabled?: boolean };
};
const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
  packages: Record<string, { hasInstallScript?: boolean }>;
};

/** Names of the locked dependencies that have an install script. */
const withInstallScripts = () =>
  Object.entries(lock.packages)
    .filter(([path, p]) => path !== "" && p.hasInstallScript)
    .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length));

describe("install scripts (issue 13)", () => {
  test("every dependency's install script is decided; only Bun's (which places its binary) runs", () => {
    const allow = pkg.allowScripts ?? {};
    for (const name of withInstallScripts()) expect(allow, `${name} has an install script`).toHaveProperty([name]);
    expect(
      Object.entries(allow)
        .filter(([, v]) => v)
        .map(([k]) => k),
    ).toEqual(["bun"]);
    // The binaries of onnxruntime-node ship in its package; its script would fetch a CUDA provider.
    expect(allow["onnxruntime-node"]).toBe(false);
  });

  test("Scarf's install-time report is denied and switched off", () => {
    expect(pkg.allowScripts?.["@scarf/scarf"]).toBe(false);
    expect(pkg.scarfSettings).toEqual({ enabled: false });
  });

  test("npm finds no unknown project config (.npmrc)", () => {
    // Any command reads the config; this one also touches nothing.
    const run = Bun.spawnSync(["npm", "config", "get", "fund"], {
      cwd: ROOT,
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, npm_config_offline: "true" },
    });
    expect(run.stderr.toString()).not.toContain("Unknown project config");
    expect(run.exitCode).toBe(0);
  }, 30_000);
});
