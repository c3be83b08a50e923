# Benchmark scenario inside the guest: the same workloads under EEVDF, then under a
# scheduler, in one boot. Prints "BENCH <label> <metric> ..." lines for bench/report.py.
#   scenario.sh SECONDS SCHEDULER [ARGS...]
. /scxkit/lib.sh
secs=$1; shift
ncpu=$(nproc)
# Histogram range of cyclictest, in microseconds; later samples count as overflows.
HIST_MAX_US=100000

suite() {
    local label=$1 i
    echo "==== $label: wakeup latency of a 1 ms SCHED_OTHER task under $ncpu CPU hogs (${secs} s)"
    stress-ng --cpu "$ncpu" --timeout "$((secs + 3))s" --quiet & local hogs=$!
    sleep 2
    cyclictest --policy=other -i 1000 -D "${secs}" -q -m -h "$HIST_MAX_US" 2>&1 \
        | grep -v ' 000000$' | sed "s/^/BENCH $label cyclictest /"
    wait "$hogs"
    echo "==== $label: hackbench, 3 runs"
    for i in 1 2 3; do
        hackbench -g 4 -f 10 -l 200 2>&1 | grep '^Time' | sed "s/^/BENCH $label hackbench /"
    done
    echo "==== $label: stress-ng CPU throughput (${secs} s)"
    stress-ng --cpu "$ncpu" --cpu-method int64 --timeout "${secs}s" --metrics-brief 2>&1 \
        | grep -E ' cpu +[0-9]' | sed "s/^/BENCH $label throughput /"
}

suite eevdf
"$@" > /tmp/sched.log 2>&1 &
pid=$!
wait_for 60 is_enabled || { echo "the scheduler did not load"; cat /tmp/sched.log; exit 1; }
suite "$1"
kill -INT "$pid"; wait "$pid"; rc=$?
is_enabled && { echo "the scheduler is still loaded"; exit 1; }
tail -n 3 /tmp/sched.log
exit $rc
