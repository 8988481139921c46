#!/bin/bash
# The Debian packages (debian/): dpkg-buildpackage -us -uc -b on a copy of
# the working tree (every file git tracks or would track, as it is now,
# uncommitted changes included) in a temporary directory; the three .debs
# hold exactly the files they should, with the right modes, fields and
# install directories; the library's symbols match
# debian/librtpthread1.symbols (debian/rules makes any difference fail the
# build); lintian reports no error.  Nothing is installed.
# Env: BUILD_DIR (unused: the build is its own).  Exit 0 pass, 1 fail,
# 77 skip (dpkg-dev, debhelper, lintian or a build dependency missing;
# with CI=true that is a failure: scripts/deps installs them).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
. "$(dirname "$0")/lib.sh"

for tool in dpkg-buildpackage:dpkg-dev dh:debhelper dpkg-deb:dpkg lintian:lintian git:git; do
	command -v "${tool%%:*}" >/dev/null || skip "${tool%%:*} missing (package ${tool#*:})"
done
git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1 || skip "$root is not a git work tree"
missing=$(cd "$root" && dpkg-checkbuilddeps 2>&1) || skip "build dependencies missing: ${missing#*: }"

# The package build is a make of its own: nothing of the make that runs
# this test (its variables, BUILD, CFLAGS of make debug or sanitize, its
# jobserver) may reach it.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES CC CFLAGS CPPFLAGS LDFLAGS LIB_RUNTIME
DEB_BUILD_OPTIONS="parallel=$(nproc)"
export DEB_BUILD_OPTIONS

