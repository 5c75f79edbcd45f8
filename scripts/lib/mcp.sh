# shellcheck shell=bash
# The reference MCP servers from npm for the tool/mcp tests, sourced by
# scripts/test.
#
# rath_mcp_install makes sure they are installed and run here, and exports
# RATH_TEST_MCP, the directory whose node_modules holds them (the tests
# read it):
#   - node and npm must be on PATH; whichever is missing is installed from
#     Debian's nodejs and npm packages with apt-get (running apt-get update
#     first only if the plain install fails), which needs root;
#   - the servers (@modelcontextprotocol/server-everything,
#     server-filesystem and server-memory) and every package they need are
#     pinned, with integrity hashes, by tool/mcp/testdata/npm/package.json
#     and its package-lock.json. `npm ci` installs exactly those into
#     ${RATH_MCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rath-test/mcp}/<hash
#     of the lock file>, outside the repository; a directory already
#     installed from the same lock file is reused without reaching npm;
#   - it then opens an MCP session with each server over stdio (the
#     initialize handshake, answered with the server's name and version)
#     and prints one line per server;
#   - on failure it prints why to stderr and returns 1. It never exits the
#     calling shell: callers decide whether a machine without the servers
#     fails the run (RATH_REQUIRE=mcp makes the tests fail instead of
#     skipping).

rath_mcp_fail() {
	echo "the reference MCP servers are not usable here: $1" >&2
	return 1
}

# rath_mcp_apt installs Debian packages quietly.
rath_mcp_apt() {
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1 && return 0
	apt-get update -qq >/dev/null 2>&1 &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# rath_mcp_node makes sure node and npm are on PATH.
rath_mcp_node() {
	local missing=()
	command -v node >/dev/null || missing+=(nodejs)
	command -v npm >/dev/null || missing+=(npm)
	((${#missing[@]} == 0)) && return 0
	if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
		rath_mcp_fail "${missing[*]} not installed (as root: apt-get install -y ${missing[*]})"
		return 1
	fi
	echo "installing ${missing[*]} (apt-get)"
	if ! rath_mcp_apt "${missing[@]}"; then
		rath_mcp_fail "apt-get install ${missing[*]} failed"
		return 1
	fi
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		rath_mcp_fail "nodejs and npm are installed but node or npm is not on PATH"
		return 1
	fi
}

# rath_mcp_handshake DIR NAME ARGS... starts node ARGS... in DIR, sends the
# MCP initialize request and prints the server's name and version from its
# answer; the server is stopped either way.
rath_mcp_handshake() {
	local dir=$1 name=$2 line="" pid
	shift 2
	local init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rath-test","version":"0"}}}'
	coproc RATH_MCP_SERVER { cd "$dir" && exec node "$@" 2>/dev/null; }
	pid=$RATH_MCP_SERVER_PID
	printf '%s\n' "$init" >&"${RATH_MCP_SERVER[1]}"
	IFS= read -r -t 60 line <&"${RATH_MCP_SERVER[0]}" || true
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	if [[ $line != *'"serverInfo"'* ]]; then
		rath_mcp_fail "$name did not answer the MCP initialize request (got: ${line:-nothing})"
		return 1
	fi
	local server version
	server=$(sed -n 's/.*"serverInfo":{[^}]*"name":"\([^"]*\)".*/\1/p' <<<"$line")
	version=$(sed -n 's/.*"serverInfo":{[^}]*"version":"\([^"]*\)".*/\1/p' <<<"$line")
	echo "$name answers over stdio (${server:-?} ${version:-?})"
}

rath_mcp_install() {
	rath_mcp_node || return 1
	local src lock hash cache dir
	src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../tool/mcp/testdata/npm" && pwd) ||
		{ rath_mcp_fail "tool/mcp/testdata/npm is missing"; return 1; }
	lock=$src/package-lock.json
	hash=$(sha256sum "$src/package.json" "$lock" | sha256sum | cut -c1-16)
	cache=${RATH_MCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rath-test/mcp}
	dir=$cache/$hash
	if [[ -f $dir/.installed ]]; then
		echo "reusing the MCP servers in $dir"
	else
		echo "installing the pinned MCP servers into $dir (npm ci, node $(node --version), npm $(npm --version))"
		rm -rf "$dir" && mkdir -p "$dir" &&
			cp "$src/package.json" "$lock" "$dir/" ||
			{ rath_mcp_fail "cannot prepare $dir"; return 1; }
		local out
		if ! out=$(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error 2>&1); then
			echo "$out" | tail -n 20 >&2
			rath_mcp_fail "npm ci failed in $dir"
			return 1
		fi
		touch "$dir/.installed"
	fi
	local nm=$dir/node_modules/@modelcontextprotocol scratch
	scratch=$(mktemp -d "${TMPDIR:-/tmp}/rath-mcp.XXXXXX") || { rath_mcp_fail "mktemp failed"; return 1; }
	if ! rath_mcp_handshake "$scratch" server-everything "$nm/server-everything/dist/index.js" ||
		! rath_mcp_handshake "$scratch" server-filesystem "$nm/server-filesystem/dist/index.js" "$scratch" ||
		! MEMORY_FILE_PATH=$scratch/memory.jsonl rath_mcp_handshake "$scratch" server-memory "$nm/server-memory/dist/index.js"; then
		rm -rf "$scratch"
		return 1
	fi
	rm -rf "$scratch"
	export RATH_TEST_MCP=$dir
}
