#!/usr/bin/env bash
# A private MariaDB server for InterCode-SQL tests and benchmarks: loopback only, own datadir,
# port and socket, loaded once from the bundled dump. Idempotent.
#   scripts/mariadb.sh start|stop|status
# Settings (environment): STATEBOUND_MARIADB_DIR (default ${XDG_CACHE_HOME:-~/.cache}/statebound/mariadb),
# STATEBOUND_MYSQL_PORT (default 3407), STATEBOUND_MARIADB_WORKSPACES (default 8). Episodes run in
# workspaces: workspace K is a copy of the 20 Spider databases (`concert_singer__w3`...) that only
# the account statebound_wK may read and change (rows, not schema), so episodes running at once
# neither see nor lock each other (the backend leases one workspace per episode). The account
# statebound may read and change rows of the databases themselves (the untouched copy the gold
# query can run on). No account has a FILE or global privilege. Each start re-applies the accounts:
# only root (through the socket), statebound and the workspace accounts exist; the dump's own
# `admin` superuser is dropped.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dump="$here/src/statebound/data/intercode/sql/ic_spider_dbs.sql"
base="${STATEBOUND_MARIADB_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/statebound/mariadb}"
port="${STATEBOUND_MYSQL_PORT:-3407}"
datadir="$base/data"
socket="$base/mysqld.sock"
pidfile="$base/mysqld.pid"
log="$base/mysqld.log"
files="$base/files"  # secure_file_priv: the only directory FILE statements could use (kept empty)
workspaces="${STATEBOUND_MARIADB_WORKSPACES:-8}"

find_bin() { for name in "$@"; do command -v "$name" 2>/dev/null && return 0; [ -x "/usr/sbin/$name" ] && { echo "/usr/sbin/$name"; return 0; }; done; return 1; }
server="$(find_bin mariadbd mysqld)" || { echo "mariadb-server is not installed (apt-get install mariadb-server)" >&2; exit 1; }
installer="$(find_bin mariadb-install-db mysql_install_db)" || { echo "mariadb-install-db not found" >&2; exit 1; }
client="$(find_bin mariadb mysql)" || { echo "the mariadb client is not installed" >&2; exit 1; }

sql() { "$client" --no-defaults --socket="$socket" -uroot "$@"; }
running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }
user_args=()
[ "$(id -u)" = 0 ] && user_args=(--user="$(id -un)")

start() {
  mkdir -p "$base" "$files"
  if running; then
    echo "mariadb already running (pid $(cat "$pidfile"), port $port)"
  else
    launch
  fi
  digest="$(sha256sum "$dump" | cut -c1-16)"
  if [ ! -f "$base/loaded" ] || [ "$(cat "$base/loaded")" != "$digest" ]; then
    sql < "$dump"
    echo "$digest" > "$base/loaded"
    rm -f "$base/workspaces"
  fi
  made="$(cat "$base/workspaces" 2>/dev/null || echo 0)"
  if [ "$made" -lt "$workspaces" ]; then
    echo "mariadb: making episode workspaces $((made + 1)) to $workspaces (once, side by side)"
    pids=()
    for k in $(seq $((made + 1)) "$workspaces"); do workspace "$k" & pids+=($!); done
    for pid in "${pids[@]}"; do wait "$pid" || { echo "mariadb: making a workspace failed; see $log" >&2; exit 1; }; done
    echo "$workspaces" > "$base/workspaces"
  fi
  accounts
  echo "mariadb running (pid $(cat "$pidfile"), 127.0.0.1:$port, socket $socket, $workspaces workspaces)"
}

launch() {
  if [ ! -d "$datadir/mysql" ]; then
    "$installer" --no-defaults --datadir="$datadir" --auth-root-authentication-method=normal \
      "${user_args[@]}" --skip-test-db >"$base/install.log" 2>&1 \
      || { echo "mariadb-install-db failed; see $base/install.log" >&2; exit 1; }
  fi
  "$server" --no-defaults --datadir="$datadir" --socket="$socket" --pid-file="$pidfile" \
    --port="$port" --bind-address=127.0.0.1 --lower-case-table-names=1 --log-error="$log" \
    --skip-name-resolve --innodb-buffer-pool-size=64M --max-connections=200 \
    --local-infile=0 --secure-file-priv="$files" "${user_args[@]}" >/dev/null 2>&1 &
  for _ in $(seq 1 60); do
    sql -e "SELECT 1" >/dev/null 2>&1 && break
    sleep 0.5
  done
  sql -e "SELECT 1" >/dev/null 2>&1 || { echo "mariadb did not start; see $log" >&2; exit 1; }
}

# Workspace K: the dump loaded again with each database renamed NAME__wK (the dump names no
# database inside its statements); its accounts line is not run again.
workspace() {
  {
    for db in $(databases); do echo "DROP DATABASE IF EXISTS \`${db}__w$1\`;"; done
    sed -e '/^CREATE USER/d; /^GRANT/d; /^FLUSH PRIVILEGES/d' \
        -e "s/^\(CREATE DATABASE \+IF NOT EXISTS \`[^\`]*\)\`/\1__w$1\`/; s/^USE \`\([^\`]*\)\`/USE \`\1__w$1\`/" "$dump"
  } | sql
}

databases() { grep -o 'USE `[^`]*`' "$dump" | sed 's/USE `\(.*\)`/\1/'; }

# Only root@localhost (socket), statebound and statebound_w1..N may log in: statebound may read and
# change rows of the Spider databases, statebound_wK those of workspace K only. Passwords are set
# again: MariaDB lets any user change its own (SET PASSWORD).
accounts() {
  dbs="$(databases)"
  names="'statebound', 'mariadb.sys'"
  for k in $(seq 1 "$workspaces"); do names="$names, 'statebound_w$k'"; done
  others="$(sql -N -e "SELECT CONCAT(QUOTE(user), '@', QUOTE(host)) FROM mysql.user
    WHERE NOT ((user = 'root' AND host = 'localhost') OR user IN ($names))")"
  {
    for account in $others; do echo "DROP USER $account;"; done
    for k in "" $(seq 1 "$workspaces"); do
      user="statebound${k:+_w$k}"
      echo "CREATE USER IF NOT EXISTS '$user'@'%' IDENTIFIED BY 'statebound';"
      echo "ALTER USER '$user'@'%' IDENTIFIED BY 'statebound';"
      echo "REVOKE ALL PRIVILEGES, GRANT OPTION FROM '$user'@'%';"
      for db in $dbs; do  # _ is a wildcard in a grant's database name: escaped
        echo "GRANT SELECT, INSERT, UPDATE, DELETE, SHOW VIEW ON \`${db//_/\\_}${k:+\\_\\_w$k}\`.* TO '$user'@'%';"
      done
    done
    echo "FLUSH PRIVILEGES;"
  } | sql
}

stop() {
  if ! running; then echo "mariadb not running"; return 0; fi
  pid="$(cat "$pidfile")"
  kill "$pid"
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  echo "mariadb stopped"
}

status() {
  if running; then echo "mariadb running (pid $(cat "$pidfile"), 127.0.0.1:$port)"; else echo "mariadb not running"; exit 3; fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
