#!/usr/bin/env bash
# Real servers for the connector tests, on loopback only: Dovecot (IMAP) with a mailbox made
# from shared/data/enron, PostgreSQL and MariaDB loaded with shared/data/chinook.
#   scripts/test-servers.sh start   start (Dovecot, PostgreSQL and MariaDB must be installed: `npm test` as root installs them), print the env file
#   scripts/test-servers.sh stop    stop them by PID
# State lives in $CORPUS_TEST_STATE (default /tmp/corpus-test-servers); the env file there
# tells the tests where the servers are. Ports: $CORPUS_TEST_IMAP_PORT, $CORPUS_TEST_PG_PORT and
# $CORPUS_TEST_MYSQL_PORT, else ports the OS gives.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
data=${CORPUS_TEST_DATA:-$here/../shared/data}
state=${CORPUS_TEST_STATE:-/tmp/corpus-test-servers}
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
# Debian's MariaDB server is in the administrator's folder, on root's PATH only.
export PATH="$PATH:/usr/sbin:/sbin"
bun=${CORPUS_TEST_BUN:-$(command -v bun || echo "$here/node_modules/.bin/bun")}

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
dovecot_pid() { cat "$state/dovecot/run/master.pid" 2>/dev/null || true; }
pg_pid() { head -n 1 "$state/pg/data/postmaster.pid" 2>/dev/null || true; }
mariadb_pid() { cat "$state/mariadb/run/mariadbd.pid" 2>/dev/null || true; }

# A port the OS gives out on loopback (as scripts/test.ts asks with test/support/tcp.ts freePort),
# never a fixed one another process may hold.
free_port() {
  node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}
# The ports: those asked for; else those of the servers of $state already running; else the OS's.
imap_port=${CORPUS_TEST_IMAP_PORT:-}
pg_port=${CORPUS_TEST_PG_PORT:-}
mysql_port=${CORPUS_TEST_MYSQL_PORT:-}
if [ -z "$imap_port" ] && alive "$(dovecot_pid)"; then
  imap_port=$(sed -n 's/^ *port = \([1-9][0-9]*\)$/\1/p' "$state/dovecot/dovecot.conf" | head -n 1)
fi
if [ -z "$pg_port" ] && alive "$(pg_pid)"; then
  pg_port=$(sed -n 4p "$state/pg/data/postmaster.pid")
fi
if [ -z "$mysql_port" ] && alive "$(mariadb_pid)"; then
  mysql_port=$(cat "$state/mariadb/port")
fi

# Installing is the test runner's job (scripts/test-needs.ts, `npm test` as root), not a test's.
installed() {
  if ! command -v dovecot >/dev/null || [ -z "$pgbin" ] || ! command -v mariadbd >/dev/null; then
    echo "test-servers: Dovecot, PostgreSQL and MariaDB are needed: sudo npm test installs them (apt-get install dovecot-imapd postgresql mariadb-server)" >&2
    exit 1
  fi
}

