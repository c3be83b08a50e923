# vm: --cpus 1 --nodes 1 --icount
# scx_bpfland on one CPU in the reproducible mode (see VM.md): the kernel skips select_cpu
# for a task allowed on one CPU, so a waking interactive task must be allowed to preempt
# from enqueue alone. A 4 ms periodic SCHED_OTHER task under two CPU hogs: its wakeup
# latency, under EEVDF and then under scx_bpfland, in the same boot.
. /scxkit/lib.sh
LOG=/tmp/scx_bpfland-1cpu.log
PERIOD_US=4000
LOOPS=750

# avg_latency_us: cyclictest's average wakeup latency of one periodic SCHED_OTHER thread
# (no -p: with one, cyclictest makes the thread real-time, outside sched_ext). Prints
# nothing when the thread did not run as SCHED_OTHER (priority field not 0).
avg_latency_us() {
    cyclictest -q -t 1 --policy=other -i "$PERIOD_US" -l "$LOOPS" -m 2>/dev/null \
        | sed -n 's/.* P: *0 .* Avg: *\([0-9]*\).*/\1/p' | tail -n 1
}

stress-ng --cpu 2 --timeout 120s --quiet & hogs=$!
sleep 1
eevdf=$(avg_latency_us)
echo "EEVDF: average wakeup latency ${eevdf} us"
start_sched "$LOG" scx_bpfland --stats 2
expect_loaded scx_bpfland bpfland "$LOG"
sleep 2
ext=$(avg_latency_us)
echo "scx_bpfland: average wakeup latency ${ext} us"
if [ -n "$ext" ] && [ "$ext" -lt "$PERIOD_US" ]; then
    pass "a 4 ms periodic task under two hogs on one CPU wakes in ${ext} us on average (EEVDF ${eevdf} us)"
else
    fail "a periodic task preempts hogs on one CPU" "average ${ext:-?} us (EEVDF ${eevdf:-?} us); $(tail -n 2 "$LOG")"
fi
check "preemptions counted" grep -q "preempt [1-9]" "$LOG"
kill $hogs; wait $hogs 2>/dev/null

# Six regular hogs under interactive tasks that want more than the CPU (six tasks busy 3 ms
# in every 4): each hog must keep getting turns, at least 10 in 5 s (16 to 59 were seen here;
# a regular queue served only when the interactive one is empty would give none).
start_hogs 6
stress-ng --cpu 6 --cpu-load 75 --cpu-load-slice 3 --timeout 60s --quiet & busy=$!
sleep 3
starved=""
for p in $HOGS; do eval "n0_$p=\$(grep nonvoluntary_ctxt_switches /proc/$p/status | tr -dc 0-9)"; done
sleep 5
turns=""
for p in $HOGS; do
    eval "n0=\$n0_$p"; n1=$(grep nonvoluntary_ctxt_switches "/proc/$p/status" | tr -dc 0-9)
    turns="$turns $((n1 - n0))"
    [ $((n1 - n0)) -lt 10 ] && starved="$starved $p"
done
if [ -z "$starved" ]; then pass "each of six hogs under interactive load got at least 10 turns in 5 s (runs:$turns)"
else fail "each regular task keeps getting turns under interactive load" "runs in 5 s:$turns; $(tail -n 2 "$LOG")"; fi
kill $busy; stop_hogs; wait $busy 2>/dev/null
expect_clean_exit scx_bpfland "$LOG"
tail -n 6 "$LOG"
finish
