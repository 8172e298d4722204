// What the integration tests need of the machine, and bringing it: Dovecot,
// PostgreSQL and MariaDB for the connector tests' servers (scripts/test-servers.sh), Chromium for the widget
// test, strace for the read-only test of the local connectors, Prometheus for the metrics scrape test,
// Ledger and beancount as the books sums' oracle (D34), systemd-analyze for the release's unit, and
// pgvector for the vector store tests, built from ../shared/vendor (Debian 12 has no package of it).
// The test runner (scripts/test.ts)
// checks once before the tests; as root it installs the missing Debian packages, printing what
// it installs; as another user it stops at once with the one command to run. A test itself never
// installs anything; the unit suite needs none of it.
import { createHash } from "node:crypto";
import { accessSync, constants, existsSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CHROMIUM } from "../test/support/chromium";

/** Where the machine is looked at: injectable, so that the decision is tested on a made-up machine without removing packages. */
export interface Machine {
  /** The PATH searched for commands. */
  path: string;
  /** Debian's PostgreSQL folder: a version's bin folder under it is the server, its lib folder the extensions' libraries. */
  postgresRoot: string;
  /** Debian's PostgreSQL share folder: a version's extension folder under it holds the extensions' control files. */
  postgresShare: string;
  /** Debian's PostgreSQL headers: a version's server folder under it is what an extension is built against. */
  postgresInclude: string;
  /** Where the vendored sources are (../shared/vendor). */
  vendor: string;
  /** Where a source is unpacked and built. */
  scratch: string;
  /** The Chromium the widget test launches. */
  chromium: string;
  /** The effective user id (0: root). */
  uid: number;
}

const runnable = (file: string) => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

interface Need {
  /** What the tests use it for, as printed. */
  what: string;
  /** The Debian package that brings it. */
  debian: string;
  present(machine: Machine): boolean;
}

const onPath = (command: string) => (m: Machine) => !!Bun.which(command, { PATH: m.path });

/** The PostgreSQL versions with a server (a bin folder holding initdb), newest last, as scripts/test-servers.sh picks the last. */
const postgresVersions = (m: Machine) => {
  try {
    return readdirSync(m.postgresRoot)
      .filter((version) => runnable(join(m.postgresRoot, version, "bin", "initdb")))
      .sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
  } catch {
    return [];
  }
};
const hasPostgres = (m: Machine) => postgresVersions(m).length > 0;

export const NEEDS: readonly Need[] = [
  { what: "Dovecot (IMAP test server)", debian: "dovecot-imapd", present: onPath("dovecot") },
  { what: "PostgreSQL (SQL test server)", debian: "postgresql", present: hasPostgres },
  { what: "MariaDB (SQL test server)", debian: "mariadb-server", present: onPath("mariadbd") },
  { what: "Chromium (widget test)", debian: "chromium", present: (m) => runnable(m.chromium) },
  { what: "strace (read-only test)", debian: "strace", present: onPath("strace") },
  { what: "Prometheus (metrics scrape test)", debian: "prometheus", present: onPath("prometheus") },
  { what: "Ledger (books sums test)", debian: "ledger", present: onPath("ledger") },
  { what: "beancount's bean-query (books sums test)", debian: "beancount", present: onPath("bean-query") },
  { what: "systemd-analyze (release test: the unit verified)", debian: "systemd", present: onPath("systemd-analyze") },
  { what: "buildah (OCI image test: built offline, FROM scratch)", debian: "buildah", present: onPath("buildah") },
];

/**
 * pgvector for the vector store tests (src/vectors/): its vendored source, checked by its sha256
 * before it is built (../shared/vendor/README.md), and the Debian packages that build it.
 */
export const PGVECTOR = {
  what: "pgvector (vector store tests)",
  tarball: "pgvector-0.8.6.tar.gz",
  folder: "pgvector-0.8.6",
  sha256: "5743dac39fdfa740533cf95e71b033bd5513b71dda194b3cf19464ccbf76f3fb",
} as const;

/** The PostgreSQL version pgvector is built for: the server's (the newest, as the tests use), else Debian 12's, which `postgresql` brings. */
const pgvectorVersion = (m: Machine) => postgresVersions(m).at(-1) ?? "15";

/** The `vector` extension installed for that server: its control file and its library. */
export const hasPgvector = (m: Machine) => {
  const version = pgvectorVersion(m);
  return (
    existsSync(join(m.postgresShare, version, "extension", "vector.control")) &&
    existsSync(join(m.postgresRoot, version, "lib", "vector.so"))
  );
};