start_dovecot() {
  alive "$(dovecot_pid)" && return
  rm -rf "$state/dovecot" "$state/mail"
  mkdir -p "$state/dovecot/run" "$state/dovecot/state" "$state/mail/Maildir/cur" "$state/mail/Maildir/new" "$state/mail/Maildir/tmp"
  # One message file per Enron message; the Maildir name keeps the source id.
  for f in "$data"/enron/messages/*.eml; do
    cp "$f" "$state/mail/Maildir/cur/$(basename "$f" .eml).corpus:2,"
  done
  echo "enron:{PLAIN}enron-imap-pass" > "$state/dovecot/users"
  chown -R dovecot:dovecot "$state/mail"
  chmod 0644 "$state/dovecot/users"
  cat > "$state/dovecot/dovecot.conf" <<CONF
protocols = imap
listen = 127.0.0.1
base_dir = $state/dovecot/run
state_dir = $state/dovecot/state
log_path = $state/dovecot/dovecot.log
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
# Failed logins answered at once (Dovecot waits 2 s by default): the tests of a wrong password
# need the failure, not the wait.
auth_failure_delay = 0
mail_location = maildir:$state/mail/Maildir
mail_uid = dovecot
mail_gid = dovecot
first_valid_uid = 1
default_login_user = dovenull
default_internal_user = dovecot
passdb {
  driver = passwd-file
  args = scheme=PLAIN $state/dovecot/users
}
userdb {
  driver = static
  args = uid=dovecot gid=dovecot home=$state/mail
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = $imap_port
  }
  inet_listener imaps {
    port = 0
  }
}
# Nor are later logins from the same address held back: Dovecot's auth asks anvil for the
# address's penalty (2, 4, 8 … s after repeated failures); a listener it cannot open disables that.
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
CONF
  # The daemons keep no handle on our output: a caller waiting for it to close would wait forever.
  dovecot -c "$state/dovecot/dovecot.conf" </dev/null >/dev/null 2>&1
}

start_postgres() {
  alive "$(pg_pid)" && return
  rm -rf "$state/pg"
  mkdir -p "$state/pg/data" "$state/pg/sock"
  echo "postgres-admin-pass" > "$state/pg/pwfile"
  chown -R postgres:postgres "$state/pg"
  chmod 0700 "$state/pg/data"
  su postgres -s /bin/sh -c "$pgbin/initdb -D $state/pg/data -U postgres --auth=scram-sha-256 --pwfile=$state/pg/pwfile -E UTF8 >$state/pg/initdb.log 2>&1"
  su postgres -s /bin/sh -c "$pgbin/pg_ctl -D $state/pg/data -l $state/pg/postgres.log -w -o '-p $pg_port -k $state/pg/sock -c listen_addresses=127.0.0.1' start </dev/null >/dev/null 2>&1"
  export PGPASSWORD=postgres-admin-pass PGOPTIONS='-c client_min_messages=warning'
  psql -q -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -v ON_ERROR_STOP=1 -f "$data/chinook/Chinook_PostgreSql.sql" >/dev/null
  psql -q -h 127.0.0.1 -p "$pg_port" -U postgres -d chinook -v ON_ERROR_STOP=1 >/dev/null <<SQL
CREATE ROLE shop LOGIN PASSWORD 'shop-pass';
ALTER DATABASE chinook OWNER TO shop;
GRANT ALL ON ALL TABLES IN SCHEMA public TO shop;
SQL
}

# Its own instance: its own datadir, socket and PID file, a loopback port, a self-signed
# certificate (TLS offered, not required), a time zone that is not UTC (as many servers'), root
# only through the socket; the connector's user
# "shop" may only SELECT, "admin" builds the tests' own tables.
start_mariadb() {
  alive "$(mariadb_pid)" && return
  local dir="$state/mariadb"
  rm -rf "$dir"
  # Its temporary files too: the run's TMPDIR (scripts/test.ts) is root's, closed to the mysql user.
  mkdir -p "$dir/data" "$dir/run" "$dir/tmp"
  echo "$mysql_port" > "$dir/port"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=corpus-test-mariadb \
    -keyout "$dir/key.pem" -out "$dir/cert.pem" >"$dir/openssl.log" 2>&1
  chown -R mysql:mysql "$dir"
  TMPDIR="$dir/tmp" mariadb-install-db --no-defaults --user=mysql --datadir="$dir/data" --auth-root-authentication-method=socket \
    --skip-test-db >"$dir/install.log" 2>&1
  # In a session of its own: the Ctrl-C that stops the tests does not stop it first.
  TMPDIR="$dir/tmp" setsid mariadbd --no-defaults --user=mysql --datadir="$dir/data" --tmpdir="$dir/tmp" --socket="$dir/run/mariadbd.sock" \
    --pid-file="$dir/run/mariadbd.pid" --port="$mysql_port" --bind-address=127.0.0.1 --skip-name-resolve \
    --log-error="$dir/mariadbd.log" --innodb-buffer-pool-size=32M --ssl-cert="$dir/cert.pem" --ssl-key="$dir/key.pem" \
    --default-time-zone=+05:00 \
    </dev/null >/dev/null 2>&1 &
  local root=(mariadb --no-defaults --socket="$dir/run/mariadbd.sock" -uroot)
  for _ in $(seq 1 600); do
    "${root[@]}" -e "SELECT 1" >/dev/null 2>&1 && break
    sleep 0.1
  done
  if ! "${root[@]}" -e "SELECT 1" >/dev/null 2>&1; then
    echo "test-servers: MariaDB did not start; see $dir/install.log and $dir/mariadbd.log" >&2
    exit 1
  fi
  "${root[@]}" >/dev/null <<SQL
CREATE DATABASE chinook CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE USER 'shop'@'127.0.0.1' IDENTIFIED BY 'shop-pass';
GRANT SELECT ON chinook.* TO 'shop'@'127.0.0.1';
CREATE USER 'admin'@'127.0.0.1' IDENTIFIED BY 'mariadb-admin-pass';
GRANT ALL ON chinook.* TO 'admin'@'127.0.0.1';
SQL
  "$bun" "$here/test/support/chinook-mysql.ts" "$data/chinook/Chinook_Sqlite.sqlite" | "${root[@]}" chinook
}

write_env() {
  cat > "$state/env" <<ENV
CORPUS_TEST_IMAP_HOST=127.0.0.1
CORPUS_TEST_IMAP_PORT=$imap_port
CORPUS_TEST_IMAP_USER=enron
CORPUS_TEST_IMAP_PASSWORD=enron-imap-pass
CORPUS_TEST_IMAP_MAILDIR=$state/mail/Maildir
CORPUS_TEST_PG_URL=postgres://shop:shop-pass@127.0.0.1:$pg_port/chinook
CORPUS_TEST_PG_ADMIN_URL=postgres://postgres:postgres-admin-pass@127.0.0.1:$pg_port/chinook
CORPUS_TEST_MYSQL_URL=mysql://shop:shop-pass@127.0.0.1:$mysql_port/chinook
CORPUS_TEST_MYSQL_ADMIN_URL=mysql://admin:mariadb-admin-pass@127.0.0.1:$mysql_port/chinook
CORPUS_TEST_MYSQL_SOCKET=$state/mariadb/run/mariadbd.sock
CORPUS_TEST_DOVECOT_PID=$(dovecot_pid)
CORPUS_TEST_PG_PID=$(pg_pid)
CORPUS_TEST_MARIADB_PID=$(mariadb_pid)
ENV
  cat "$state/env"
}

stop() {
  for pid in "$(dovecot_pid)" "$(pg_pid)" "$(mariadb_pid)"; do
    if alive "$pid"; then kill -TERM "$pid"; fi
  done
  for _ in $(seq 1 50); do
    alive "$(dovecot_pid)" || alive "$(pg_pid)" || alive "$(mariadb_pid)" || break
    sleep 0.1
  done
  rm -f "$state/env"
}

case "${1:-}" in
  start)
    mkdir -p "$state"
    installed
    [ -n "$imap_port" ] || imap_port=$(free_port)
    [ -n "$pg_port" ] || pg_port=$(free_port)
    [ -n "$mysql_port" ] || mysql_port=$(free_port)
    start_dovecot
    start_postgres
    start_mariadb
    write_env
    ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
