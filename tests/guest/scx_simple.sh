# vm: --tcg-threads single
# kernels: 7.3
# Guest integration test of scx_simple and of the runtime every scheduler shares (run by
# tests/guest.sh inside the QEMU guest): bad input, load, monitor, hotplug followed without
# a restart, the hotplug race at attach, a short slice under hogs present at attach, a watchdog stall with
# its debug dump, clean exit.
. /scxkit/lib.sh
LOG=/tmp/scx_simple.log
LAST=$(( $(nproc) - 1 ))

expect_refused "unknown option refused" "unexpected argument '--no-such-option'" \
    scx_simple --no-such-option
expect_refused "invalid value refused" "invalid value 'fast' for '--slice-us" \
    scx_simple --slice-us fast
expect_refused "out-of-range value refused" "--stats" scx_simple --stats 0
expect_refused "a too short exit dump refused" "--exit-dump-len" scx_simple --exit-dump-len 10
expect_refused "a watchdog timeout above the kernel's limit refused" "--watchdog-timeout-ms" \
    scx_simple --watchdog-timeout-ms 40000
expect_refused "a watchdog timeout below a few ticks refused" "0 (the kernel's default) or 100 to 30000" \
    scx_simple --watchdog-timeout-ms 1
expect_refused "the monitor says when no scheduler runs" "no scx_simple is running" \
    su nobody -s /bin/sh -c "scx_simple --monitor 1"

# 1. Load, stress, stats, metrics, and a monitor that needs no root.
start_sched "$LOG" scx_simple --stats 1 --enable-prometheus
expect_loaded scx_simple simple "$LOG"
expect_refused "a second scheduler is refused, naming the first" "another sched_ext scheduler is loaded: 'simple'" \
    scx_simple
expect_ext_task scx_simple
expect_survives scx_simple 15 simple
check "stats lines are printed" grep -q "dispatched .*local" "$LOG"
expect_prometheus scx_simple 'dispatched_tasks_total{scheduler="scx_simple",type="shared"}'
su nobody -s /bin/sh -c "timeout 5 scx_simple --monitor 1" > /tmp/monitor.log 2>&1
lines=$(count_matches /tmp/monitor.log "^dispatched [0-9]*: local")
if [ "$lines" -ge 2 ]; then pass "scx_simple --monitor prints the stats line live as nobody ($lines lines)"
else fail "scx_simple --monitor as nobody" "$(head -n 5 /tmp/monitor.log)"; fi
# Polling twice as fast as the scheduler samples: each reading once, never a false zero. A
# stopped scheduler does not answer: the monitor says so, waits, and goes on after SIGCONT.
su nobody -s /bin/sh -c "timeout 16 scx_simple --monitor 0.5" > /tmp/monitor2.log 2>&1 &
sleep 4; kill -STOP "$SCHED_PID"; sleep 6; kill -CONT "$SCHED_PID"; sleep 7
zero=$(count_matches /tmp/monitor2.log "^dispatched 0:")
after=$(sed -n '/does not answer/,$p' /tmp/monitor2.log | grep -c "^dispatched [1-9]")
if [ "$zero" -eq 0 ] && grep -q "scx_simple does not answer" /tmp/monitor2.log && [ "$after" -ge 1 ] \
        && ! grep -q "stopped" /tmp/monitor2.log; then
    pass "--monitor 0.5: no repeated readings, waits while the scheduler is stopped, goes on after ($after lines)"
else fail "--monitor through a stopped scheduler" "zero lines $zero, after $after: $(cat /tmp/monitor2.log | head -n 12)"; fi

# 2. Hotplug: scx_simple follows a CPU going offline and online without a restart; a run
# of events is tests/guest/hotplug.sh's. A stopped scheduler (above) came first: the hang
# seen once on a fresh machine followed the same steps.
expect_hotplug_followed scx_simple simple "$LOG"
expect_clean_exit scx_simple "$LOG"

# 3. A CPU goes offline between reading the topology and attaching: the kernel must refuse
# the stale attach (ops.hotplug_seq) and the runtime load again on the new topology.
LOG3=/tmp/scx_simple-3.log
start_sched "$LOG3" env SCXKIT_TEST_DELAY_LOAD_MS=3000 scx_simple
wait_for 60 grep -q "waiting 3000 ms before loading" "$LOG3"
set_cpu_online "$LAST" 0
if wait_for 60 grep -q "asked for a restart.*hotplug seq" "$LOG3" && wait_for 60 is_enabled; then
    pass "a hotplug between reading the topology and attaching makes the kernel ask for a restart ($(grep -o 'expected hotplug seq.*' "$LOG3" | head -n 1))"
else
    fail "hotplug between topology and attach" "state $(sched_state); log: $(tail -n 5 "$LOG3")"
fi
# Loaded again without CPU $LAST, scx_simple follows it coming online (Hotplug::Follows): no
# second restart.
seq3=$(enable_seq) followed3=$(count_matches "$LOG3" "followed without a restart")
set_cpu_online "$LAST" 1
if wait_for 10 sh -c "[ \$(grep -c 'followed without a restart' $LOG3) -gt $followed3 ]" && is_enabled \
        && [ "$(enable_seq)" = "$seq3" ] && [ "$(count_matches "$LOG3" "asked for a restart")" = 1 ]; then
    pass "scx_simple, loaded again without CPU $LAST, follows it coming online (enable_seq $seq3 unchanged)"
