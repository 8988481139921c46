#!/bin/bash
# Counts, not timings: per operation, the futex calls (perf's
# syscalls:sys_enter_futex) and the sleeps (voluntary context switches)
# of the rt-bench workloads, with the library and with NPTL in the same
# test, three interleaved runs each, medians compared.  Timings on a
# shared VM vary several-fold between identical runs; these counts move by
# a few percent, so each bound below can be tight enough to catch the
# regressions it names.
#
# Bounds (library median against NPTL's median):
#   pi-lockunlock      futex calls per lock/unlock pair <= 0.25 x NPTL:
#                      two threads taking turns on a PI mutex stay in user
#                      space (the bounded spin before FUTEX_LOCK_PI) where
#                      NPTL queues in the kernel; a kernel hand-off convoy
#                      makes as many calls as NPTL or more.
#   pi-lockunlock -i   the same with a thread that takes the low-priority
#                      locker's core for 20 us of every ms: the longest run
#                      of consecutive pairs over 4 us <= 50.  An
#                      interruption that catches the owner inside its
#                      critical section costs one or a few slow pairs (1-20
#                      here, the host's own preemptions included); a locker
#                      that queued whenever it found FUTEX_WAITERS in the
#                      word kept the pair in a convoy of kernel hand-offs
#                      until the next interruption, 108-223 pairs (NPTL:
#                      112-230).  A count of pairs, not a time: a convoy
#                      pair is two system calls, over 4 us on this host.
#                      Futex calls are not bounded here: the host's own
#                      preemptions of the owner's vCPU move them tenfold.
#   normal-lockunlock  futex calls per pair <= 1.2 x NPTL + 0.05 (no spin
#                      by default: both sleep and wake the same way).  Few
#                      pairs contend here: NPTL's own median moves
#                      between 0.006 and 0.045 from run to run, so the
#                      bound takes that spread; a wake or a sleep on every
#                      pair (1 or more) still fails it.
#   uncontended        no futex call per pair: at most NPTL's count + 20
#                      over the whole run (thread start and join).
#   cond-perf          futex calls per round <= 1.0 x NPTL and sleeps per
#                      round <= 1.15 x NPTL: an unheld broadcast wakes every
#                      waiter in one call, as NPTL's does, instead of a
#                      chain of wake-ups that each cost a sleep.
#   cond-perf -k       futex calls per round <= 0.7 x NPTL and sleeps per
#                      round <= 1.0 x NPTL (held broadcast: requeue, then
#                      the broadcaster's unlock wakes every moved waiter in
#                      one call, and each takes the mutex back as a new
#                      locker, so its unlock makes no call: 0.53-0.56 x
#                      NPTL's calls; each sleeps about once, 11.0 against
#                      NPTL's 11.6-14.9).  Moved waiters that took the
#                      mutex as contended made one wake call each that
#                      woke nobody, 0.87-0.91 x NPTL's calls; a chain of
#                      one wake-up per unlock made 1.4 x and slept
#                      12.9-13.0 times.
#   herd               futex calls per round <= 0.6 x NPTL and sleeps per
#                      round <= 0.8 x NPTL: moved waiters woken together
#                      once the mutex is free run into it far less often
#                      than NPTL's herd, woken while it is held, and take
#                      it back without a wake call each (0.40 and 0.56
#                      here; taken as contended, 0.74 and 0.56; the chain
#                      made 1.10-1.19 and 0.68).
# NPTL's own counts for the last two move with the load on the other CPU
# (by a quarter between a quiet and a busy machine here): their bounds
# leave that room.
#   spurious           spurious returns per 1000 waits <= 1.2 x NPTL + 20
#                      (producers, consumers, deadlines, a signal storm).
#                      The same bound for a trickle (one producer
#                      pausing after every item, 8 consumers, the storm),
#                      with a default mutex and with a PI one: a signal
#                      claims one waiter's record, so the others sleep on
#                      (0.9-3.4 and 0.8-2.6 here, NPTL 4-28 and 5-27).
#                      And on a process-shared condition and mutex,
#                      where a waiter returns 0 only with a signal's
#                      token (7-18 here, NPTL 10-34; counting waiters
#                      without tokens gave 616-630).
#                      In the trickle with a default and a PI mutex,
#                      waits passed over (one ended with nothing while a
#                      waiter that came after it was served) per 1000
#                      items <= 0.1 x NPTL + 5: a handler that interrupts
#                      a sleep sends its waiter to the back of the
#                      kernel's queue, but not its record to the back of
#                      ours (0-1.5 here, NPTL 468-495; a record queued
#                      ahead of the equal ones: 1024-1030).  A process-shared
#                      condition wakes through the kernel's queue, as
#                      NPTL does, and is not bounded here.
#   channels global    FUTEX_LOCK_PI calls per 1000 reads <= 10 (NPTL
#                      makes none: its condition has no lock).  32
#                      readers of one condition, woken together by
#                      every broadcast, each going back to wait: the
#                      condition's own PI lock is contended only now and
#                      then (0.6-4.1 here).  Woken waiters that took it
#                      whenever they found it held formed a chain of
#                      kernel hand-offs on it: 54-70 here, and a p99.9 read
#                      latency 1.5-2x NPTL's.
#   barrier            futex calls per pthread_barrier_wait <= 1.02 x NPTL
#                      (2, 8 and 32 threads): one FUTEX_WAIT per waiter and
#                      one wake per round, as NPTL (1.000 x here).  A
#                      futex word that every arrival changes fails the
#                      waits of threads going to sleep meanwhile with
#                      EAGAIN, to be made again: 1.07-1.15 x.
# Per-operation futex calls come from two run lengths, so that thread
# start and exit cancel out.  Needs perf with the syscalls tracepoints and
# SCHED_FIFO (lockunlock): without them it skips, and under CI=true fails.
# Env: RTPTHREAD_LIB, BUILD_DIR.
set -u
lib=${RTPTHREAD_LIB:?RTPTHREAD_LIB not set}
build=${BUILD_DIR:?BUILD_DIR not set}
top=$(cd "$(dirname "$0")/../.." && pwd)
make -s -C "$top" BUILD="$build" rt-bench >/dev/null || { echo "FAIL: building rt-bench"; exit 1; }

