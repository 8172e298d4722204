// The test runner's check of what the integration tests need (scripts/test-needs.ts), on a
// made-up machine: which Debian packages are missing, which apt-get commands root runs, the one
// line another user is told. The real install runs in CI on a fresh machine (.ci/run).
import { expect, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bringTestNeeds, hasPgvector, type Machine, PGVECTOR, planFor } from "../../scripts/test-needs";
import { tempDir } from "../helpers";

/**
 * The books oracle's tools (ledger, bean-query), MariaDB, systemd-analyze, buildah, and pgvector unless
 * `pgvector` is false: on every made-up machine unless asked, the cases below are about the others.
 * pgvector is there for the made-up server (17) and for Debian 12's (15), which a machine without
 * PostgreSQL would get.
 */
const OTHER_TOOLS = ["ledger", "bean-query", "mariadbd", "systemd-analyze", "buildah"];

/** A machine holding the named tools (dovecot, postgresql, chromium, strace, prometheus, gcc, make, headers) and `always`, as the user `uid`. */
function machine(tools: string[], uid = 0, pgvector = true, always = OTHER_TOOLS) {
  const root = tempDir();
  const bin = join(root, "bin");
  mkdirSync(bin);
  const machine: Machine = {
    path: bin,
    postgresRoot: join(root, "postgresql"),
    postgresShare: join(root, "share-postgresql"),
    postgresInclude: join(root, "include-postgresql"),
    vendor: join(root, "vendor"),
    scratch: join(root, "scratch"),
    chromium: join(root, "chromium"),
    uid,
  };
  const install = (tool: string) => {
    const files = {
      dovecot: [join(bin, "dovecot")],
      postgresql: [join(machine.postgresRoot, "17", "bin", "initdb")],
      chromium: [machine.chromium],
      strace: [join(bin, "strace")],
      prometheus: [join(bin, "prometheus")],
      ledger: [join(bin, "ledger")],
      "bean-query": [join(bin, "bean-query")],
      "systemd-analyze": [join(bin, "systemd-analyze")],
      buildah: [join(bin, "buildah")],
      mariadbd: [join(bin, "mariadbd")],
      gcc: [join(bin, "gcc")],
      make: [join(bin, "make")],
      headers: [join(machine.postgresInclude, "17", "server", "postgres.h")],
      pgvector: ["15", "17"].flatMap((v) => [
        join(machine.postgresShare, v, "extension", "vector.control"),
        join(machine.postgresRoot, v, "lib", "vector.so"),
      ]),
    }[tool]!;
    for (const file of files) {
      mkdirSync(join(file, ".."), { recursive: true });
      writeFileSync(file, "#!/bin/sh\n");
      chmodSync(file, 0o755);
    }
  };
  for (const tool of [...tools, ...always, ...(pgvector ? ["pgvector"] : [])]) install(tool);
  return { machine, install };
}

test("everything there: nothing to do", () => {
  expect(planFor(machine(["dovecot", "postgresql", "chromium", "strace", "prometheus"]).machine)).toEqual({ kind: "ready" });
});

test("as root, exactly the missing packages are installed, after one apt-get update", () => {
  expect(planFor(machine(["dovecot", "chromium", "prometheus"]).machine)).toEqual({
    kind: "install",
    packages: ["postgresql", "strace"],
    commands: [
      ["apt-get", "update"],
      ["apt-get", "install", "-y", "-q", "postgresql", "strace"],
    ],
  });
  const fresh = planFor(machine([]).machine);
  expect(fresh.kind === "install" && fresh.commands[1]).toEqual([
    "apt-get",
    "install",
    "-y",
    "-q",
    "dovecot-imapd",
    "postgresql",
    "chromium",
    "strace",
    "prometheus",
  ]);
});

test("MariaDB's server missing (the SQL connector's MySQL test server): mariadb-server is installed", () => {
  const everything = ["dovecot", "postgresql", "chromium", "strace", "prometheus"];
  expect(planFor(machine(everything, 0, true, ["ledger", "bean-query", "systemd-analyze", "buildah"]).machine)).toEqual({
    kind: "install",
    packages: ["mariadb-server"],
    commands: [
      ["apt-get", "update"],
      ["apt-get", "install", "-y", "-q", "mariadb-server"],
    ],
  });
});

