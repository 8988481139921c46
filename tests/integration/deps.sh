#!/bin/bash
# scripts/deps installs, for each purpose, what that purpose needs and no
# more: alone, only what building and installing the library and the
# wrapper need (a compiler, pkg-config, <sys/sdt.h>), never the test
# tools (qemu, a cross compiler, bpftrace, lintian, Check); --compare adds
# only what make compare needs.  Run against stand-ins for dpkg-query
# (nothing is installed), dpkg and apt-get (which write down what they
# were asked): nothing is installed for real.
# Env: none.  Exit 0 pass, 1 fail.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

mkdir "$tmp/bin"
printf '#!/bin/sh\nexit 1\n' >"$tmp/bin/dpkg-query"
printf '#!/bin/sh\necho "dpkg $*" >>"%s"\n' "$tmp/log" >"$tmp/bin/dpkg"
printf '#!/bin/sh\necho "apt-get $*" >>"%s"\n' "$tmp/log" >"$tmp/bin/apt-get"
chmod 755 "$tmp/bin"/*
for tool in dpkg-query dpkg apt-get; do
	[ "$(PATH="$tmp/bin:$PATH" command -v "$tool")" = "$tmp/bin/$tool" ] ||
		{ echo "FAIL: the stand-in for $tool is not the one found"; exit 1; }
done

# installs ARGS...: the packages scripts/deps ARGS asks apt-get to
# install, one a line, sorted.
installs() {
	: >"$tmp/log"
	PATH="$tmp/bin:$PATH" "$root/scripts/deps" "$@" >/dev/null || { echo "FAIL: scripts/deps $* exited $?"; fail=1; }
	sed -n 's/^apt-get install -y -qq //p' "$tmp/log" | tr ' ' '\n' | sed '/^$/d' | sort
}

# expect WHAT GOT WANTED: the package lists are the same.
expect() {
	if [ "$2" = "$(tr ' ' '\n' <<<"$3" | sort)" ]; then
		echo "ok: $1:" $2
	else
		echo "FAIL: $1: installs" $2 "; expected $3"
		fail=1
	fi
}

build=$(installs)
expect "scripts/deps alone" "$build" "build-essential pkg-config systemtap-sdt-dev"
compare=$(installs --compare)
expect "scripts/deps --compare" "$compare" "build-essential pkg-config systemtap-sdt-dev python3 strace gnuplot-nox"
all=$(installs --test)
for p in check rt-tests bpftrace lintian qemu-user gcc-aarch64-linux-gnu $build $compare; do
	grep -qx "$p" <<<"$all" || { echo "FAIL: scripts/deps --test does not install $p"; fail=1; }
done
[ "$fail" -eq 0 ] && echo "ok: scripts/deps --test installs the test tools too"

PATH="$tmp/bin:$PATH" "$root/scripts/deps" --bogus >/dev/null 2>&1
rc=$?
[ "$rc" -eq 2 ] && echo "ok: an unknown option exits 2" || { echo "FAIL: an unknown option exits $rc"; fail=1; }

[ "$fail" -eq 0 ] && echo "PASS: scripts/deps installs what each purpose needs, no more"
exit "$fail"