. "$(dirname "$0")/lib.sh"
command -v perf >/dev/null || skip "no perf"
perf stat -x, -e syscalls:sys_enter_futex -o /dev/null -- true 2>/dev/null ||
	skip "perf cannot count syscalls:sys_enter_futex here"
chrt -f 1 true 2>/dev/null || skip "SCHED_FIFO refused"

exec python3 - "$lib" "$build/rt-bench" <<'EOF'
import os, re, statistics, subprocess, sys, tempfile

lib, bindir = sys.argv[1], sys.argv[2]
failures = []

def run(argv, preload, ops=None):
    """(stdout, futex calls) of one run; ops: a perf filter on the call's op."""
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    if preload:
        env["LD_PRELOAD"] = lib
    event = ["-e", "syscalls:sys_enter_futex"] + (["--filter", ops] if ops else [])
    with tempfile.NamedTemporaryFile("r") as f:
        p = subprocess.run(["perf", "stat", "-x,", "-o", f.name] + event + ["--"]
                           + argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=120)
        counts = [int(l.split(",")[0]) for l in f.read().splitlines() if "sys_enter_futex" in l]
    if p.returncode != 0 or not counts:
        sys.exit("FAIL: %s exited %d\n%s" % (" ".join(argv), p.returncode, p.stdout[-2000:]))
    return p.stdout, counts[0]

def metric(out, name):
    m = re.search(r"^metric %s (\S+)$" % re.escape(name), out, re.M)
    return float(m.group(1))

def pairs(out):
    return int(re.search(r"^# pairs (\d+)$", out, re.M).group(1))

def median3(sample):
    """Three interleaved runs of sample(preload) for each side: medians."""
    nptl, ours = [], []
    for _ in range(3):
        nptl.append(sample(False))
        ours.append(sample(True))
    return statistics.median(nptl), statistics.median(ours), nptl, ours

def check(what, nptl, ours, bound, runs):
    ratio = ours / nptl if nptl else float("inf") if ours else 1.0
    ok = ours <= bound
    print("%-4s %-44s NPTL %9.4g  rtpthread %9.4g  ratio %5.2f  bound %9.4g  runs %s"
          % ("ok" if ok else "FAIL", what, nptl, ours, ratio, bound, runs))
    if not ok:
        failures.append(what)

def b(prog):
    return os.path.join(bindir, prog)

# Lock/unlock pairs: calls per pair over both threads' pairs.
for kind, factor, slack in (("pi", 0.25, 0.0), ("normal", 1.2, 0.05)):
    def sample(preload, kind=kind):
        out, calls = run([b("lockunlock"), "-t", kind, "-d", "0.6"], preload)
        return calls / max(pairs(out), 1)
    n, o, rn, ro = median3(sample)
    check("%s-lockunlock futex calls/pair" % kind, n, o, max(factor * n + slack, 0.002),
          ["%.5f/%.5f" % x for x in zip(rn, ro)])

def sample(preload):
    out, _ = run([b("lockunlock"), "-t", "pi", "-i", "20", "-d", "0.6"], preload)
    return metric(out, "longest slow run pairs")
