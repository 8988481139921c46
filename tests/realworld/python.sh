#!/bin/bash
# CPython under LD_PRELOAD (Debian's python3; its GIL is a pthread mutex
# and condition variable, switched every 0.1 ms here, and sqlite3's own
# locks are pthread mutexes):
#   threading  a bounded buffer on two Conditions of one Lock (4 producers,
#              3 consumers), a queue.Queue pipeline, a Lock-protected
#              counter, RLock re-entry and a Barrier over 1000 rounds; each
#              prints what it computed and the script compares that with
#              the values it computes itself
#   sqlite3    one file database in WAL mode: 4 writer threads, each with
#              its own connection, commit 200 transactions of 10 rows while
#              2 reader threads with their own connections check that every
#              snapshot holds whole transactions only; then 4 threads
#              insert through one shared (serialized) connection.  The rows
#              are counted and summed afterwards by a python3 without the
#              library.
# Env: RTPTHREAD_LIB.  Exit 0 pass, 1 fail, 77 skip (python3 missing).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

rw_need python3 python3
# Debian's interpreter, not a wrapper script that some PATH puts first.
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
echo "python: $py ($("$py" --version 2>&1))"

rw_probe python "$py" -c pass

threading_code=$(
	cat <<'EOF'
import queue, sys, threading

sys.setswitchinterval(0.0001)

def run(target, n, *args):
    ts = [threading.Thread(target=target, args=(i,) + args) for i in range(n)]
    for t in ts:
        t.start()
    return ts

def join(ts):
    for t in ts:
        t.join(60)
        if t.is_alive():
            print("thread hung", flush=True)
            sys.exit(2)

# Bounded buffer: two Conditions sharing one Lock.
PER, N, INCS, ROUNDS = map(int, sys.argv[1:5])
PRODUCERS, CONSUMERS, CAP = 4, 3, 16
lock = threading.Lock()
not_full = threading.Condition(lock)
not_empty = threading.Condition(lock)
buf = []
finished = 0
got = [0] * CONSUMERS
sums = [0] * CONSUMERS

def producer(p):
    global finished
    for i in range(p * PER, (p + 1) * PER):
        with not_full:
            while len(buf) >= CAP:
                not_full.wait()
            buf.append(i)
            not_empty.notify()
    with lock:
        finished += 1
        not_empty.notify_all()

def consumer(c):
    while True:
        with not_empty:
            while not buf and finished < PRODUCERS:
                not_empty.wait()
            if not buf:
                return
            x = buf.pop(0)
            not_full.notify()
        got[c] += 1
        sums[c] += x

ts = run(producer, PRODUCERS) + run(consumer, CONSUMERS)
join(ts)
print("condition", sum(got), sum(sums))

# queue.Queue pipeline: squares computed by 3 workers.
q_in, q_out = queue.Queue(maxsize=8), queue.Queue()

def square(_):
    while True:
        x = q_in.get()
        if x is None:
            return
        q_out.put(x * x)

ts = run(square, 3)
for i in range(N):
    q_in.put(i)
for _ in ts:
    q_in.put(None)
join(ts)
total = 0
for _ in range(N):
    total += q_out.get_nowait()
print("queue", N, total)

# Lock counter and RLock re-entry.
THREADS = 8
counter = 0
rlock = threading.RLock()
nested = 0

start = threading.Barrier(THREADS)

def incr(_):
    global counter, nested
    start.wait(30)
    for i in range(INCS):
        with lock:
            counter += 1
        if i % 100 == 0:
            with rlock:
                with rlock:
                    nested += 1

join(run(incr, THREADS))
print("lock", counter, nested)

# Barrier: every party must see all parties' arrivals for the round.
PARTIES = 5
barrier = threading.Barrier(PARTIES)
arrived = [0] * ROUNDS
errors = 0
leaders = 0

def party(_):
    global errors, leaders
    for r in range(ROUNDS):
        with lock:
            arrived[r] += 1
        if barrier.wait(30) == 0:
            with lock:
                leaders += 1
        with lock:
            if arrived[r] != PARTIES:
                errors += 1

join(run(party, PARTIES))
print("barrier", sum(arrived), leaders, errors)
EOF
)

