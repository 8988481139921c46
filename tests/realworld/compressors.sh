#!/bin/bash
# Threaded compressors under LD_PRELOAD: xz -T4, zstd -T4 and pigz -p 4
# (their worker pools hand blocks around with mutexes and condition
# variables) on a generated 32 MiB text file, made of pseudo-random lines
# over a small vocabulary (compresses about 4:1), cut into 1 MiB blocks or
# jobs so that every worker has many.  For each: compress and then
# decompress under the library, and the result must be byte-identical to
# the input; the compressed file must be byte-identical to the one the
# same command makes without the library, where that command's output is
# deterministic (checked by running it twice without the library when the
# outputs differ).
# Env: RTPTHREAD_LIB.  Exit 0 pass, 1 fail, 77 skip (a program missing).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

rw_need xz xz-utils
rw_need zstd zstd
rw_need pigz pigz
size=$((${COMPRESSORS_DATA_MB:-32} * 1024 * 1024))
data=$rw_tmp/data

# Deterministic input (mawk and gawk differ in rand(): the same on one
# machine is all that is needed).
awk -v size="$size" 'BEGIN {
	srand(20240601)
	n = split("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua mutex condvar barrier futex priority inheritance deadline robust thread wakeup signal broadcast owner waiter kernel scheduler", w, " ")
	total = 0
	while (total < size) {
		k = 4 + int(rand() * 12)
		line = int(rand() * 1000000)
		for (i = 0; i < k; i++)
			line = line " " w[1 + int(rand() * n)]
		line = line "\n"
		if (total + length(line) > size)
			line = substr(line, 1, size - total)
		printf "%s", line
		total += length(line)
	}
}' >"$data"
[ "$(wc -c <"$data")" -eq "$size" ] || rw_fail "generating $size bytes of input"
echo "input: $size bytes, sha256 $(sha256sum <"$data" | cut -c1-16)"

summary=()

# check NAME COMPRESS-CMD -- DECOMPRESS-CMD: both read stdin and write stdout.
check() {
	local name=$1 comp=() decomp=() start t_comp t_decomp t_plain rc csize note
	shift
	while [ "$1" != -- ]; do
		comp+=("$1")
		shift
	done
	shift
	decomp=("$@")
	echo "--- $name: ${comp[*]} | ${decomp[*]}"
	rw_probe "$name" "${comp[0]}" --version

	start=$(date +%s.%N)
	rc=0
	rw_preload "$name" 120 "${comp[@]}" <"$data" >"$rw_tmp/$name.pre" || rc=$?
	[ "$rc" -eq 0 ] || rw_fail "$name: ${comp[*]} under LD_PRELOAD exited with $rc"
	t_comp=$(rw_elapsed "$start")
	rw_bound "$name" pthread_mutex_lock pthread_mutex_unlock pthread_cond_wait

	start=$(date +%s.%N)
	rc=0
	rw_preload "$name-d" 120 "${decomp[@]}" <"$rw_tmp/$name.pre" >"$rw_tmp/$name.out" || rc=$?
	[ "$rc" -eq 0 ] || rw_fail "$name: ${decomp[*]} under LD_PRELOAD exited with $rc"
	t_decomp=$(rw_elapsed "$start")
	rw_bound "$name-d"
	cmp "$data" "$rw_tmp/$name.out" || rw_fail "$name: decompressed output differs from the input"
	rm -f "$rw_tmp/$name.out"
	csize=$(wc -c <"$rw_tmp/$name.pre")

	start=$(date +%s.%N)
	rw_plain 120 "${comp[@]}" <"$data" >"$rw_tmp/$name.plain" || rw_fail "$name: ${comp[*]} without the library exited with $?"
	t_plain=$(rw_elapsed "$start")
	if cmp -s "$rw_tmp/$name.pre" "$rw_tmp/$name.plain"; then
		note="identical to plain glibc's"
	else
		rw_plain 120 "${comp[@]}" <"$data" >"$rw_tmp/$name.plain2" || rw_fail "$name: ${comp[*]} without the library exited with $?"
		if cmp -s "$rw_tmp/$name.plain" "$rw_tmp/$name.plain2"; then
			rw_fail "$name: compressed output differs from plain glibc's, which is deterministic"
		fi
		note="not compared: plain glibc's output differs between two runs"
		echo "$name: output $note"
	fi
	rm -f "$rw_tmp/$name".*
	echo "ok: $name: $csize bytes, round trip identical, output $note; compress ${t_comp}s (plain ${t_plain}s), decompress ${t_decomp}s"
	summary+=("$name")
}

check xz xz -T4 -1 --block-size=1MiB -c -- xz -T4 -d -c
check zstd zstd -q -T4 -B1MiB -c -- zstd -q -d -c
check pigz pigz -p 4 -c -- pigz -p 4 -d -c

echo "PASS: ${summary[*]}: round trips exact, outputs as without the library"
