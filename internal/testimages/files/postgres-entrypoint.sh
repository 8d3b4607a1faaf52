#!/bin/bash
# docker-entrypoint.sh of the test image onto/postgres, written for kubectl-onto's tests.
# It implements the documented contract of the official postgres image's entrypoint that
# the rendered StatefulSet relies on (manifests/base/postgres):
#   - POSTGRES_PASSWORD (required unless POSTGRES_HOST_AUTH_METHOD=trust), POSTGRES_USER
#     (postgres), POSTGRES_DB (POSTGRES_USER), POSTGRES_INITDB_ARGS,
#     POSTGRES_INITDB_WALDIR, POSTGRES_HOST_AUTH_METHOD, PGDATA, and VAR_FILE for each;
#   - on an empty PGDATA: initdb, a pg_hba.conf line for every host, a temporary server
#     on the local socket only, the database, then /docker-entrypoint-initdb.d/* in
#     order: *.sh executed when executable, else sourced; *.sql and *.sql.gz run by psql;
#   - sourced (not executed), it only defines the functions the pod's wrapper and the
#     init scripts call: docker_setup_env, docker_temp_server_start,
#     docker_temp_server_stop, docker_process_init_files, docker_process_sql.
# Unlike the official image it never runs as root (no step down to the postgres user:
# the pods run as 999 already), initialises with --locale=C --encoding=UTF8 (the image
# has no locale data), and has busybox's tools instead of Debian's coreutils.
set -Eeo pipefail

# file_env VAR [DEFAULT] sets VAR from $VAR, else from the file ${VAR}_FILE names.
file_env() {
	local var="$1" def="${2:-}" fvar="${1}_FILE" val
	if [ -n "${!var:-}" ] && [ -n "${!fvar:-}" ]; then
		echo "error: both $var and $fvar are set; set one" >&2
		exit 1
	fi
	val="$def"
	if [ -n "${!var:-}" ]; then
		val="${!var}"
	elif [ -n "${!fvar:-}" ]; then
		val="$(cat "${!fvar}")"
	fi
	export "$var"="$val"
	unset "$fvar"
}

docker_setup_env() {
	file_env POSTGRES_PASSWORD
	file_env POSTGRES_USER postgres
	file_env POSTGRES_DB "$POSTGRES_USER"
	file_env POSTGRES_INITDB_ARGS
	: "${POSTGRES_HOST_AUTH_METHOD:=}"
	export PGDATA="${PGDATA:-/var/lib/postgresql/data}"
	DATABASE_ALREADY_EXISTS=
	if [ -s "$PGDATA/PG_VERSION" ]; then
		DATABASE_ALREADY_EXISTS=true
	fi
}

docker_create_db_directories() {
	mkdir -p "$PGDATA"
	chmod 0700 "$PGDATA"
	if [ -n "${POSTGRES_INITDB_WALDIR:-}" ]; then
		mkdir -p "$POSTGRES_INITDB_WALDIR"
		chmod 0700 "$POSTGRES_INITDB_WALDIR"
	fi
	mkdir -p /var/run/postgresql 2>/dev/null || :
}

docker_verify_minimum_env() {
	if [ -z "$POSTGRES_PASSWORD" ] && [ "$POSTGRES_HOST_AUTH_METHOD" != trust ]; then
		echo "error: the database is uninitialised and POSTGRES_PASSWORD is not set (or POSTGRES_HOST_AUTH_METHOD=trust to allow connections without one)" >&2
		exit 1
	fi
}

docker_init_database_dir() {
	local pwfile args=(--username="$POSTGRES_USER" --encoding=UTF8 --locale=C)
	pwfile="$(mktemp)"
	printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
	args+=(--pwfile="$pwfile")
	if [ -n "${POSTGRES_INITDB_WALDIR:-}" ]; then
		args+=(--waldir="$POSTGRES_INITDB_WALDIR")
	fi
	# POSTGRES_INITDB_ARGS is split on blanks, as documented; later flags win.
	# shellcheck disable=SC2086
	initdb "${args[@]}" $POSTGRES_INITDB_ARGS
	rm -f "$pwfile"
}

pg_setup_hba_conf() {
	local method="${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}"
	{
		echo
		echo "# every host, by password (docker-entrypoint.sh)"
		echo "host all all all $method"
	} >>"$PGDATA/pg_hba.conf"
}

# docker_temp_server_start [SERVER ARGS...] starts the server on its local socket only.
docker_temp_server_start() {
	set -- "$@" -c listen_addresses= -p "${PGPORT:-5432}"
	PGUSER="${PGUSER:-$POSTGRES_USER}" pg_ctl -D "$PGDATA" -o "$(printf '%q ' "$@")" -w start
}

docker_temp_server_stop() {
	PGUSER="${PGUSER:-postgres}" pg_ctl -D "$PGDATA" -m fast -w stop
}

# docker_process_sql [PSQL ARGS...] runs psql on the local socket, as POSTGRES_USER, in
# POSTGRES_DB, stopping at the first error.
docker_process_sql() {
	local cmd=(psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --no-password --no-psqlrc)
	if [ -n "$POSTGRES_DB" ]; then
		cmd+=(--dbname "$POSTGRES_DB")
	fi
	PGHOST= PGHOSTADDR= "${cmd[@]}" "$@"
}

docker_setup_db() {
	if [ "$POSTGRES_DB" = postgres ]; then
		return
	fi
	POSTGRES_DB= docker_process_sql --dbname postgres --set db="$POSTGRES_DB" <<-'EOSQL'
		SELECT format('CREATE DATABASE %I', :'db') WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'db')\gexec
	EOSQL
}

docker_process_init_files() {
	local f
	for f; do
		case "$f" in
		*.sh)
			if [ -x "$f" ]; then
				echo "docker-entrypoint.sh: running $f"
				"$f"
			else
				echo "docker-entrypoint.sh: sourcing $f"
				# shellcheck disable=SC1090
				. "$f"
			fi
			;;
		*.sql)
			echo "docker-entrypoint.sh: running $f"
			docker_process_sql -f "$f"
			;;
		*.sql.gz)
			echo "docker-entrypoint.sh: running $f"
			gunzip -c "$f" | docker_process_sql
			;;
		*) echo "docker-entrypoint.sh: ignoring $f" ;;
		esac
	done
}

_main() {
	if [ "${1:0:1}" = - ]; then
		set -- postgres "$@"
	fi
	if [ "$1" = postgres ]; then
		if [ "$(id -u)" = 0 ]; then
			echo "error: this image runs postgres as its own user (uid 999), not as root" >&2
			exit 1
		fi
		docker_setup_env
		docker_create_db_directories
		if [ -z "$DATABASE_ALREADY_EXISTS" ]; then
			docker_verify_minimum_env
			docker_init_database_dir
			pg_setup_hba_conf
			export PGPASSWORD="${PGPASSWORD:-$POSTGRES_PASSWORD}"
			docker_temp_server_start "${@:2}"
			docker_setup_db
			docker_process_init_files /docker-entrypoint-initdb.d/*
			docker_temp_server_stop
			unset PGPASSWORD
			echo "docker-entrypoint.sh: initialised; starting the server"
		else
			echo "docker-entrypoint.sh: $PGDATA holds a database; no initialisation"
		fi
	fi
	exec "$@"
}

# Executed: run. Sourced (the StatefulSet's wrapper, an init script): functions only.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	_main "$@"
fi
