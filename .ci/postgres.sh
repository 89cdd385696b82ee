#!/usr/bin/env bash
# .ci/postgres.sh — find or start a PostgreSQL server for Kassa's tests and `make run`, and print
# its URL on stdout. Every message goes to stderr, so `url="$(.ci/postgres.sh)"` just works.
#
# In order, it uses:
#   1. $KASSA_DATABASE_URL, when set and reachable;
#   2. the local server at 127.0.0.1:5432 (user postgres, trust auth), when it answers;
#   3. a private throwaway cluster started from the installed PostgreSQL binaries
#      (data in ./.pgdata or $KASSA_PGDATA, a free port, trust auth, socket in the data dir);
#   4. after `apt-get install postgresql`, that same private cluster.
#
# Environment:
#   KASSA_DATABASE_URL     use this server (step 1)
#   KASSA_FORCE_PRIVATE_PG set to 1 to skip steps 1 and 2
#   KASSA_PGDATA           data directory of the private cluster (default ./.pgdata)
#
# `.ci/postgres.sh stop` stops the private cluster (the data directory is kept; remove it to
# start from scratch).
#
# `.ci/postgres.sh database NAME` finds the server the same way, creates the database NAME on
# it when missing and prints that database's URL (`make run` uses `kassa`, so Kassa's tables
# and demo data never land in the server's default `postgres` database; tests keep creating
# throwaway databases of their own).
set -euo pipefail