else
    fail "scx_simple follows a CPU absent at load coming online" "enable_seq $seq3 -> $(enable_seq), state $(sched_state); log: $(tail -n 4 "$LOG3")"
fi
scx_simple --monitor 1 > /tmp/monitor3.log 2>&1 & mon=$!
sleep 3
expect_clean_exit scx_simple "$LOG3"
if wait_for 15 sh -c "! kill -0 $mon"; then
    wait "$mon"; rc=$?
    if [ "$rc" -eq 0 ] && grep -q "scx_simple stopped" /tmp/monitor3.log; then pass "--monitor stops with the scheduler, status 0"
    else fail "--monitor stops with the scheduler" "rc=$rc: $(tail -n 3 /tmp/monitor3.log)"; fi
else fail "--monitor stops with the scheduler" "still running 15 s later"; kill "$mon"; fi

# 4. A short slice. A bursty task alone on its CPU overruns its 1 ms slice, which the
# kernel then refills with its own default (nothing else waits), and blocks with most of that
# left: charging "slice given minus slice left" wrapped there and threw its vtime so far
# ahead that, once hogs fill every CPU, it never ran again (until the watchdog fired).
LOG4=/tmp/scx_simple-4.log
start_sched "$LOG4" scx_simple --slice-us 1000 --stats 1
expect_loaded scx_simple simple "$LOG4"
stress-ng --cpu 1 --cpu-load 50 --cpu-load-slice 5 --timeout 150s --quiet & bursty=$!
sleep 3
stress-ng --cpu $((2 * $(nproc))) --timeout 150s --quiet & hogs=$!
sleep 5
workers=$(pidof stress-ng | tr ' ' '\n' | grep -v -e "^$hogs\$" -e "^$bursty\$")
starved=""
for p in $workers; do eval "t0_$p=\$(stat_field $p 14)"; done
sleep 5
for p in $workers; do
    eval "t0=\$t0_$p"; t1=$(stat_field "$p" 14)
    [ -n "$t1" ] && [ "$t1" -le "$t0" ] && starved="$starved $p"
done
# The queue's vtime over the last stats lines (one a second): nice-0 tasks make it grow by
# at most the CPUs' time together; a wrapped charge makes it jump by about 1.8e8 s.
first=$(grep -o 'vtime [0-9.]* s' "$LOG4" | tail -n 6 | head -n 1 | cut -d' ' -f2 | cut -d. -f1)
last=$(grep -o 'vtime [0-9.]* s' "$LOG4" | tail -n 1 | cut -d' ' -f2 | cut -d. -f1)
if [ -n "$first" ] && [ $((last - first)) -le $((2 * 5 * $(nproc))) ]; then
    pass "--slice-us 1000: the queue's vtime grew by $((last - first)) s in 5 s on $(nproc) CPUs"
else
    fail "--slice-us 1000: the queue's vtime follows CPU time" "from '$first' to '$last' s in 5 s: $(tail -n 2 "$LOG4")"
fi
if [ -z "$starved" ] && kill -0 "$SCHED_PID" && is_enabled; then
    pass "--slice-us 1000: each of $(echo $workers | wc -w) stress workers (a bursty one, hogs) ran in a 5 s window, scheduler loaded"
else
    fail "--slice-us 1000 with a bursty task, then hogs" "starved:$starved state $(sched_state); log: $(tail -n 3 "$LOG4")"
fi
expect_clean_exit scx_simple "$LOG4"

# 5. A watchdog stall (1 s slices, 0.5 s watchdog, more hogs than CPUs): the kernel ejects
# the scheduler; it exits non-zero and prints the reason and the kernel's debug dump.
LOG5=/tmp/scx_simple-5.log
# The stall may come before a poll of the state sees the scheduler enabled: its log says it
# attached.
start_sched "$LOG5" scx_simple --slice-us 1000000 --watchdog-timeout-ms 500
if wait_for 60 sh -c "! kill -0 $SCHED_PID"; then
    wait "$SCHED_PID"; rc=$?
    if [ "$rc" -ne 0 ] && grep -q "attached; sched_ext is on" "$LOG5" && grep -q "ERROR_STALL" "$LOG5" && grep -q "the kernel's debug dump" "$LOG5" \
            && [ "$(sed -n "/the kernel's debug dump/,/end of dump/p" "$LOG5" | wc -l)" -gt 10 ] && wait_for 10 is_disabled; then
        pass "a stall ejects scx_simple: exit status $rc, reason and a $(sed -n "/the kernel's debug dump/,/end of dump/p" "$LOG5" | wc -l)-line debug dump printed, sched_ext disabled"
    else
        fail "a stall is reported with the debug dump" "rc=$rc state=$(sched_state); log: $(head -n 12 "$LOG5")"
    fi
else
    fail "a stall ejects the scheduler" "still running after 60 s"; kill -KILL "$SCHED_PID"
fi
kill $hogs $bursty 2>/dev/null; wait $hogs $bursty 2>/dev/null
echo "---- scx_simple logs ----"; tail -n 6 "$LOG"; tail -n 4 "$LOG3"; tail -n 4 "$LOG4"; head -n 30 "$LOG5"
finish
