# shellcheck shell=bash
# pgvector for the memory/postgres tests, sourced by scripts/test.
#
# rath_pgvector_install makes the vector extension available to the
# PostgreSQL server that rath_postgres_start found (RATH_PG_BIN). Debian
# bookworm ships no binary package of pgvector for its PostgreSQL 15, so
# this builds Debian's own source package of it (pgvector 0.8.0 from
# trixie, its tarball checked against the digest Debian publishes) with
# the server's development package, and installs it into the server's
# extension directory. On success it exports RATH_TEST_PGVECTOR=1, which
# makes the pgvector tests required rather than skipped. A machine where
# none of this can work still runs the exact-scan tests.

RATH_PGVECTOR_VERSION=0.8.0
RATH_PGVECTOR_SHA256=867a2c328d4928a5a9d6f052cd3bc78c7d60228a9b914ad32aa3db88e9de27b0

rath_pgvector_skip() {
	echo "pgvector is not available ($1): memory/postgres tests use the exact scan only." >&2
	return 1
}

rath_pgvector_install() {
	if [[ -z ${RATH_PG_BIN:-} ]]; then
		rath_pgvector_skip "no local PostgreSQL server was started"
		return
	fi
	local major pgconfig
	major=$("$RATH_PG_BIN/pg_ctl" --version | awk '{print $3}' | cut -d. -f1)
	pgconfig="$RATH_PG_BIN/pg_config"
	if [[ -f $("$pgconfig" --sharedir 2>/dev/null)/extension/vector.control ]]; then
		export RATH_TEST_PGVECTOR=1
		echo "pgvector already installed"
		return 0
	fi
	if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
		rath_pgvector_skip "not root, cannot install postgresql-server-dev-$major"
		return
	fi
	echo "building pgvector $RATH_PGVECTOR_VERSION from Debian's source package"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "postgresql-server-dev-$major" make gcc curl >/dev/null; then
		apt-get update -qq >/dev/null || true
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "postgresql-server-dev-$major" make gcc curl >/dev/null ||
			{ rath_pgvector_skip "apt-get install postgresql-server-dev-$major failed"; return; }
	fi
	local dir tarball
	dir=$(mktemp -d "${TMPDIR:-/tmp}/rath-pgvector.XXXXXX")
	tarball="$dir/pgvector_$RATH_PGVECTOR_VERSION.orig.tar.gz"
	if ! curl -sSf --retry 3 -o "$tarball" "http://deb.debian.org/debian/pool/main/p/pgvector/pgvector_$RATH_PGVECTOR_VERSION.orig.tar.gz"; then
		rm -rf "$dir"
		rath_pgvector_skip "could not download Debian's pgvector source"
		return
	fi
	if ! echo "$RATH_PGVECTOR_SHA256  $tarball" | sha256sum -c --quiet -; then
		rm -rf "$dir"
		rath_pgvector_skip "Debian's pgvector source does not match its digest"
		return
	fi
	tar -xzf "$tarball" -C "$dir"
	# OPTFLAGS="" leaves out -march=native, so the build runs on any x86-64.
	if ! make -s -C "$dir/pgvector-$RATH_PGVECTOR_VERSION" PG_CONFIG="$pgconfig" OPTFLAGS="" >"$dir/build.log" 2>&1 ||
		! make -s -C "$dir/pgvector-$RATH_PGVECTOR_VERSION" PG_CONFIG="$pgconfig" install >>"$dir/build.log" 2>&1; then
		tail -20 "$dir/build.log" >&2
		rm -rf "$dir"
		rath_pgvector_skip "the build failed"
		return
	fi
	rm -rf "$dir"
	export RATH_TEST_PGVECTOR=1
	echo "pgvector $RATH_PGVECTOR_VERSION installed into $("$pgconfig" --pkglibdir)"
}
