#!/bin/bash
# The configuration the documentation names is the one the library takes:
# every RTPTHREAD_* variable and RTPTHREAD_CONF key in README.md's
# configuration table and in librtpthread(7) is known to the library (set,
# it draws no "unknown" line), and every variable and key the library
# accepts (the list its "unknown" lines give) is described in
# librtpthread(7).
# Env: RTPTHREAD_LIB.  Exit 0 pass, 1 fail.
set -u
lib=${RTPTHREAD_LIB:?RTPTHREAD_LIB not set}
root=$(cd "$(dirname "$0")/../.." && pwd)
readme=$root/README.md
man=$root/man/librtpthread.7
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# The README's table: its first column names the keys and the variables.
table=$(sed -n '/^## Configuration/,/^## /p' "$readme" | grep '^| `' | cut -d'|' -f2)
[ -n "$table" ] || bad "no configuration table in README.md"
readme_vars=$(grep -o 'RTPTHREAD_[A-Z_]*' <<<"$table" | sort -u)
readme_keys=$(grep -o '`[a-z_]*`' <<<"$table" | tr -d '`' | sort -u)
# The manual page: the tagged paragraphs .BI RTPTHREAD_X= and .BR key:
# (std::mutex and the like are not keys).
man_vars=$(sed -n 's/^\.B[IR]\{0,1\} \(RTPTHREAD_[A-Z_]*\)=.*/\1/p' "$man" | sort -u)
man_keys=$(sed -n 's/^\.B[IR]\{0,1\} \([a-z_]*\):\([^:].*\)\{0,1\}$/\1/p' "$man" | sort -u)
[ -n "$man_vars" ] && [ -n "$man_keys" ] || bad "no variables or keys found in $man"

# Set, each documented variable and key draws no "unknown" line (a bad
# value for an empty one is expected and not looked at).
for v in $(printf "%s\n" $readme_vars $man_vars | sort -u); do
	err=$(env "$v=" LD_PRELOAD="$lib" /bin/true 2>&1)
	grep -q 'unknown variable' <<<"$err" && bad "$v is documented but the library does not know it: $err"
done
for k in $(printf "%s\n" $readme_keys $man_keys | sort -u); do
	err=$(env RTPTHREAD_CONF="$k:" LD_PRELOAD="$lib" /bin/true 2>&1)
	grep -q 'unknown key' <<<"$err" && bad "key $k is documented but the library does not know it: $err"
done
documented=$(printf '%s\n' $readme_vars $man_vars $readme_keys $man_keys | sort -u | tr '\n' ' ')
[ "$fail" -eq 0 ] && echo "ok: the library knows every documented variable and key: $documented"

# What the library accepts, from its own lines, is all in the manual page.
accepted() { sed -n 's/.*(accepted: \(.*\))$/\1/p' <<<"$1" | tr -d ' ' | tr ',' '\n' | sort -u; }
lib_vars=$(accepted "$(env RTPTHREAD_NO_SUCH_VARIABLE=1 LD_PRELOAD="$lib" /bin/true 2>&1)")
lib_keys=$(accepted "$(env RTPTHREAD_CONF=no_such_key:1 LD_PRELOAD="$lib" /bin/true 2>&1)")
[ -n "$lib_vars" ] && [ -n "$lib_keys" ] || bad "the library's unknown-variable or unknown-key line lists nothing"
for v in $lib_vars; do
	grep -qx "$v" <<<"$man_vars" || bad "the library accepts $v, librtpthread(7) does not describe it"
done
for k in $lib_keys; do
	grep -qx "$k" <<<"$man_keys" || bad "the library accepts key $k, librtpthread(7) does not describe it"
done

[ "$fail" -eq 0 ] && echo "PASS: the documented configuration is the library's:" $lib_vars $lib_keys
exit "$fail"
