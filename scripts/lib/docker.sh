# shellcheck shell=bash
# A Docker daemon and the sandbox image for the sandbox/docker tests,
# sourced by scripts/test.
#
# rath_docker_start makes `docker info` work and the image rath-busybox:latest
# exist:
#   - if a daemon already answers (DOCKER_HOST or the default socket), it is
#     used as it is;
#   - otherwise it installs Debian's docker.io when dockerd is missing and we
#     are root, and starts dockerd in the background with no network bridge
#     and no iptables rules (the sandboxes run with --network none, and a
#     test machine's firewall is none of our business), logging to a
#     temporary file, and waits for it to answer;
#   - it builds rath-busybox:latest locally when the image is missing (no
#     registry is reached): a root filesystem of a static busybox with its
#     applet links and an unprivileged user rath (uid 1000), imported with
#     `docker import`.
# It prints one line per step and returns non-zero with a message when a
# step fails; it never exits the caller.

RATH_DOCKER_IMAGE=${RATH_DOCKER_IMAGE:-rath-busybox:latest}

rath_docker_fail() {
	echo "docker: $1: the sandbox/docker tests will skip (or fail under RATH_REQUIRE=docker)." >&2
	return 1
}

# rath_docker_apt installs Debian packages, updating the lists only when a
# first attempt fails.
rath_docker_apt() {
	if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
		echo "docker: cannot install $* (not root, or no apt-get)" >&2
		return 1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1 && return 0
	apt-get update -qq >/dev/null &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# rath_docker_daemon starts dockerd in the background and waits until it
# answers, for at most 60 seconds.
rath_docker_daemon() {
	if ! command -v dockerd >/dev/null; then
		echo "installing docker.io (apt-get)"
		rath_docker_apt docker.io || { rath_docker_fail "apt-get install docker.io failed"; return 1; }
	fi
	RATH_DOCKER_LOG=$(mktemp "${TMPDIR:-/tmp}/rath-dockerd.XXXXXX.log")
	echo "starting dockerd (bridge none, no iptables; log in $RATH_DOCKER_LOG)"
	nohup dockerd --bridge=none --iptables=false --ip6tables=false >"$RATH_DOCKER_LOG" 2>&1 &
	local pid=$! i
	for ((i = 0; i < 120; i++)); do
		if docker info >/dev/null 2>&1; then
			echo "dockerd is up (pid $pid)"
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			break
		fi
		sleep 0.5
	done
	tail -n 20 "$RATH_DOCKER_LOG" >&2
	rath_docker_fail "dockerd did not answer (see $RATH_DOCKER_LOG)"
}

# rath_docker_image builds $RATH_DOCKER_IMAGE from the host's static busybox.
rath_docker_image() {
	local bb=/bin/busybox
	if ! [[ -x $bb ]] || ! rath_docker_static "$bb"; then
		echo "installing busybox-static (apt-get)"
		rath_docker_apt busybox-static || { rath_docker_fail "apt-get install busybox-static failed"; return 1; }
	fi
	local root
	root=$(mktemp -d "${TMPDIR:-/tmp}/rath-rootfs.XXXXXX") || { rath_docker_fail "mktemp failed"; return 1; }
	echo "building $RATH_DOCKER_IMAGE from $bb in $root"
	if ! {
		mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,tmp,workspace,proc,sys,dev} &&
			chmod 1777 "$root/tmp" &&
			cp "$bb" "$root/bin/busybox" &&
			rath_docker_links "$root" &&
			printf 'root:x:0:0:root:/root:/bin/sh\nrath:x:1000:1000:rath:/workspace:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$root/etc/passwd" &&
			printf 'root:x:0:\nrath:x:1000:\nnogroup:x:65534:\n' >"$root/etc/group" &&
			tar -C "$root" -c . | docker import -c 'CMD ["/bin/sh"]' - "$RATH_DOCKER_IMAGE" >/dev/null
	}; then
		rm -rf "$root"
		rath_docker_fail "building $RATH_DOCKER_IMAGE failed"
		return 1
	fi
	rm -rf "$root"
	echo "built $RATH_DOCKER_IMAGE"
}

# rath_docker_static reports whether a binary needs no dynamic loader (it
# runs inside an image that has no libc).
rath_docker_static() {
	command -v ldd >/dev/null || return 0
	local out
	out=$(ldd "$1" 2>&1) || true
	[[ $out == *"not a dynamic executable"* || $out == *"statically linked"* ]]
}

# rath_docker_links makes a symlink to /bin/busybox for every applet, at the
# path busybox itself would install it (no chroot, so no root needed).
rath_docker_links() {
	local p
	while read -r p; do
		[[ -n $p && $p != bin/busybox ]] || continue
		mkdir -p "$1/$(dirname "$p")" && ln -sf /bin/busybox "$1/$p" || return 1
	done < <("$1/bin/busybox" --list-full)
}

rath_docker_start() {
	if docker info >/dev/null 2>&1; then
		echo "using the Docker daemon at ${DOCKER_HOST:-unix:///var/run/docker.sock}"
	else
		rath_docker_daemon || return 1
	fi
	if docker image inspect "$RATH_DOCKER_IMAGE" >/dev/null 2>&1; then
		echo "image $RATH_DOCKER_IMAGE is present"
		return 0
	fi
	rath_docker_image
}
