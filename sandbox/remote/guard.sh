# rath's guard: the file operations of a remote sandbox, confined to its
# workspace, and the wrapper its commands run under. It runs inside the
# sandbox as: sh -c GUARD rath-guard TOKEN WORKSPACE OP ARGS...
#
# Every operation enters directories with cd -P and checks the physical
# directory it reached, so a symlink leading out of the workspace is
# refused however it was planted. Reads check the file they actually
# opened (through /proc/self/fd), so a symlink swapped in after a check
# cannot redirect them; writes rename a staged file into a directory the
# shell holds, which never follows a symlink at the last component.
# Failures are one line on stderr, "rath-guard:TOKEN:KIND", and exit 125.
#
# An OP of the form b64:OP is for transports that carry output only as
# text lines: the operation's stdout and stderr leave base64-encoded as
# they come, a line for each read of up to 64 KiB, each decodable alone;
# the guard's own failure line stays plain.
tok=$1 ws=$2 op=$3
shift 3
exec 4>&2

fail() {
	printf 'rath-guard:%s:%s\n' "$tok" "$1" >&4
	exit 125
}

inside() {
	case $1 in "$ws" | "$ws"/*) return 0 ;; esac
	return 1
}

# root enters the workspace itself.
root() {
	cd -P -- "$ws" 2>/dev/null || fail gone
	inside "$(pwd -P)" || fail escape
}

# enter DIR enters a directory of the workspace one component at a time,
# so a component that leads out is refused even where the rest is missing.
enter() {
	root
	[ "$1" = . ] && return 0
	set -f
	old=$IFS
	IFS=/
	# shellcheck disable=SC2086
	set -- $1
	IFS=$old
	set +f
	for c in "$@"; do
		if ! cd -P -- "$c" 2>/dev/null; then
			[ -e "$c" ] && fail notdir
			fail notfound
		fi
		inside "$(pwd -P)" || fail escape
	done
}

# mkdirs DIR enters a directory of the workspace, creating what is missing
# one component at a time.
mkdirs() {
	root
	[ "$1" = . ] && return 0
	set -f
	old=$IFS
	IFS=/
	# shellcheck disable=SC2086
	set -- $1
	IFS=$old
	set +f
	for c in "$@"; do
		if [ ! -e "$c" ] && [ ! -L "$c" ]; then
			mkdir -- "$c" 2>/dev/null || [ -d "$c" ] || fail mkdir
		fi
		cd -P -- "$c" 2>/dev/null || fail notdir
		inside "$(pwd -P)" || fail escape
	done
}

# target BASE checks that a symlink BASE in the current directory stays in
# the workspace.
target() {
	if [ -L "$1" ]; then
		t=$(readlink -f -- "$1") || fail notfound
		inside "$t" || fail escape
	fi
}

main() {
case $op in
init)
	# init [DIR]: make the workspace (DIR, else ~/workspace) and a private
	# staging directory; print both physical paths.
	d=${1:-$HOME/workspace}
	mkdir -p -- "$d" 2>/dev/null || fail mkdir
	cd -P -- "$d" || fail gone
	w=$(pwd -P)
	s=$HOME/.rath-stage
	case $s in "$w" | "$w"/*) s=$(mktemp -d) || fail mkdir ;; esac
	mkdir -p -- "$s" && chmod 700 "$s" || fail mkdir
	cd -P -- "$s" || fail gone
	printf '%s\n%s\n' "$w" "$(pwd -P)"
	;;
exec)
	# exec MARK DIR ARGV...: run ARGV in a directory of the workspace with
	# RATH_EXEC=MARK in its environment (and so its children's), which is
	# how kill finds them; the guard's own processes do not carry it.
	RATH_EXEC=$1
	export RATH_EXEC
	enter "$2"
	shift 2
	$run "$@" 4>&-
	;;
read)
	# read DIR BASE [STAGE [LIMIT]]: a file's bytes, to stdout or to
	# STAGE; with LIMIT, to stdout after a line "inline" if it holds at
	# most LIMIT bytes, else to STAGE after a line "staged".
	enter "$1"
	{ command exec 3<"$2"; } 2>/dev/null || {
		[ -e "$2" ] && fail denied
		fail notfound
	}
	t=$(readlink /proc/self/fd/3) || fail proc
	inside "$t" || fail escape
	[ -d /proc/self/fd/3 ] && fail isdir
	if [ -n "$4" ]; then
		n=$(stat -L -c %s /proc/self/fd/3) || fail proc
		if [ "$n" -le "$4" ]; then
			echo inline
			cat <&3
		else
			echo staged
			cat <&3 >"$3"
		fi
	elif [ -n "$3" ]; then cat <&3 >"$3"; else cat <&3; fi
	;;
write)
	# write DIR BASE STAGE: move the staged file into place.
	mkdirs "$1"
	b=$2
	if [ -L "$b" ]; then
		target "$b"
		b=$(readlink -f -- "$b")
		enter "$(dirname -- "${b#"$ws"/}")"
		b=$(basename -- "$b")
	fi
	[ -d "$b" ] && fail isdir
	m=$(stat -c %a -- "$b" 2>/dev/null)
	mv -f -- "$3" "$b" || fail write
	if [ -n "$m" ]; then chmod "$m" -- "$b"; fi
	;;
stat)
	# stat DIR BASE: size, raw mode and mtime of an entry (symlinks
	# inside the workspace followed).
	enter "$1"
	target "$2"
	[ -e "$2" ] || fail notfound
	stat -L -c '%f %s %.9Y' -- "$2"
	;;
list)
	# list DIR: the entries of a directory, NUL-separated.
	enter "$1"
	find . -mindepth 1 -maxdepth 1 -printf '%y %m %s %T@ %P\0'
	;;
remove)
	# remove DIR BASE: delete an entry (a symlink itself, not its target).
	enter "$1"
	[ -e "$2" ] || [ -L "$2" ] || fail notfound
	rm -rf -- "$2" || fail remove
	;;
mkdir)
	# mkdir DIR: make a directory and its parents.
	mkdirs "$1"
	;;
manifest)
	# manifest: every non-directory entry (type, mode, size, mtime, path,
	# link target), a separator, then the sha256 of every regular file.
	root
	find . -mindepth 1 ! -type d -printf '%y %m %s %T@ %P\0%l\0'
	printf 'rath-guard-hashes\0'
	find . -type f -print0 | xargs -0 -r sha256sum -z --
	;;
pack)
	# pack STAGE|- PATHS...: a tar of workspace paths (symlinks stored as
	# links, never followed).
	root
	out=$1
	shift
	if [ "$out" = - ]; then tar -cf - -- "$@"; else tar -cf "$out" -- "$@"; fi
	;;
unpack)
	# unpack STAGE: extract a staged tar into the workspace.
	root
	tar -xpf "$1" || fail unpack
	rm -f -- "$1"
	;;
kill)
	# kill TOKEN: kill every process whose environment carries the token.
	for pass in 1 2; do
		for p in /proc/[0-9]*; do
			grep -qsxz "RATH_EXEC=$1" "$p/environ" && kill -9 "${p#/proc/}" 2>/dev/null
		done
		[ "$pass" = 1 ] && sleep 0.05
	done
	true
	;;
*)
	fail "op:$op"
	;;
esac
}

# enc base64-encodes a command's output as it arrives: one line for each
# read of up to 64 KiB (dd returns what a read gives), each line decodable
# alone. A base64 reading the pipe itself would wait for a full block,
# holding back the output of a command that prints a little and then
# works; the guard's own operations, whose output is read whole, take
# plain base64 (lines of 57 bytes), which costs two processes, not two a
# read.
enc() {
	if [ "$op" != exec ]; then
		exec base64
	fi
	while c=$(dd bs=65536 count=1 2>/dev/null | base64 -w0) && [ -n "$c" ]; do
		printf '%s\n' "$c"
	done
}

run=exec
case $op in
b64:*)
	op=${op#b64:}
	run=
	d=$(mktemp -d) || fail mktemp
	mkfifo "$d/o" "$d/e" || fail mkfifo
	enc <"$d/o" &
	o=$!
	enc <"$d/e" >&2 &
	e=$!
	(main "$@") >"$d/o" 2>"$d/e"
	rc=$?
	wait "$o" "$e"
	rm -rf -- "$d"
	exit "$rc"
	;;
esac
main "$@"