# The working tree as it is: tracked files (those deleted in the tree left
# out) and untracked ones that are not ignored.
src=$tmp/rtpthread
mkdir "$src"
(cd "$root" && git ls-files -z -co --exclude-standard) |
	(cd "$root" && while IFS= read -r -d '' f; do [ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"; done) |
	(cd "$root" && xargs -0 cp -P --parents -t "$src") || { bad "copying the working tree"; exit 1; }
[ -f "$src/debian/control" ] || { bad "no debian/control in the working tree"; exit 1; }
(cd "$src" && find debian -type f | sort) >"$tmp/sources"

start=$(date +%s)
if (cd "$src" && dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1; then
	echo "ok: dpkg-buildpackage -us -uc -b ($(($(date +%s) - start)) s)"
else
	tail -n 40 "$tmp/build.log"
	echo "FAIL: dpkg-buildpackage failed.  A symbol added to or removed from preload/librtpthread.map"
	echo "      needs the same change in debian/librtpthread1.symbols (dpkg-gensymbols' diff is above);"
	echo "      a new VERSION needs a new debian/changelog entry."
	exit 1
fi
grep -q 'dpkg-gensymbols: warning' "$tmp/build.log" && { grep -A20 'dpkg-gensymbols: warning' "$tmp/build.log"; bad "dpkg-gensymbols warned"; }

version=$(cd "$src" && dpkg-parsechangelog -S Version)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
[ "$version" = "$(cat "$root/VERSION")" ] || bad "debian/changelog $version is not the VERSION file's"

# deb PACKAGE: its path, or a failure if it was not built (rtpthread,
# a shell script, is Architecture: all).
deb() {
	local a=$arch
	[ "$1" = rtpthread ] && a=all
	local f=$tmp/${1}_${version}_$a.deb
	[ -f "$f" ] || { bad "$1: ${f##*/} not built"; return 1; }
	echo "$f"
}

# files PACKAGE EXPECTED: the package's files and links (not directories),
# with modes, are exactly EXPECTED.
files() {
	local f got
	f=$(deb "$1") || return
	got=$(dpkg-deb -c "$f" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $1, $6, $7, $8 }' | sed 's/ *$//' | sort)
	if [ "$got" = "$(sort <<<"$2")" ]; then
		echo "ok: $1: $(wc -l <<<"$got") files as expected"
	else
		bad "$1: files differ from the expected ones:"
		diff <(sort <<<"$2") <(echo "$got") | sed 's/^/      /'
	fi
}

doc() { printf -- '-rw-r--r-- /usr/share/doc/%s/changelog.gz\n-rw-r--r-- /usr/share/doc/%s/copyright' "$1" "$1"; }
files librtpthread1 "-rw-r--r-- /usr/lib/$ma/librtpthread.so.1
-rw-r--r-- /usr/share/man/man7/librtpthread.7.gz
-rw-r--r-- /usr/share/doc/librtpthread1/README.md.gz
-rw-r--r-- /usr/share/doc/librtpthread1/NEWS.gz
$(doc librtpthread1)"
files librtpthread-dev "-rw-r--r-- /usr/include/rtpthread.h
lrwxrwxrwx /usr/lib/$ma/librtpthread.so -> librtpthread.so.1
-rw-r--r-- /usr/lib/$ma/pkgconfig/rtpthread.pc
$(doc librtpthread-dev)"
files rtpthread "-rwxr-xr-x /usr/bin/rtpthread
-rw-r--r-- /usr/share/man/man1/rtpthread.1.gz
$(doc rtpthread)"

# field PACKAGE FIELD VALUE
field() {
	local f got
	f=$(deb "$1") || return
	got=$(dpkg-deb -f "$f" "$2")
	[ "$got" = "$3" ] || bad "$1: $2 is '$got', expected '$3'"
}
field librtpthread1 Multi-Arch same
field librtpthread-dev Multi-Arch same
field rtpthread Multi-Arch foreign
field librtpthread-dev Depends "librtpthread1 (= $version)"
field rtpthread Depends "librtpthread1 (>= $version)"
field rtpthread Architecture all
field librtpthread1 Section libs
field librtpthread-dev Section libdevel
field rtpthread Section utils
[ "$fail" -eq 0 ] && echo "ok: Multi-Arch, Depends and Section fields"

# What the packages point at: the wrapper names no library directory (it
# serves every architecture: the dynamic loader finds the library), the
# .pc's library directory, the library's SONAME, its symbols control file.
if f=$(deb rtpthread); then
	dpkg-deb --fsys-tarfile "$f" | tar -xO ./usr/bin/rtpthread >"$tmp/wrapper"
	grep -qx "installed_dir=" "$tmp/wrapper" && ! grep -q "/usr/lib/" "$tmp/wrapper" ||
		bad "the packaged wrapper names a library directory: $(grep -n '/usr/lib/\|installed_dir=' "$tmp/wrapper")"
fi
if f=$(deb librtpthread-dev); then
	dpkg-deb --fsys-tarfile "$f" | tar -xO "./usr/lib/$ma/pkgconfig/rtpthread.pc" | grep -qx "libdir=/usr/lib/$ma" ||
		bad "the packaged rtpthread.pc does not say libdir=/usr/lib/$ma"
fi
if f=$(deb librtpthread1); then
	mkdir "$tmp/x"
	dpkg-deb -x "$f" "$tmp/x"
	readelf -d "$tmp/x/usr/lib/$ma/librtpthread.so.1" | grep -q 'SONAME.*\[librtpthread\.so\.1\]' || bad "SONAME is not librtpthread.so.1"
	dpkg-deb --ctrl-tarfile "$f" | tar -xO ./symbols >"$tmp/symbols" 2>/dev/null || bad "librtpthread1 has no symbols file"
	# Every name of the version script, at every version it is listed under,
	# is in the shipped symbols file: the script as the package build
	# preprocessed it, with this architecture's versions.
	awk '/^[A-Z][A-Z0-9_.]* *\{/ { v = $1 } /global:/ { g = 1; next } /local:|^\}/ { g = 0 }
		g { gsub(/;/, " "); for (i = 1; i <= NF; i++) print $i "@" v }' "$src/build/librtpthread.map" | sort >"$tmp/map"
	awk '/^ / && $1 !~ /^[A-Z]/ { print $1 }' "$tmp/symbols" | sort >"$tmp/shipped"
	if cmp -s "$tmp/map" "$tmp/shipped"; then
		echo "ok: the symbols file lists the $(wc -l <"$tmp/map") names of preload/librtpthread.map at their versions"
	else
		bad "preload/librtpthread.map and the packaged symbols file differ (< map, > symbols):"
		diff "$tmp/map" "$tmp/shipped" | grep '^[<>]' | sed 's/^/      /'
	fi
fi

# Every file the build left in debian/ is either in the source or
# ignored by .gitignore, so that git status stays clean after a build.
untracked=
while IFS= read -r f; do
	grep -qxF "$f" "$tmp/sources" || (cd "$root" && git check-ignore -q --no-index "$f") || untracked="$untracked $f"
done < <(cd "$src" && find debian -type f | sort)
[ -z "$untracked" ] && echo "ok: every build file in debian/ is ignored by git" || bad "build files git would show in debian/:$untracked"

# lintian: no error, no warning (informational tags are shown).
lintian --info --pedantic "$tmp"/rtpthread_"${version}"_"$arch".changes >"$tmp/lintian.log" 2>&1
grep -v '^running with root privileges' "$tmp/lintian.log" | sed 's/^/lintian: /'
if grep -q '^[EW]: ' "$tmp/lintian.log"; then
	bad "lintian reports errors or warnings"
else
	echo "ok: lintian: no error or warning"
fi

[ "$fail" -eq 0 ] && echo "PASS: Debian packages librtpthread1, librtpthread-dev, rtpthread ($(($(date +%s) - start)) s)"
exit "$fail"
