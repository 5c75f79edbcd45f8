# shellcheck shell=bash
# Headless Chromium and Graphviz for the server's viewer tests, sourced by
# scripts/test.
#
# rath_chromium_install makes sure both work here:
#   - a Chromium binary (chromium, chromium-browser or google-chrome) on
#     PATH, and Graphviz's dot; whatever is missing is installed from
#     Debian's chromium and graphviz packages with apt-get (running
#     apt-get update first only if the plain install fails), which needs
#     root. chromedp drives Chromium through a pipe: no chromium-driver;
#   - it then renders a page with headless Chromium (fresh profile, no
#     sandbox, no GPU, no background networking) and lays out a graph with
#     `dot -Tsvg`, and prints one line saying each works;
#   - on failure it prints why to stderr and returns 1. It never exits the
#     calling shell: callers decide whether a machine without them fails
#     the run (RATH_REQUIRE=chromium,graphviz makes the tests fail instead
#     of skipping).

rath_chromium_fail() {
	echo "headless Chromium / Graphviz is not usable here: $1" >&2
	return 1
}

# rath_chromium_bin prints the first Chromium binary on PATH.
rath_chromium_bin() {
	local b
	for b in chromium chromium-browser google-chrome google-chrome-stable; do
		if command -v "$b" >/dev/null; then
			command -v "$b"
			return 0
		fi
	done
	return 1
}

# rath_chromium_apt installs Debian packages quietly.
rath_chromium_apt() {
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1 && return 0
	apt-get update -qq >/dev/null 2>&1 &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

rath_chromium_install() {
	local missing=()
	rath_chromium_bin >/dev/null || missing+=(chromium)
	command -v dot >/dev/null || missing+=(graphviz)
	if ((${#missing[@]} > 0)); then
		if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
			rath_chromium_fail "${missing[*]} not installed (as root: apt-get install -y ${missing[*]})"
			return 1
		fi
		echo "installing ${missing[*]} (apt-get)"
		if ! rath_chromium_apt "${missing[@]}"; then
			rath_chromium_fail "apt-get install ${missing[*]} failed"
			return 1
		fi
	fi
	local bin out profile
	if ! bin=$(rath_chromium_bin); then
		rath_chromium_fail "chromium is installed but no chromium binary is on PATH"
		return 1
	fi
	if ! command -v dot >/dev/null; then
		rath_chromium_fail "graphviz is installed but dot is not on PATH"
		return 1
	fi
	profile=$(mktemp -d "${TMPDIR:-/tmp}/rath-chromium.XXXXXX")
	out=$(timeout 120 "$bin" --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
		--dump-dom 'data:text/html,<p id=rath>ok</p>' 2>/dev/null)
	rm -rf "$profile"
	if [[ $out != *'<p id="rath">ok</p>'* ]]; then
		rath_chromium_fail "\`$bin --headless --dump-dom\` did not render a page"
		return 1
	fi
	if ! out=$(echo 'digraph { a -> b }' | dot -Tsvg 2>&1) || [[ $out != *'class="node"'* ]]; then
		rath_chromium_fail "\`dot -Tsvg\` failed: ${out:-no output}"
		return 1
	fi
	echo "headless $("$bin" --version 2>/dev/null | head -n 1) works here ($bin)"
	echo "Graphviz $(dot -V 2>&1 | awk '{print $5}') works here ($(command -v dot))"
}
