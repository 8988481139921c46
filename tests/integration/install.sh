#!/bin/bash
# make install / uninstall: into a DESTDIR (every file, its mode, the .pc
# through pkg-config, a program built against the installed header and
# library), as the Debian package does (a wrapper that names no library
# directory and preloads what the dynamic loader finds), and into a PREFIX
# whose installed wrapper then runs real programs; uninstall leaves no
# file behind.
# Env: BUILD_DIR, HELPERS_DIR.  Exit 0 pass, 1 fail.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:?BUILD_DIR not set}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
mk() { make -s -C "$root" BUILD="$build" "$@" >"$tmp/make.log" 2>&1 || { cat "$tmp/make.log"; bad "make $*"; }; }

multiarch=$(cc -print-multiarch)
libdir=/usr/lib/$multiarch
mk install DESTDIR="$tmp/dest" PREFIX=/usr
for f in "$libdir/librtpthread.so.1:644" "$libdir/librtpthread.so:link" "/usr/include/rtpthread.h:644" \
	"$libdir/pkgconfig/rtpthread.pc:644" "/usr/bin/rtpthread:755" "/usr/share/man/man1/rtpthread.1:644" \
	"/usr/share/man/man7/librtpthread.7:644"; do
	path=$tmp/dest${f%:*} want=${f##*:}
	if [ "$want" = link ]; then
		[ "$(readlink "$path")" = librtpthread.so.1 ] || bad "$path is not a link to librtpthread.so.1"
	else
		[ -f "$path" ] && [ "$(stat -c %a "$path")" = "$want" ] || bad "$path missing or not mode $want"
	fi
done
[ "$fail" -eq 0 ] && echo "ok: DESTDIR install: library, link, header, .pc, wrapper, two man pages"
grep -Eq "@[A-Z]+@" "$tmp/dest/usr/bin/rtpthread" "$tmp/dest$libdir/pkgconfig/rtpthread.pc" \
	"$tmp/dest/usr/share/man/man1/rtpthread.1" "$tmp/dest/usr/share/man/man7/librtpthread.7" &&
	bad "an @VARIABLE@ left unsubstituted"
"$tmp/dest/usr/bin/rtpthread" --version | grep -qx 'rtpthread [0-9.]*' || bad "installed wrapper --version"

export PKG_CONFIG_PATH=$tmp/dest$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$tmp/dest
flags=$(pkg-config --cflags --libs rtpthread) || bad "pkg-config does not find rtpthread"
[ "$(pkg-config --modversion rtpthread)" = "$(cat "$root/VERSION")" ] || bad "pkg-config version"
printf '#include <rtpthread.h>\n#include <stdio.h>\nint main(void) { puts(rtpthread_version()); return 0; }\n' >"$tmp/v.c"
# shellcheck disable=SC2086 # flags is a word list
if cc -o "$tmp/v" "$tmp/v.c" $flags -Wl,-rpath,"$tmp/dest$libdir" && [ -n "$("$tmp/v")" ]; then
	echo "ok: a program built with pkg-config's flags links the installed library: $("$tmp/v")"
else
	bad "building against the installed library with: $flags"
fi
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
mk uninstall DESTDIR="$tmp/dest" PREFIX=/usr
left=$(find "$tmp/dest" ! -type d)
[ -z "$left" ] && echo "ok: uninstall left no file" || bad "uninstall left: $left"

# The wrapper as the Debian package installs it (WRAPPER_LIBDIR empty,
# Architecture: all): it names no directory and preloads the bare name,
# which the dynamic loader finds in its search path (the multiarch
# directory of the command's own ABI; LD_LIBRARY_PATH stands for it here).
mk install DESTDIR="$tmp/pkg" PREFIX=/usr WRAPPER_LIBDIR=
grep -qx 'installed_dir=' "$tmp/pkg/usr/bin/rtpthread" || bad "WRAPPER_LIBDIR= still names a directory in the wrapper"
maps=$(LD_LIBRARY_PATH=$tmp/pkg$libdir "$tmp/pkg/usr/bin/rtpthread" -p inherit -- sh -c 'grep librtpthread /proc/self/maps')
[[ $maps == *"$tmp/pkg$libdir/librtpthread.so.1"* ]] &&
	echo "ok: the wrapper without a directory preloads the library the dynamic loader finds" ||
	bad "the wrapper without a directory: the command's maps: $maps"
if ! ldconfig -p | grep -q 'librtpthread\.so\.1 '; then
	"$tmp/pkg/usr/bin/rtpthread" -- true 2>"$tmp/err" && bad "the wrapper without a directory ran a command without the library"
	grep -q 'refusing to run true' "$tmp/err" && echo "ok: ... and refuses when the loader finds none" ||
		bad "the wrapper without a directory and no library: $(cat "$tmp/err")"
fi

# A real prefix: the wrapper runs real programs with the installed library.
prefix=$tmp/prefix
mk install PREFIX="$prefix"
wrapper=$prefix/bin/rtpthread
head -c 3000000 /dev/urandom >"$tmp/data"
if command -v xz >/dev/null; then
	"$wrapper" -- xz -T2 -c "$tmp/data" >"$tmp/data.xz" && "$wrapper" --stats="$tmp/report" -- xz -d -T2 -c "$tmp/data.xz" | cmp -s - "$tmp/data" &&
		echo "ok: xz -T2 round trip through the installed wrapper" || bad "xz through the wrapper"
	[ -s "$tmp/report" ] && grep -q '^rtpthread: contention report' "$tmp/report" || bad "--stats=PATH wrote no report"
fi
out=$("$wrapper" --protocol=inherit -- "$HELPERS_DIR/legacy_boost" static)
[[ $out =~ boosted=1 ]] && echo "ok: --protocol=inherit: $out" || bad "--protocol=inherit: $out"
"$wrapper" sleep 5 &
sleep 0.5
check=$("$wrapper" --check $!)
kill $! 2>/dev/null
[[ $check == *"mapped from $prefix/lib"* ]] && echo "ok: --check: $(head -n1 <<<"$check")" || bad "--check: $check"
sleep 5 &
"$wrapper" --check $! >/dev/null && bad "--check says a plain process has the library"
kill $! 2>/dev/null
LD_PRELOAD=/nonexistent.so "$wrapper" --lib="$tmp/none.so" true 2>"$tmp/err" && bad "ran without the library"
grep -q 'refusing to run' "$tmp/err" && echo "ok: refuses to run without the library: $(cat "$tmp/err")" || bad "refusal message: $(cat "$tmp/err")"
mk uninstall PREFIX="$prefix"
left=$(find "$prefix" ! -type d)
[ -z "$left" ] || bad "uninstall left: $left"
[ "$fail" -eq 0 ] && echo "PASS: install, the installed wrapper and uninstall"
exit "$fail"