n, o, rn, ro = median3(sample)
check("pi-lockunlock -i longest slow run (pairs)", n, o, 50, ["%d/%d" % x for x in zip(rn, ro)])

def per_op(argv_short, argv_long, ops, preload):
    _, a = run(argv_short, preload)
    out, c = run(argv_long, preload)
    return (c - a) / ops, out

# Uncontended: whole-run calls, no per-pair calls allowed.
def sample(preload):
    return run([b("uncontended"), "-d", "0.2"], preload)[1]
n, o, rn, ro = median3(sample)
check("uncontended futex calls (whole run)", n, o, n + 20, list(zip(rn, ro)))

def cond_perf(flags, preload):
    calls, out = per_op([b("cond-perf")] + flags + ["-n", "10", "-r", "200"],
                        [b("cond-perf")] + flags + ["-n", "10", "-r", "2200"], 2000, preload)
    return calls, metric(out, "sleeps/round")

for flags, futex_bound, sleep_bound in (([], 1.0, 1.15), (["-k"], 0.7, 1.0)):
    runs = [(cond_perf(flags, False), cond_perf(flags, True)) for _ in range(3)]
    name = "cond-perf%s" % (" -k" if flags else "")
    if futex_bound:
        n = statistics.median(r[0][0] for r in runs)
        o = statistics.median(r[1][0] for r in runs)
        check(name + " futex calls/round", n, o, futex_bound * n,
              ["%.1f/%.1f" % (r[0][0], r[1][0]) for r in runs])
    n = statistics.median(r[0][1] for r in runs)
    o = statistics.median(r[1][1] for r in runs)
    check(name + " sleeps/round", n, o, sleep_bound * n, ["%.1f/%.1f" % (r[0][1], r[1][1]) for r in runs])

def herd(preload):
    calls, out = per_op([b("herd"), "-n", "32", "-r", "50"], [b("herd"), "-n", "32", "-r", "550"], 500, preload)
    return calls, metric(out, "sleeps/round")
runs = [(herd(False), herd(True)) for _ in range(3)]
for i, (what, factor) in enumerate((("futex calls/round", 0.6), ("sleeps/round", 0.8))):
    n = statistics.median(r[0][i] for r in runs)
    o = statistics.median(r[1][i] for r in runs)
    check("herd " + what, n, o, factor * n, ["%.1f/%.1f" % (r[0][i], r[1][i]) for r in runs])

def sample(preload):
    out, _ = run([b("spurious"), "-n", "30000"], preload)
    return metric(out, "spurious/1000 waits")
n, o, rn, ro = median3(sample)
check("spurious returns/1000 waits", n, o, 1.2 * n + 20, ["%.0f/%.0f" % x for x in zip(rn, ro)])

for name, extra in (("trickle", []), ("PI trickle", ["-P"]), ("process-shared trickle", ["-s"])):
    def sample(preload):
        out, _ = run([b("spurious"), "-c", "8", "-p", "1", "-i", "200", "-n", "2000"] + extra, preload)
        return metric(out, "spurious/1000 waits"), metric(out, "passed over/1000 items")
    runs = [(sample(False), sample(True)) for _ in range(3)]
    for i, what in enumerate(("spurious returns/1000 waits", "passed over/1000 items")):
        if i == 1 and "-s" in extra:
            continue
        n = statistics.median(r[0][i] for r in runs)
        o = statistics.median(r[1][i] for r in runs)
        bound = 1.2 * n + 20 if i == 0 else 0.1 * n + 5
        check("%s, %s" % (what, name), n, o, bound, ["%.1f/%.1f" % (r[0][i], r[1][i]) for r in runs])

def sample(preload):
    seconds = 0.6
    # FUTEX_LOCK_PI, private or shared
    out, calls = run([b("channels"), "-v", "global", "-d", str(seconds)], preload, "op == 6 || op == 134")
    return 1000.0 * calls / max(metric(out, "global reads/s") * seconds, 1)
n, o, rn, ro = median3(sample)
check("channels global FUTEX_LOCK_PI calls/1000 reads", n, o, 10, ["%.1f/%.1f" % x for x in zip(rn, ro)])

def sample(preload):
    out, calls = run([b("barrier"), "-d", "0.6"], preload)
    # Every sample is a round; two more rounds per size are not sampled.
    waits = sum(int(n) * (int(k) + 2) for n, k in re.findall(r"^# (\d+) thr (\d+) samples$", out, re.M))
    return calls / max(waits, 1)
n, o, rn, ro = median3(sample)
check("barrier futex calls/wait", n, o, 1.02 * n, ["%.3f/%.3f" % x for x in zip(rn, ro)])

if failures:
    sys.exit("FAIL: %d count(s) over their bound: %s" % (len(failures), ", ".join(failures)))
print("PASS: every count within its bound")
EOF
