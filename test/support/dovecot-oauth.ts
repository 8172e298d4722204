// A Dovecot of the test's own that takes no password (issue 38): its oauth2 passdb asks a token
// issuer on loopback (oauth-issuer.ts) to introspect the access token each login brings (SASL
// OAUTHBEARER or XOAUTH2), and the token's user must be the login's. Its Maildir holds the
// Enron messages of ../shared/data (as scripts/test-servers.sh's does), so the same questions
// find the same mails. Stopped by PID.
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SHARED_DATA } from "./servers";
import { freePort } from "./tcp";

export interface OAuthDovecot {
  port: number;
  /** Dovecot's log: which SASL mechanism each login used. */
  log(): string;
  stop(): void;
}

export async function startOAuthDovecot(options: {
  introspectionUrl: string;
  /** The SASL mechanisms offered: "oauthbearer xoauth2" or one of them. */
  mechanisms: string;
  /** How many of the Enron messages the mailbox holds (all of them unless fewer are asked). */
  messages?: number;
}): Promise<OAuthDovecot> {
  // Under /tmp, readable by Dovecot's own users (a test run's TMPDIR may be root's alone).
  const dir = mkdtempSync("/tmp/corpus-dovecot-oauth-");
  chmodSync(dir, 0o755);
  const maildir = join(dir, "mail/Maildir");
  for (const sub of ["cur", "new", "tmp"]) mkdirSync(join(maildir, sub), { recursive: true });
  mkdirSync(join(dir, "run"));
  mkdirSync(join(dir, "state"));
  const source = join(SHARED_DATA, "enron/messages");
  const files = readdirSync(source)
    .filter((f) => f.endsWith(".eml"))
    .sort()
    .slice(0, options.messages ?? Number.POSITIVE_INFINITY);
  for (const f of files) copyFileSync(join(source, f), join(maildir, "cur", `${f.slice(0, -4)}.corpus:2,`));
  Bun.spawnSync(["chown", "-R", "dovecot:dovecot", join(dir, "mail")]);
  const port = freePort();
  writeFileSync(
    join(dir, "oauth2.conf.ext"),
    `introspection_mode = post
introspection_url = ${options.introspectionUrl}
username_attribute = username
active_attribute = active
active_value = true
force_introspection = yes
`,
  );
  writeFileSync(
    join(dir, "dovecot.conf"),
    `protocols = imap
listen = 127.0.0.1
base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
ssl = no
disable_plaintext_auth = no
auth_mechanisms = ${options.mechanisms}
auth_failure_delay = 0
mail_location = maildir:${maildir}
mail_uid = dovecot
mail_gid = dovecot
first_valid_uid = 1
default_login_user = dovenull
default_internal_user = dovecot
passdb {
  driver = oauth2
  mechanisms = ${options.mechanisms}
  args = ${dir}/oauth2.conf.ext
}
userdb {
  driver = static
  args = uid=dovecot gid=dovecot home=${dir}/mail
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  unix_listener anvil-auth-penalty {
    mode = 0
  }
}
service stats {
  unix_listener stats-reader {
    mode = 0666
  }
  unix_listener stats-writer {
    mode = 0666
  }
}
`,
  );
  // The daemon keeps no handle on our output: waiting for it to close would wait forever.
  const run = Bun.spawnSync(["dovecot", "-c", join(dir, "dovecot.conf")], { stdio: ["ignore", "ignore", "ignore"] });
  if (run.exitCode !== 0) throw new Error(`dovecot did not start (exit ${run.exitCode}); see ${join(dir, "dovecot.log")}`);
  // The master writes its PID and opens its listener a moment after the command returns.
  const pidFile = join(dir, "run/master.pid");
  for (let i = 0; i < 250 && !existsSync(pidFile); i++) await Bun.sleep(20);
  if (!existsSync(pidFile)) throw new Error(`dovecot did not start; see ${join(dir, "dovecot.log")}`);
  const pid = Number(readFileSync(pidFile, "utf8"));
  for (let i = 0; i < 250; i++) {
    const open = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } }).then(
      (s) => (s.end(), true),
      () => false,
    );
    if (open) break;
    await Bun.sleep(20);
  }
  return {
    port,
    log: () => readFileSync(join(dir, "dovecot.log"), "utf8"),
    stop() {
      try {
        process.kill(pid, "SIGTERM");
      } catch {}
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