/** The Debian packages pgvector is built with, those missing: the server's headers (pg_config alone comes with the client), a C compiler, make. */
function pgvectorBuildPackages(m: Machine): string[] {
  const version = pgvectorVersion(m);
  return [
    ...(existsSync(join(m.postgresInclude, version, "server", "postgres.h")) ? [] : [`postgresql-server-dev-${version}`]),
    ...(onPath("gcc")(m) ? [] : ["gcc"]),
    ...(onPath("make")(m) ? [] : ["make"]),
  ];
}

/** Unpacks and builds pgvector for that server and installs it into the server's folders (~30 s on two cores). */
function pgvectorBuild(m: Machine): string[][] {
  const source = join(m.scratch, PGVECTOR.folder);
  const make = ["make", "-C", source, `PG_CONFIG=${join(m.postgresRoot, pgvectorVersion(m), "bin", "pg_config")}`];
  return [
    ["rm", "-rf", source],
    ["mkdir", "-p", m.scratch],
    ["tar", "xzf", join(m.vendor, PGVECTOR.tarball), "-C", m.scratch],
    [...make, "-j2"],
    [...make, "install"],
    ["rm", "-rf", source],
  ];
}

export type Plan =
  | { kind: "ready" }
  | {
      kind: "install";
      packages: string[];
      commands: string[][];
      /** A vendored source the commands build, checked by its sha256 before any command runs. */
      verify?: { file: string; sha256: string };
    }
  | { kind: "refuse"; message: string };

/** What to do about the machine: nothing, which apt-get and build commands to run (root), or the one line that says what to run (not root). */
export function planFor(machine: Machine): Plan {
  const missing = NEEDS.filter((n) => !n.present(machine));
  const pgvector = !hasPgvector(machine);
  if (!missing.length && !pgvector) return { kind: "ready" };
  const packages = [...missing.map((n) => n.debian), ...(pgvector ? pgvectorBuildPackages(machine) : [])];
  const install = ["apt-get", "install", "-y", "-q", ...packages];
  const what = [...missing.map((n) => n.what), ...(pgvector ? [PGVECTOR.what] : [])].join(", ");
  if (machine.uid !== 0)
    return {
      kind: "refuse",
      message: `the integration tests need ${what}: run \`sudo npm test\` once (it installs ${[...packages, ...(pgvector ? [`pgvector from ${PGVECTOR.tarball}`] : [])].join(" ")})${packages.length ? `, or \`sudo ${install.join(" ")}\`` : ""}`,
    };
  const apt = packages.length ? [["apt-get", "update"], install] : [];
  if (!pgvector) return { kind: "install", packages, commands: apt };
  return {
    kind: "install",
    packages,
    commands: [...apt, ...pgvectorBuild(machine)],
    verify: { file: join(machine.vendor, PGVECTOR.tarball), sha256: PGVECTOR.sha256 },
  };
}

export const thisMachine = (): Machine => ({
  // Debian's daemons (dovecot) are in the administrator's folders, on root's PATH only.
  path: `${process.env.PATH ?? ""}:/usr/sbin:/sbin`,
  postgresRoot: "/usr/lib/postgresql",
  postgresShare: "/usr/share/postgresql",
  postgresInclude: "/usr/include/postgresql",
  vendor: join(import.meta.dir, "../../shared/vendor"),
  scratch: join(tmpdir(), "corpus-pgvector-build"),
  chromium: CHROMIUM,
  uid: process.getuid?.() ?? -1,
});

/**
 * Brings what the tests need onto `machine`, printing what it installs, or throws with the
 * command to run; `run` runs one command (its output shown), its exit status returned.
 */
export function bringTestNeeds(
  machine: Machine = thisMachine(),
  run: (command: string[]) => number = (command) =>
    Bun.spawnSync(command, { stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } })
      .exitCode,
): void {
  const plan = planFor(machine);
  if (plan.kind === "ready") return;
  if (plan.kind === "refuse") throw new Error(plan.message);
  if (plan.verify) {
    const digest = existsSync(plan.verify.file) ? createHash("sha256").update(readFileSync(plan.verify.file)).digest("hex") : "no file";
    if (digest !== plan.verify.sha256) throw new Error(`${plan.verify.file}: sha256 ${digest}, expected ${plan.verify.sha256}: not built`);
  }
  if (plan.packages.length) console.error(`installing what the integration tests need (Debian packages): ${plan.packages.join(" ")}`);
  if (plan.verify) console.error(`building ${PGVECTOR.what} from ${plan.verify.file}`);
  for (const command of plan.commands)
    if (run(command) !== 0)
      throw new Error(
        `\`${command.join(" ")}\` failed: the tests need ${[...plan.packages, ...(plan.verify ? [PGVECTOR.what] : [])].join(", ")}`,
      );
  const still = [...NEEDS.filter((n) => !n.present(machine)), ...(hasPgvector(machine) ? [] : [PGVECTOR])];
  if (still.length) throw new Error(`still missing after installing: ${still.map((n) => n.what).join(", ")}`);
}
