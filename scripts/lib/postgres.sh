# shellcheck shell=bash
# A throwaway PostgreSQL for the test suite, sourced by scripts/test.
#
# rath_postgres_start exports RATH_TEST_POSTGRES for the store/postgres tests:
#   - if RATH_TEST_POSTGRES is already set, that server is used as it is;
#   - otherwise it finds the server binaries (installing Debian's postgresql
#     package when they are missing and we are root), initialises a cluster in
#     a temporary directory owned by an unprivileged user (initdb refuses
#     root), starts it on a free 127.0.0.1 port with fsync on (the crash and
#     durability tests mean something only then), and registers an EXIT trap
#     that stops it and removes the directory;
#   - if none of that can work, it says the postgres tests will skip and
#     returns 0: a machine without PostgreSQL still runs everything else.

# rath_pg_bindir prints the directory holding initdb and pg_ctl.
rath_pg_bindir() {
	local d
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [[ -x $d/initdb && -x $d/pg_ctl ]]; then
			echo "$d"
			return 0
		fi
	done
	if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
		dirname "$(command -v initdb)"
		return 0
	fi
	return 1
}

# rath_pg_free_port prints a TCP port on 127.0.0.1 that nothing listens on.
rath_pg_free_port() {
	if command -v python3 >/dev/null; then
		python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()' && return 0
	fi
	local port
	for port in $(seq 54320 54420); do
		# A refused connection means the port is free.
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return 0
		fi
	done
	return 1
}

# rath_pg_as runs a command as the cluster's owner.
rath_pg_as() {
	if [[ $RATH_PG_USER == "$(id -un)" ]]; then
		"$@"
	else
		runuser -u "$RATH_PG_USER" -- "$@"
	fi
}

rath_pg_stop() {
	if [[ -n ${RATH_PG_DATA:-} && -d $RATH_PG_DATA ]]; then
		rath_pg_as "$RATH_PG_BIN/pg_ctl" -D "$RATH_PG_DATA/data" -m immediate -w stop >/dev/null 2>&1 || true
		rm -rf "$RATH_PG_DATA"
	fi
}

# rath_pg_trap adds rath_pg_stop to the EXIT trap, keeping any trap there.
rath_pg_trap() {
	local prev
	prev=$(trap -p EXIT)
	prev=${prev#"trap -- '"}
	prev=${prev%"' EXIT"}
	trap "${prev:+$prev; }rath_pg_stop" EXIT
}

rath_postgres_skip() {
	echo "PostgreSQL is not available ($1): the store/postgres tests will skip." >&2
	return 0
}

rath_postgres_start() {
	if [[ -n ${RATH_TEST_POSTGRES:-} ]]; then
		echo "using RATH_TEST_POSTGRES from the environment"
		return 0
	fi
	if ! RATH_PG_BIN=$(rath_pg_bindir); then
		if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
			echo "installing postgresql (apt-get)"
			if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }; then
				rath_postgres_skip "apt-get install postgresql failed"
				return 0
			fi
		fi
		if ! RATH_PG_BIN=$(rath_pg_bindir); then
			rath_postgres_skip "no initdb/pg_ctl found; install postgresql"
			return 0
		fi
	fi
	RATH_PG_USER=$(id -un)
	if [[ $(id -u) == 0 ]]; then
		RATH_PG_USER=postgres
		if ! id postgres >/dev/null 2>&1; then
			useradd --system --no-create-home --shell /usr/sbin/nologin postgres ||
				{ rath_postgres_skip "cannot create the user postgres"; return 0; }
		fi
	fi
	local port
	if ! port=$(rath_pg_free_port); then
		rath_postgres_skip "no free port on 127.0.0.1"
		return 0
	fi
	RATH_PG_DATA=$(mktemp -d "${TMPDIR:-/tmp}/rath-pg.XXXXXX")
	chmod 755 "$RATH_PG_DATA"
	[[ $RATH_PG_USER == "$(id -un)" ]] || chown "$RATH_PG_USER" "$RATH_PG_DATA"
	rath_pg_trap
	# --no-sync: the cluster is thrown away, so initdb need not fsync it;
	# the server itself runs with fsync=on.
	if ! rath_pg_as "$RATH_PG_BIN/initdb" --no-sync -U postgres --auth=trust -D "$RATH_PG_DATA/data" >"$RATH_PG_DATA/initdb.log" 2>&1; then
		cat "$RATH_PG_DATA/initdb.log" >&2
		rath_postgres_skip "initdb failed"
		return 0
	fi
	if ! rath_pg_as "$RATH_PG_BIN/pg_ctl" -D "$RATH_PG_DATA/data" -l "$RATH_PG_DATA/server.log" \
		-o "-c listen_addresses=127.0.0.1 -p $port -k $RATH_PG_DATA -c fsync=on -c max_connections=200" -w start >/dev/null; then
		cat "$RATH_PG_DATA/server.log" >&2
		rath_postgres_skip "the server did not start"
		return 0
	fi
	export RATH_TEST_POSTGRES="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
	echo "PostgreSQL $("$RATH_PG_BIN/pg_ctl" --version | awk '{print $3}') on 127.0.0.1:$port (data in $RATH_PG_DATA, removed on exit)"
}