sqlite_code=$(
	cat <<'EOF'
import sqlite3, sys, threading

path = sys.argv[1]
TXS, SHARED_ROWS = map(int, sys.argv[2:4])
WRITERS, READERS, ROWS = 4, 2, 10
SHARED_THREADS = 4

def connect(**kw):
    con = sqlite3.connect(path, timeout=60, isolation_level=None, **kw)
    con.execute("PRAGMA synchronous=NORMAL")
    return con

con = connect()
print("journal_mode", con.execute("PRAGMA journal_mode=WAL").fetchone()[0])
con.execute("CREATE TABLE t (writer INTEGER, seq INTEGER, v INTEGER, PRIMARY KEY (writer, seq))")
con.execute("CREATE TABLE t2 (thread INTEGER, seq INTEGER, v INTEGER)")
con.close()

stop = threading.Event()
bad = []
reads = [0] * READERS
failed = []

def writer(w):
    try:
        con = connect()
        for tx in range(TXS):
            con.execute("BEGIN IMMEDIATE")
            con.executemany("INSERT INTO t VALUES (?, ?, ?)",
                            [(w, tx * ROWS + i, w * 1000000 + tx * ROWS + i) for i in range(ROWS)])
            con.execute("COMMIT")
        con.close()
    except Exception as e:
        failed.append("writer %d: %r" % (w, e))

def reader(r):
    try:
        con = connect()
        last = 0
        while True:
            final = stop.is_set()
            n = con.execute("SELECT count(*) FROM t").fetchone()[0]
            if n % ROWS or n < last:
                bad.append((last, n))
            last = n
            reads[r] += 1
            if final:
                break
        con.close()
    except Exception as e:
        failed.append("reader %d: %r" % (r, e))

ws = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
rs = [threading.Thread(target=reader, args=(r,)) for r in range(READERS)]
for t in ws + rs:
    t.start()
for t in ws:
    t.join(120)
stop.set()
for t in rs:
    t.join(120)
if any(t.is_alive() for t in ws + rs):
    print("thread hung", flush=True)
    sys.exit(2)
print("snapshots", "bad" if bad else "whole", "failed" if failed else "none", *failed)
print("reads", "some" if all(reads) else "none")

shared = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
shared.execute("PRAGMA synchronous=NORMAL")

def inserter(i):
    try:
        for s in range(SHARED_ROWS):
            shared.execute("INSERT INTO t2 VALUES (?, ?, ?)", (i, s, i * 1000 + s))
    except Exception as e:
        failed.append("inserter %d: %r" % (i, e))

ts = [threading.Thread(target=inserter, args=(i,)) for i in range(SHARED_THREADS)]
for t in ts:
    t.start()
for t in ts:
    t.join(120)
shared.close()
print("shared", "failed" if failed else "none", *failed)
EOF
)

verify_code=$(
	cat <<'EOF'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
print("integrity", con.execute("PRAGMA integrity_check").fetchone()[0])
print("t", *con.execute("SELECT count(*), count(DISTINCT writer), sum(v) FROM t").fetchone())
print("t2", *con.execute("SELECT count(*), count(DISTINCT thread), sum(v) FROM t2").fetchone())
EOF
)

# compare NAME EXPECTED ACTUAL
compare() {
	if [ "$2" != "$3" ]; then
		echo "expected:"
		printf '%s\n' "$2" | sed 's/^/  /'
		echo "got:"
		printf '%s\n' "$3" | sed -n 1,40p | sed 's/^/  /'
		rw_fail "$1: wrong result"
	fi
	echo "ok: $1:"
	printf '%s\n' "$3" | sed 's/^/  /'
}

echo "--- threading"
p=4 per=20000 n=20000 threads=8 incs=50000 parties=5 rounds=1000
items=$((p * per))
expected="condition $items $((items * (items - 1) / 2))
queue $n $(((n - 1) * n * (2 * n - 1) / 6))
lock $((threads * incs)) $((threads * incs / 100))
barrier $((parties * rounds)) $rounds 0"
start=$(date +%s.%N)
rc=0
rw_preload threading 90 "$py" -c "$threading_code" "$per" "$n" "$incs" "$rounds" >"$rw_tmp/out" 2>&1 || rc=$?
# (At most 100 lines kept: a runaway program cannot fill memory.)
got=$(sed -n 1,100p "$rw_tmp/out")
[ "$rc" -eq 0 ] || {
	printf '%s\n' "$got" | sed -n 1,40p
	rw_fail "threading: python3 exited with $rc"
}
echo "threading: $(rw_elapsed "$start")s"
# (The GIL's timed wait is called only where two threads want the GIL at
# once, which a loaded machine that runs them one after the other may not
# bring about: not required.)
rw_bound threading pthread_mutex_lock pthread_mutex_unlock pthread_cond_signal
compare threading "$expected" "$got"

echo "--- sqlite3"
db=$rw_tmp/test.db
txs=200 shared_rows=500
start=$(date +%s.%N)
rc=0
rw_preload sqlite 120 "$py" -c "$sqlite_code" "$db" "$txs" "$shared_rows" >"$rw_tmp/out" 2>&1 || rc=$?
# (At most 100 lines kept: a runaway program cannot fill memory.)
got=$(sed -n 1,100p "$rw_tmp/out")
[ "$rc" -eq 0 ] || {
	printf '%s\n' "$got" | sed -n 1,40p
	rw_fail "sqlite3: python3 exited with $rc"
}
echo "sqlite3: $(rw_elapsed "$start")s"
# libsqlite3's own mutexes (lazy binding: called) besides the GIL's.
rw_bound sqlite pthread_mutex_lock pthread_mutex_unlock pthread_mutexattr_settype
compare "sqlite3 (threads)" "journal_mode wal
snapshots whole none
reads some
shared none" "$got"
got=$(rw_plain 60 "$py" -c "$verify_code" "$db")
# t: writer w's rows have v = w * 1000000 + seq, seq < rows; t2: thread
# i's have v = i * 1000 + seq, seq < shared_rows.
rows=$((txs * 10)) sr=$shared_rows
compare "sqlite3 (database, read without the library)" "integrity ok
t $((4 * rows)) 4 $((rows * 1000000 * (0 + 1 + 2 + 3) + 4 * rows * (rows - 1) / 2))
t2 $((4 * sr)) 4 $((sr * 1000 * (0 + 1 + 2 + 3) + 4 * sr * (sr - 1) / 2))" "$got"

echo "PASS: CPython threading and sqlite3 from threads give the expected results"
