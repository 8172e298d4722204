// What the integration tests need of the machine, and bringing it (issue 35 item 11): Dovecot,
// PostgreSQL and MariaDB for the connector tests' servers (scripts/test-servers.sh), Chromium for the widget
// test, strace for the read-only test of the local connectors, Prometheus for the metrics scrape test,
// Ledger and beancount as the books sums' oracle (D34), systemd-analyze for the release's unit. The test runner (scripts/test.ts)
// checks once before the tests; as root it installs the missing Debian packages, printing what
// it installs; as another user it stops at once with the one command to run. A test itself never
// installs anything; the unit suite needs none of it.
import { accessSync, constants, readdirSync } from "node:fs";
import { join } from "node:path";
import { CHROMIUM } from "../test/support/chromium";

/** Where the machine is looked at: injectable, so that the decision is tested on a made-up machine without removing packages. */
export interface Machine {
  /** The PATH searched for commands. */
  path: string;
  /** Debian's PostgreSQL folder: a version's bin folder under it is the server. */
  postgresRoot: string;
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

/** A PostgreSQL server's bin folder, the newest version's, as scripts/test-servers.sh picks it. */
const hasPostgres = (m: Machine) => {
  try {
    return readdirSync(m.postgresRoot).some((version) => runnable(join(m.postgresRoot, version, "bin", "initdb")));
  } catch {
    return false;
  }
};

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
];

export type Plan = { kind: "ready" } | { kind: "install"; packages: string[]; commands: string[][] } | { kind: "refuse"; message: string };

/** What to do about the machine: nothing, which apt-get commands to run (root), or the one line that says what to run (not root). */
export function planFor(machine: Machine): Plan {
  const missing = NEEDS.filter((n) => !n.present(machine));
  if (!missing.length) return { kind: "ready" };
  const packages = missing.map((n) => n.debian);
  const install = ["apt-get", "install", "-y", "-q", ...packages];
  if (machine.uid !== 0)
    return {
      kind: "refuse",
      message: `the integration tests need ${missing.map((n) => n.what).join(", ")}: run \`sudo npm test\` once (it installs ${packages.join(" ")}), or \`sudo ${install.join(" ")}\``,
    };
  return { kind: "install", packages, commands: [["apt-get", "update"], install] };
}

export const thisMachine = (): Machine => ({
  // Debian's daemons (dovecot) are in the administrator's folders, on root's PATH only.
  path: `${process.env.PATH ?? ""}:/usr/sbin:/sbin`,
  postgresRoot: "/usr/lib/postgresql",
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
  console.error(`installing what the integration tests need (Debian packages): ${plan.packages.join(" ")}`);
  for (const command of plan.commands)
    if (run(command) !== 0) throw new Error(`\`${command.join(" ")}\` failed: the tests need ${plan.packages.join(" ")}`);
  const still = NEEDS.filter((n) => !n.present(machine));
  if (still.length) throw new Error(`still missing after installing: ${still.map((n) => n.what).join(", ")}`);
}
