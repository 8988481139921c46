#!/bin/bash
# Threaded git under LD_PRELOAD.  A throwaway repository is generated with
# git fast-import: 300 files, 500 commits on main that each rewrite a few
# of them, a 60-commit side branch merged back, tags.  Then, under the
# library:
#   git -c pack.threads=4 repack -adf   (pack-objects: threaded delta search)
#   git -c pack.threads=4 clone --no-local   (threaded index-pack)
# and, without it, git fsck --full of both.  Every object must still be
# there (the same list of object names, types and sizes as before the
# repack, all in one pack), and git rev-list --all must count the commits
# that were made.
# Env: RTPTHREAD_LIB.  Exit 0 pass, 1 fail, 77 skip (git missing).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

rw_need git git
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME=$rw_tmp
main_commits=500 side_commits=60 files=300 branch_at=250
# main, side, and the merge commit.
expected=$((main_commits + side_commits + 1))
repo=$rw_tmp/repo
clone=$rw_tmp/clone

git init -q -b main "$repo"
git -C "$repo" config gc.auto 0

# The fast-import stream.  File K at version V: 60 lines, most of them the
# same at every version, a few that depend on V (so that versions delta
# well against each other but not trivially).
awk -v commits="$main_commits" -v side="$side_commits" -v files="$files" -v at="$branch_at" '
function content(k, v,    j, s) {
	s = ""
	for (j = 0; j < 60; j++) {
		s = s sprintf("file %d line %d: %d", k, j, (k * 31 + j * 17) % 1000)
		if (j % 8 == v % 8)
			s = s sprintf(" changed in version %d", v)
		if (j % 13 == (k + v) % 13)
			s = s sprintf(" checksum %d", (k * 7919 + v * 104729 + j) % 100003)
		s = s "\n"
	}
	return s
}
function touch(k) {
	ver[k]++
	printf "M 100644 inline dir%d/file%d.txt\ndata <<EOD\n%sEOD\n", k % 10, k, content(k, ver[k])
}
function header(ref, mark, msg) {
	printf "commit %s\nmark :%d\ncommitter Gen <gen@example.invalid> %d +0000\ndata <<EOD\n%s\nEOD\n", ref, mark, 1700000000 + mark * 60, msg
}
BEGIN {
	for (c = 1; c <= commits; c++) {
		header("refs/heads/main", c, "main commit " c)
		if (c > 1)
			printf "from :%d\n", c - 1
		if (c == 1)
			for (k = 0; k < files; k++)
				touch(k)
		else
			for (j = 0; j < 3; j++)
				touch((c * 7 + j * 61) % files)
		printf "\n"
		if (c % 50 == 0)
			printf "reset refs/tags/v%d\nfrom :%d\n\n", c / 50, c
		if (c == at) {
			# The side branch, forked here, touching files main also touches.
			for (s = 1; s <= side; s++) {
				m = 100000 + s
				header("refs/heads/side", m, "side commit " s)
				printf "from :%d\n", s == 1 ? at : m - 1
				touch(files - 1 - (s % 40))
				printf "\n"
			}
		}
	}
	header("refs/heads/main", commits + 1, "merge side")
	printf "from :%d\nmerge :%d\n", commits, 100000 + side
	touch(0)
	printf "\n"
}' >"$rw_tmp/stream"
git -C "$repo" fast-import --quiet <"$rw_tmp/stream"
rm -f "$rw_tmp/stream"
git -C "$repo" fsck --full --no-progress || rw_fail "the generated repository is not sound"
count=$(git -C "$repo" rev-list --all | wc -l)
[ "$count" -eq "$expected" ] || rw_fail "generated $count commits, not $expected"
git -C "$repo" cat-file --batch-all-objects --batch-check | sort >"$rw_tmp/objects.before"
objects=$(wc -l <"$rw_tmp/objects.before")
echo "generated: $count commits, $objects objects, $(du -sk "$repo/.git/objects" | cut -f1) KiB of objects"

rw_probe git git --version

echo "--- git -c pack.threads=4 repack -adf"
start=$(date +%s.%N)
rc=0
rw_preload repack 120 git -C "$repo" -c pack.threads=4 repack -adf -q || rc=$?
[ "$rc" -eq 0 ] || rw_fail "git repack under LD_PRELOAD exited with $rc"
t_repack=$(rw_elapsed "$start")
# pack-objects' delta-search threads (git binds lazily: these were called;
# every worker signals when its share is done).
rw_bound repack pthread_mutex_init pthread_mutex_lock pthread_mutex_unlock pthread_cond_init pthread_cond_signal

git -C "$repo" fsck --full --no-progress || rw_fail "git fsck --full after the repack"
count=$(git -C "$repo" rev-list --all | wc -l)
[ "$count" -eq "$expected" ] || rw_fail "after the repack: $count commits, not $expected"
git -C "$repo" cat-file --batch-all-objects --batch-check | sort >"$rw_tmp/objects.after"
cmp -s "$rw_tmp/objects.before" "$rw_tmp/objects.after" || {
	diff "$rw_tmp/objects.before" "$rw_tmp/objects.after" | head -20
	rw_fail "the objects after the repack are not those before it"
}
packs=$(find "$repo/.git/objects/pack" -name '*.pack' | wc -l)
loose=$(git -C "$repo" count-objects | cut -d' ' -f1)
{ [ "$packs" -eq 1 ] && [ "$loose" -eq 0 ]; } || rw_fail "after repack -ad: $packs packs and $loose loose objects, expected 1 and 0"
# verify-pack -v: "name type size size-in-pack offset [depth base-name]".
deltas=$(git -C "$repo" verify-pack -v "$repo"/.git/objects/pack/*.idx | awk 'NF == 7 && $7 ~ /^[0-9a-f]+$/ { n++ } END { print n + 0 }')
[ "$deltas" -gt 0 ] || rw_fail "the repacked pack has no deltas: the delta search did not run"
echo "ok: repack in ${t_repack}s: $count commits, $objects objects in one pack, $deltas of them deltas"

echo "--- git -c pack.threads=4 clone --no-local"
start=$(date +%s.%N)
rc=0
rw_preload clone 120 git -c pack.threads=4 clone -q --no-local "$repo" "$clone" || rc=$?
[ "$rc" -eq 0 ] || rw_fail "git clone under LD_PRELOAD exited with $rc"
t_clone=$(rw_elapsed "$start")
# index-pack's delta-resolving threads.
rw_bound clone pthread_mutex_init pthread_mutex_lock pthread_mutex_unlock
git -C "$clone" fsck --full --no-progress || rw_fail "git fsck --full of the clone"
count=$(git -C "$clone" rev-list --all | wc -l)
[ "$count" -eq "$expected" ] || rw_fail "the clone has $count commits, not $expected"
[ "$(git -C "$clone" rev-parse 'origin/main^{tree}' 'origin/side^{tree}')" = "$(git -C "$repo" rev-parse 'main^{tree}' 'side^{tree}')" ] ||
	rw_fail "the clone's trees differ from the repository's"
echo "ok: clone in ${t_clone}s: $count commits, same trees"

echo "PASS: git repack and clone with 4 pack threads: $expected commits and all $objects objects intact"