test("a file that cannot be run, or a PostgreSQL folder with no server in it, is missing", () => {
  const { machine: m } = machine(["dovecot", "chromium", "strace", "prometheus"]);
  mkdirSync(join(m.postgresRoot, "17", "bin"), { recursive: true });
  chmodSync(m.chromium, 0o644);
  const plan = planFor({ ...m, uid: 0 });
  // Root too: it may run a file only when some execute bit is set.
  expect(plan.kind === "install" && plan.packages).toEqual(["postgresql", "chromium"]);
});

test("as root, the runner installs what is missing, printing it, and goes on once it is there", () => {
  const { machine: m, install } = machine(["dovecot", "prometheus"]);
  const ran: string[][] = [];
  bringTestNeeds(m, (command) => {
    ran.push(command);
    // What apt-get would have put on the machine.
    if (command[1] === "install") for (const tool of ["postgresql", "chromium", "strace"]) install(tool);
    return 0;
  });
  expect(ran).toEqual([
    ["apt-get", "update"],
    ["apt-get", "install", "-y", "-q", "postgresql", "chromium", "strace"],
  ]);
  expect(planFor(m)).toEqual({ kind: "ready" });
});

test("as root, a failed apt-get or a package that brought nothing stops the run, naming it", () => {
  const { machine: m } = machine(["dovecot", "postgresql", "chromium", "prometheus"]);
  expect(() => bringTestNeeds(m, (command) => (command[1] === "update" ? 100 : 0))).toThrow(
    "`apt-get update` failed: the tests need strace",
  );
  expect(() => bringTestNeeds(m, () => 0)).toThrow("still missing after installing: strace (read-only test)");
});

test("not root: nothing is run; one line names what is missing and the command to run", () => {
  const { machine: m } = machine(["dovecot", "chromium", "prometheus"], 1000);
  let ran = 0;
  expect(() =>
    bringTestNeeds(m, () => {
      ran++;
      return 0;
    }),
  ).toThrow(
    "the integration tests need PostgreSQL (SQL test server), strace (read-only test): run `sudo npm test` once (it installs postgresql strace), or `sudo apt-get install -y -q postgresql strace`",
  );
  expect(ran).toBe(0);
  expect(planFor(machine(["dovecot", "postgresql", "chromium", "strace", "prometheus"], 1000).machine)).toEqual({ kind: "ready" });
});

test("pgvector missing: built from the vendored source, checked by its sha256 first, after installing only the build tools missing", () => {
  const { machine: m, install } = machine(["dovecot", "postgresql", "chromium", "strace", "prometheus", "make"], 0, false);
  const plan = planFor(m);
  const source = join(m.scratch, PGVECTOR.folder);
  const make = ["make", "-C", source, `PG_CONFIG=${join(m.postgresRoot, "17", "bin", "pg_config")}`];
  expect(plan).toEqual({
    kind: "install",
    packages: ["postgresql-server-dev-17", "gcc"],
    commands: [
      ["apt-get", "update"],
      ["apt-get", "install", "-y", "-q", "postgresql-server-dev-17", "gcc"],
      ["rm", "-rf", source],
      ["mkdir", "-p", m.scratch],
      ["tar", "xzf", join(m.vendor, PGVECTOR.tarball), "-C", m.scratch],
      [...make, "-j2"],
      [...make, "install"],
      ["rm", "-rf", source],
    ],
    verify: { file: join(m.vendor, PGVECTOR.tarball), sha256: PGVECTOR.sha256 },
  });
  // With the tools there, nothing is installed: the build alone.
  install("gcc");
  install("headers");
  const build = planFor(m);
  expect(build.kind === "install" && build.packages).toEqual([]);
  expect(build.kind === "install" && build.commands[0]).toEqual(["rm", "-rf", source]);
  // A tarball that is not the vendored one is never built: nothing runs.
  mkdirSync(m.vendor, { recursive: true });
  writeFileSync(join(m.vendor, PGVECTOR.tarball), "not pgvector");
  let ran = 0;
  expect(() =>
    bringTestNeeds(m, () => {
      ran++;
      return 0;
    }),
  ).toThrow(`expected ${PGVECTOR.sha256}: not built`);
  expect(ran).toBe(0);
  expect(hasPgvector(m)).toBe(false);
});

test("pgvector missing, not root: one line names it, and nothing is run", () => {
  const { machine: m } = machine(["dovecot", "postgresql", "chromium", "strace", "prometheus", "gcc", "make", "headers"], 1000, false);
  expect(planFor(m)).toEqual({
    kind: "refuse",
    message: `the integration tests need ${PGVECTOR.what}: run \`sudo npm test\` once (it installs pgvector from ${PGVECTOR.tarball})`,
  });
});
