# Benchmark scenario inside the guest: the same workloads under EEVDF, then under a
# scheduler, in one boot. Prints "BENCH <label> <metric> ..." lines for bench/report.py.
#   scenario.sh SECONDS SCHEDULER [ARGS...]
. /scxkit/lib.sh
secs=$1; shift
ncpu=$(nproc)
# Histogram range of cyclictest, in microseconds; later samples count as overflows.
HIST_MAX_US=100000
# Shell commands timed per scheduler: enough for a p99.
SHELL_RUNS=150

suite() {
    local label=$1 i
    echo "==== $label: wakeup latency of a 1 ms SCHED_OTHER task under $ncpu CPU hogs (${secs} s)"
    stress-ng --cpu "$ncpu" --timeout "$((secs + 3))s" --quiet & local hogs=$!
    sleep 2
    cyclictest --policy=other -i 1000 -D "${secs}" -q -m -h "$HIST_MAX_US" 2>&1 \
        | grep -v ' 000000$' | sed "s/^/BENCH $label cyclictest /"
    wait "$hogs"
    echo "==== $label: latency of a shell command (uname -r, every 30 ms, $SHELL_RUNS runs) under $ncpu CPU hogs and a fork storm"
    stress-ng --cpu "$ncpu" --fork 2 --timeout 600s --quiet & hogs=$!
    sleep 2
    scxkit-probe run-latency --count "$SHELL_RUNS" --interval-ms 30 -- uname -r | sed "s/^/BENCH $label shell /"
    kill "$hogs"; wait "$hogs" 2>/dev/null
    echo "==== $label: hackbench, 3 runs"
    for i in 1 2 3; do
        hackbench -g 4 -f 10 -l 200 2>&1 | grep '^Time' | sed "s/^/BENCH $label hackbench /"
    done
    echo "==== $label: stress-ng CPU throughput (${secs} s)"
    stress-ng --cpu "$ncpu" --cpu-method int64 --timeout "${secs}s" --metrics-brief 2>&1 \
        | grep -E ' cpu +[0-9]' | sed "s/^/BENCH $label throughput /"
}

suite eevdf
"$@" --stats 1 > /tmp/sched.log 2>&1 &
pid=$!
wait_for 60 is_enabled || { echo "the scheduler did not load"; cat /tmp/sched.log; exit 1; }
started_us=$(now_us)
suite "$1"
kill -INT "$pid"; wait "$pid"; rc=$?
# A userspace policy's cost: its CPU time and its decisions over the time it was attached.
totals=$(grep "totals:" /tmp/sched.log | tail -n 1)
decisions=$(echo "$totals" | sed -n 's/.*: user \([0-9]*\) .*/\1/p')
cpu_ms=$(echo "$totals" | sed -n 's/.* cpu \([0-9]*\) ms.*/\1/p')
[ -n "$decisions" ] && [ -n "$cpu_ms" ] &&
    echo "BENCH $1 overhead $decisions $cpu_ms $(( ($(now_us) - started_us) / 1000 ))"
is_enabled && { echo "the scheduler is still loaded"; exit 1; }
tail -n 3 /tmp/sched.log
exit $rc