log() { echo "postgres.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA="${KASSA_PGDATA:-$ROOT/.pgdata}"
LOCAL_URL="postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

# can_query URL: true when a trivial query succeeds without a password prompt.
can_query() {
	local url="$1"
	if command -v psql >/dev/null 2>&1; then
		PGCONNECT_TIMEOUT=3 psql "$url" -w -Atqc 'SELECT 1' >/dev/null 2>&1
	elif command -v pg_isready >/dev/null 2>&1; then
		pg_isready -q -t 3 -d "$url" >/dev/null 2>&1
	else
		return 1
	fi
}

pg_bindir() {
	local d
	d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
	if [[ -n "$d" && -x "$d/initdb" && -x "$d/pg_ctl" ]]; then
		echo "$d"
		return 0
	fi
	if command -v pg_config >/dev/null 2>&1; then
		d="$(pg_config --bindir)"
		if [[ -x "$d/initdb" && -x "$d/pg_ctl" ]]; then
			echo "$d"
			return 0
		fi
	fi
	if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
		dirname "$(command -v initdb)"
		return 0
	fi
	return 1
}

# The server refuses to run as root, so as root we run it as the postgres system user (or a
# `kassa` user we create). As anyone else we run it as ourselves.
RUN_AS=""
pick_user() {
	if [[ "$(id -u)" != 0 ]]; then
		RUN_AS=""
		return
	fi
	if id postgres >/dev/null 2>&1; then
		RUN_AS=postgres
	else
		if ! id kassa >/dev/null 2>&1; then
			log "creating system user 'kassa' to run the private PostgreSQL server (it refuses to run as root)"
			useradd --system --no-create-home --shell /usr/sbin/nologin kassa >&2 ||
				adduser --system --no-create-home kassa >&2
		fi
		RUN_AS=kassa
	fi
}

as_user() {
	if [[ -z "$RUN_AS" ]]; then
		"$@"
	elif command -v runuser >/dev/null 2>&1; then
		runuser -u "$RUN_AS" -- "$@"
	else
		su -s /bin/sh "$RUN_AS" -c "$(printf '%q ' "$@")"
	fi
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

free_port() {
	local p
	for p in $(seq 54329 54429); do
		if port_free "$p"; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

private_url() { echo "postgres://postgres@127.0.0.1:$1/postgres?sslmode=disable"; }

stop_private() {
	local bindir
	if [[ ! -f "$DATA/PG_VERSION" ]]; then
		log "no private cluster in $DATA"
		return 0
	fi
	bindir="$(pg_bindir)" || die "PostgreSQL binaries not found; cannot stop the cluster in $DATA"
	pick_user
	if as_user "$bindir/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
		log "stopping the private cluster in $DATA"
		as_user "$bindir/pg_ctl" -D "$DATA" -m fast -w stop >&2
	else
		log "the private cluster in $DATA is not running"
	fi
}

start_private() {
	local bindir port
	bindir="$(pg_bindir)" || return 1
	pick_user

	# Reuse a cluster this script started earlier.
	if [[ -f "$DATA/PG_VERSION" && -f "$DATA/kassa.port" ]] && as_user "$bindir/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
		port="$(cat "$DATA/kassa.port")"
		if can_query "$(private_url "$port")"; then
			log "using the private cluster already running in $DATA on port $port"
			private_url "$port"
			return 0
		fi
		log "the private cluster in $DATA runs but does not answer; restarting it"
		as_user "$bindir/pg_ctl" -D "$DATA" -m fast -w stop >&2 || true
	fi

	if [[ ! -f "$DATA/PG_VERSION" ]]; then
		mkdir -p "$DATA"
		[[ -n "$RUN_AS" ]] && chown "$RUN_AS" "$DATA"
		chmod 700 "$DATA"
		if ! as_user test -w "$DATA"; then
			# The server user cannot reach the checkout (e.g. under /root): use a tmp dir.
			rmdir "$DATA" 2>/dev/null || true
			DATA="$(mktemp -d "${TMPDIR:-/tmp}/kassa-pgdata.XXXXXX")"
			[[ -n "$RUN_AS" ]] && chown "$RUN_AS" "$DATA"
			log "user '$RUN_AS' cannot write the checkout; using $DATA instead"
		fi
		log "creating a private PostgreSQL cluster in $DATA with $bindir/initdb (trust auth, user postgres)"
		as_user "$bindir/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 --no-sync >"${TMPDIR:-/tmp}/kassa-initdb.$$.log" 2>&1 ||
			{ cat "${TMPDIR:-/tmp}/kassa-initdb.$$.log" >&2; rm -f "${TMPDIR:-/tmp}/kassa-initdb.$$.log"; die "initdb failed"; }
		rm -f "${TMPDIR:-/tmp}/kassa-initdb.$$.log"
	fi

	port="$(free_port)" || die "no free TCP port in 54329-54429"
	log "starting it on 127.0.0.1:$port (socket and log in $DATA; stop with: .ci/postgres.sh stop)"
	as_user "$bindir/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w -t 60 \
		-o "-p $port -k $DATA -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
		start >&2 || { tail -n 30 "$DATA/server.log" >&2 || true; die "the private cluster did not start"; }
	as_user sh -c "echo $port > '$DATA/kassa.port'"
	can_query "$(private_url "$port")" || die "the private cluster started but does not answer on port $port"
	private_url "$port"
}

install_postgres() {
	local sudo=""
	if [[ "$(id -u)" != 0 ]]; then
		command -v sudo >/dev/null 2>&1 || die "PostgreSQL is not installed and I am not root (no sudo) to install it"
		sudo="sudo"
	fi
	command -v apt-get >/dev/null 2>&1 || die "PostgreSQL is not installed and apt-get is unavailable; install PostgreSQL or set KASSA_DATABASE_URL"
	log "PostgreSQL is not installed; installing it with apt-get (this takes a minute)"
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
}

# database_url URL NAME: URL with its database replaced by NAME (postgres:// URLs only).
database_url() {
	local url="$1" name="$2" base query=""
	[[ "$url" == postgres://* || "$url" == postgresql://* ]] || return 1
	base="${url%%\?*}"
	[[ "$url" == *\?* ]] && query="?${url#*\?}"
	local scheme="${base%%://*}" rest="${base#*://}"
	echo "$scheme://${rest%%/*}/$name$query"
}

# own_database NAME: the URL of database NAME on the server main finds, created when missing.
own_database() {
	local name="$1" server url
	[[ "$name" =~ ^[a-z_][a-z0-9_]*$ ]] || die "database name '$name': use lowercase letters, digits and _"
	server="$(main)"
	url="$(database_url "$server" "$name")" || die "cannot derive a database URL from $server; set KASSA_DATABASE_URL to a postgres:// URL"
	command -v psql >/dev/null 2>&1 || die "psql is needed to create the database '$name'"
	if [[ -z "$(PGCONNECT_TIMEOUT=3 psql "$server" -w -Atqc "SELECT 1 FROM pg_database WHERE datname = '$name'")" ]]; then
		log "creating the database '$name'"
		PGCONNECT_TIMEOUT=3 psql "$server" -w -qc "CREATE DATABASE $name" >&2 || die "cannot create the database '$name'"
	fi
	log "using the database '$name' (${url%%\?*})"
	echo "$url"
}

main() {
	if [[ "${1:-}" == stop ]]; then
		stop_private
		return
	fi

	if [[ "${KASSA_FORCE_PRIVATE_PG:-}" != 1 ]]; then
		if [[ -n "${KASSA_DATABASE_URL:-}" ]]; then
			if can_query "$KASSA_DATABASE_URL"; then
				log "using \$KASSA_DATABASE_URL"
				echo "$KASSA_DATABASE_URL"
				return
			fi
			log "\$KASSA_DATABASE_URL is set but not reachable; looking for another server"
		fi
		if can_query "$LOCAL_URL"; then
			log "using the local server at 127.0.0.1:5432 (user postgres)"
			echo "$LOCAL_URL"
			return
		fi
		log "no server at 127.0.0.1:5432 accepting user postgres without a password"
	else
		log "KASSA_FORCE_PRIVATE_PG=1: skipping \$KASSA_DATABASE_URL and the local server"
	fi

	if pg_bindir >/dev/null; then
		start_private
		return
	fi
	install_postgres
	start_private || die "PostgreSQL was installed but its binaries were not found"
}

if [[ "${1:-}" == database ]]; then
	own_database "${2:?usage: .ci/postgres.sh database NAME}"
else
	main "$@"
fi
