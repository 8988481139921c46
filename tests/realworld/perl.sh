#!/bin/bash
# Perl ithreads under LD_PRELOAD (threads::shared's locks and condition
# variables are pthread mutexes and condition variables):
#   queue     a bounded buffer: 3 producers, 3 consumers, cond_wait on two
#             condition variables with the queue's lock, cond_signal
#   pingpong  two threads taking turns 2 x 5000 times with cond_wait and
#             cond_signal on one shared variable
#   counter   4 threads incrementing a shared counter under lock()
# Perl prints what it computed; the script compares it with the values it
# computes itself.
# Env: RTPTHREAD_LIB.  Exit 0 pass, 1 fail, 77 skip (perl missing).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

rw_need perl perl
perl=$(command -v perl)
if ! rw_plain 30 "$perl" -Mthreads -Mthreads::shared -e 1 2>/dev/null; then
	[ "${CI:-}" = true ] && rw_fail "this perl has no threads (Debian's perl has)"
	echo "SKIP: $perl is built without threads"
	exit 77
fi

rw_probe perl "$perl" -Mthreads -Mthreads::shared -e 1

code=$(
	cat <<'EOF'
use strict;
use warnings;
no warnings 'threads';
use threads;
use threads::shared;

my ($per, $turns, $incs) = @ARGV;
my ($producers, $consumers, $cap) = (3, 3, 16);

# Bounded buffer.
my @queue :shared;
my $not_full :shared;
my $not_empty :shared;
my $finished :shared = 0;

sub producer {
    my ($p) = @_;
    for my $i ($p * $per .. ($p + 1) * $per - 1) {
        lock(@queue);
        cond_wait($not_full, @queue) while @queue >= $cap;
        push @queue, $i;
        cond_signal($not_empty);
    }
    lock(@queue);
    $finished++;
    cond_broadcast($not_empty);
    return 0;
}

sub consumer {
    my ($n, $sum) = (0, 0);
    while (1) {
        my $x;
        {
            lock(@queue);
            cond_wait($not_empty, @queue) while !@queue && $finished < $producers;
            if (@queue) {
                $x = shift @queue;
                cond_signal($not_full);
            }
        }
        last unless defined $x;
        $n++;
        $sum += $x;
    }
    return "$n $sum";
}

my @p = map { threads->create(\&producer, $_) } 0 .. $producers - 1;
my @c = map { threads->create(\&consumer) } 1 .. $consumers;
$_->join for @p;
my ($items, $total) = (0, 0);
for (@c) {
    my ($n, $sum) = split / /, $_->join;
    $items += $n;
    $total += $sum;
}
print "queue $items $total\n";

# Ping-pong.
my $turn :shared = 0;
my $moves :shared = 0;

sub player {
    my ($me) = @_;
    for (1 .. $turns) {
        lock($turn);
        cond_wait($turn) while $turn != $me;
        $moves++;
        $turn = 1 - $me;
        cond_signal($turn);
    }
    return 0;
}

$_->join for map { threads->create(\&player, $_) } 0, 1;
print "pingpong $moves $turn\n";

# Counter.
my $counter :shared = 0;
$_->join for map {
    threads->create(sub { for (1 .. $incs) { lock($counter); $counter++ } })
} 1 .. 4;
print "counter $counter\n";
EOF
)

per=4000 turns=5000 incs=20000
items=$((3 * per))
expected="queue $items $((items * (items - 1) / 2))
pingpong $((2 * turns)) 0
counter $((4 * incs))"

start=$(date +%s.%N)
rc=0
rw_preload perl 90 "$perl" -e "$code" "$per" "$turns" "$incs" >"$rw_tmp/out" 2>&1 || rc=$?
# (At most 100 lines kept: a runaway program cannot fill memory.)
got=$(sed -n 1,100p "$rw_tmp/out")
[ "$rc" -eq 0 ] || {
	printf '%s\n' "$got" | sed -n 1,40p
	rw_fail "perl exited with $rc"
}
echo "perl: $(rw_elapsed "$start")s"
rw_bound perl pthread_mutex_lock pthread_mutex_unlock pthread_cond_wait pthread_cond_signal pthread_cond_broadcast
if [ "$got" != "$expected" ]; then
	echo "expected:"
	printf '%s\n' "$expected" | sed 's/^/  /'
	echo "got:"
	printf '%s\n' "$got" | sed -n 1,40p | sed 's/^/  /'
	rw_fail "perl threads: wrong result"
fi
printf '%s\n' "$got" | sed 's/^/  /'
echo "PASS: perl threads::shared queue, ping-pong and counter give the expected results"
