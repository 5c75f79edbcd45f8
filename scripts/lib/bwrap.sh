# shellcheck shell=bash
# Bubblewrap for the sandbox/bwrap tests, sourced by scripts/test.
#
# rath_bwrap_install makes sure bwrap is installed and works here:
#   - if bwrap is not on PATH, it installs Debian's bubblewrap package with
#     apt-get (running apt-get update first only if the plain install fails),
#     which needs root;
#   - it then runs `bwrap --ro-bind / / true`, and the same with the
#     namespaces the backend unshares, and prints one line saying it works;
#   - on failure it prints why to stderr and returns 1. It never exits the
#     calling shell: callers decide whether a machine without bwrap fails
#     the run (RATH_REQUIRE=bwrap makes the tests fail instead of skipping).

rath_bwrap_fail() {
	echo "bubblewrap is not usable here: $1" >&2
	return 1
}

# rath_bwrap_apt installs the bubblewrap package quietly.
rath_bwrap_apt() {
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null 2>&1 && return 0
	apt-get update -qq >/dev/null 2>&1 &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null
}

rath_bwrap_install() {
	if ! command -v bwrap >/dev/null; then
		if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
			rath_bwrap_fail "bwrap is not installed (as root: apt-get install -y bubblewrap)"
			return 1
		fi
		echo "installing bubblewrap (apt-get)"
		if ! rath_bwrap_apt; then
			rath_bwrap_fail "apt-get install bubblewrap failed"
			return 1
		fi
		if ! command -v bwrap >/dev/null; then
			rath_bwrap_fail "bubblewrap is installed but bwrap is not on PATH"
			return 1
		fi
	fi
	local out
	if ! out=$(bwrap --ro-bind / / true 2>&1); then
		rath_bwrap_fail "\`bwrap --ro-bind / / true\` failed: ${out:-no message}"
		return 1
	fi
	if ! out=$(bwrap --unshare-all --unshare-user --disable-userns --ro-bind / / --proc /proc --dev /dev true 2>&1); then
		rath_bwrap_fail "bwrap cannot create the sandbox's namespaces (user, pid, net, ...): ${out:-no message}"
		return 1
	fi
	echo "bubblewrap $(bwrap --version | awk '{print $2}') works here ($(command -v bwrap))"
}
