# vm: --cpus 1 --nodes 1 --icount
# kernels: 7.3
# scx_bpfland on one CPU in the reproducible mode (see VM.md): the kernel skips select_cpu
# for a task allowed on one CPU, so a waking interactive task must be allowed to preempt
# from enqueue alone. A 4 ms periodic SCHED_OTHER task under two CPU hogs: its wakeup
# latency, under EEVDF and then under scx_bpfland, in the same boot.
. /scxkit/lib.sh
LOG=/tmp/scx_bpfland-1cpu.log
PERIOD_US=4000
LOOPS=750

stress-ng --cpu 2 --timeout 120s --quiet & hogs=$!
sleep 1
eevdf=$(wake_avg_us "$PERIOD_US" "$LOOPS")
echo "EEVDF: average wakeup latency ${eevdf} us"
start_sched "$LOG" scx_bpfland --stats 2
expect_loaded scx_bpfland bpfland "$LOG"
sleep 2
ext=$(wake_avg_us "$PERIOD_US" "$LOOPS")
echo "scx_bpfland: average wakeup latency ${ext} us"
if [ -n "$ext" ] && [ "$ext" -lt "$PERIOD_US" ]; then
    pass "a 4 ms periodic task under two hogs on one CPU wakes in ${ext} us on average (EEVDF ${eevdf} us)"
else
    fail "a periodic task preempts hogs on one CPU" "average ${ext:-?} us (EEVDF ${eevdf:-?} us); $(tail -n 2 "$LOG")"
fi
check "preemptions counted" grep -q "preempt [1-9]" "$LOG"
kill $hogs; wait $hogs 2>/dev/null

# Six regular hogs under interactive tasks that keep the CPU busy (two groups of four
# workers that each spin 2 ms per request, woken together; classed interactive before the
# hogs start): each hog must keep getting turns,
# at least 10 in 5 s (a regular queue served only when the interactive one is empty would
# give none), and wait at most WAIT_PER_TURN_MAX_MS per turn on average (/proc/PID/schedstat:
# time waiting to run, and turns): 101 ms each was seen here. A bound on the regular queue as
# a whole, one task per 100 ms, let one hog wait 185 ms per turn here, and 370 ms when the
# hogs started first.
WAIT_PER_TURN_MAX_MS=150
scxkit-probe wakeup --groups 2 --workers 4 --work-us 2000 --seconds 20 > /dev/null & busy=$!
sleep 2
start_hogs 6
sleep 3
for p in $HOGS; do eval "s0_$p=\"\$(cat /proc/$p/schedstat)\""; done
sleep 5
starved="" slow="" turns="" waits=""
for p in $HOGS; do
    eval "set -- \$s0_$p"; wait0=$2 turns0=$3
    set -- $(cat "/proc/$p/schedstat"); n=$(($3 - turns0)) wait_ms=$((($2 - wait0) / 1000000))
    per_turn_ms=$((wait_ms / (n > 0 ? n : 1)))
    turns="$turns $n" waits="$waits $per_turn_ms"
    [ "$n" -lt 10 ] && starved="$starved $p"
    [ "$per_turn_ms" -gt "$WAIT_PER_TURN_MAX_MS" ] && slow="$slow $p"
done
if [ -z "$starved" ]; then pass "each of six hogs under interactive load got at least 10 turns in 5 s (turns:$turns)"
else fail "each regular task keeps getting turns under interactive load" "turns in 5 s:$turns; $(tail -n 2 "$LOG")"; fi
if [ -z "$slow" ]; then pass "each of six hogs under interactive load waited at most $WAIT_PER_TURN_MAX_MS ms per turn on average (ms:$waits)"
else fail "each regular task's wait is bounded under interactive load" "ms per turn:$waits; $(tail -n 2 "$LOG")"; fi
kill $busy; stop_hogs; wait $busy 2>/dev/null

# A task of the interactive class that stops sleeping (a kernel thread that sleeps between
# scans, caught in a long one): at nice 19 it is charged 100 times its run, so its first
# slice put its deadline 2 s of vruntime ahead, and behind a stream of interactive wakeups
# the interactive queue's clock took far longer than its 10 s to get there (no turn after
# that first slice). In CI's hotplug storm of 2026-12-02, pid 61 (a kernel thread, ksmd in
# this guest's boots) preempted in an RCU read section did not run for 770 s under scx_bpfland.
# The interactive queue's waits are bounded as the regular queue's are (BPFLAND_MAX_WAIT_MS).
INTERACTIVE_LONGEST_WAIT_MAX_MS=1500
sh -c "$(sleeper_10ms_while '[ ! -e /tmp/low-go ]'); exec scxkit-probe hog --seconds 10" > /tmp/low-hog.txt & low=$!
renice -n 19 -p "$low" >/dev/null
sleep 2
scxkit-probe wakeup --groups 2 --workers 4 --work-us 2000 --seconds 14 > /dev/null & busy=$!
sleep 2
touch /tmp/low-go
wait "$low"; kill "$busy" 2>/dev/null; wait "$busy" 2>/dev/null
low_wait_ms=$(sed -n 's/^hog_longest_wait_ms //p' /tmp/low-hog.txt)
check "an interactive nice-19 task that stops sleeping beside interactive wakeups waits at most $INTERACTIVE_LONGEST_WAIT_MAX_MS ms for a turn: longest ${low_wait_ms:-none} ms, $(sed -n 's/^hog_cpu_ms //p' /tmp/low-hog.txt) ms of CPU in 10 s" \
    [ "${low_wait_ms:-99999}" -le "$INTERACTIVE_LONGEST_WAIT_MAX_MS" ]
expect_clean_exit scx_bpfland "$LOG"
tail -n 6 "$LOG"

# A desktop under a build (the bench's desktop1 mode at four times its base load): four CPU
# hogs and four build job streams (processes forked and exec'd, 20 ms of CPU each), a 60 Hz
# frame loop of 4 ms of CPU per frame, and `uname -r` timed from fork to exit. A task just
# forked used to wait behind every hog, a whole slice each: uname p50 187 ms in the bench at
# this load (EEVDF 35 ms), p90 300 ms here; now 14 to 22 ms in the last runs. The frame loop
# must keep its frames meanwhile: cutting slices to a share of the base slice, alone, made
# it fall behind at its start, never sleep, never be classed interactive, and lose every
# frame. While a build job that slept once early in its life was classed interactive, it ran
# its 20 ms beside the frame loop unpreempted: 1 to 3% of the frames dropped, a frame p99 of
# 10 to 19 ms; and the frame loop, whose first window counted its start-up, was promoted
# only after about 120 ms of late frames. Now frames are late only in the loop's first 100
# ms, about when it is promoted (at its third sleep, after frame 2), waiting behind the
# build's new jobs: frames 0, 2, 3 or 4 late, 0 to 6 frames dropped in eleven runs, none
# late later, and a p99 of 4 to 10 ms. The uname bound leaves room for the emulator's tail
# (one run of many gave 22 ms) and stays far below the old 300 ms.
UNAME_P90_MAX_US=50000
FRAMES_DROPPED_MAX_HUNDREDTHS_PCT=200
FRAME_P99_MAX_US=12000
STARTUP_FRAMES=6
LOG4=/tmp/scx_bpfland-desktop.log
start_sched "$LOG4" scx_bpfland --stats 2
expect_loaded "scx_bpfland (desktop)" bpfland "$LOG4"
start_hogs 4
scxkit-probe build-jobs --parallel 4 --job-cpu-ms 20 --seconds 10 > /tmp/jobs.txt & jobs=$!
sleep 1
scxkit-probe frames --work-us 4000 --seconds 8 > /tmp/frames.txt & frames=$!
scxkit-probe run-latency --count 30 --interval-ms 100 -- uname -r > /tmp/uname.txt
wait "$frames"; wait "$jobs"; stop_hogs
uname_p90=$(sort -n /tmp/uname.txt | sed -n 27p)
dropped=$(sed -n 's/^frames_dropped_pct \([0-9]*\)\.\([0-9][0-9]\).*/\1\2/p' /tmp/frames.txt | sed 's/^0*\(.\)/\1/')
frame_p99_us=$(sed -n 's/^frame_p99_ms \([0-9]*\)\.\([0-9][0-9]\).*/\1\20/p' /tmp/frames.txt | sed 's/^0*\(.\)/\1/')
late_after_start=$(frames_late_from /tmp/frames.txt "$STARTUP_FRAMES")
if [ -n "$uname_p90" ] && [ "$uname_p90" -le "$UNAME_P90_MAX_US" ]; then
    pass "a short command under hogs and a build runs at once: uname p90 $uname_p90 us of 30 runs"
else fail "a short command under hogs and a build runs at once" "uname p90 '${uname_p90:-?}' us; $(tail -n 2 "$LOG4")"; fi
if [ -n "$dropped" ] && [ "$dropped" -le "$FRAMES_DROPPED_MAX_HUNDREDTHS_PCT" ] &&
   [ -n "$frame_p99_us" ] && [ "$frame_p99_us" -le "$FRAME_P99_MAX_US" ] &&
   grep -q '^frames_late ' /tmp/frames.txt && [ -z "$late_after_start" ]; then
    pass "a 60 Hz frame loop under hogs and a build keeps its frames after its first $STARTUP_FRAMES: $(tr '\n' ' ' < /tmp/frames.txt)"
else fail "a 60 Hz frame loop under hogs and a build keeps its frames (none late after its first $STARTUP_FRAMES, at most 2% dropped, p99 12 ms)" "$(tr '\n' ' ' < /tmp/frames.txt)"; fi
check "build jobs completed" grep -q "^build_jobs_per_s [1-9]" /tmp/jobs.txt

# A short command under two hogs and a fork storm (the bench's latency1 mode). A forked task
# starts from its parent's vruntime: when each child of the fork loop started with a long
# sleeper's credit instead, they all went ahead of the command, p90 31 ms in the bench; now
# about 10 ms (EEVDF 18.5 ms).
FORK_STORM_P90_MAX_US=20000
stress-ng --cpu 2 --fork 2 --timeout 60s --quiet & storm=$!
sleep 2
scxkit-probe run-latency --count 60 --interval-ms 30 -- uname -r > /tmp/storm.txt
kill "$storm"; wait "$storm" 2>/dev/null
storm_p90=$(sort -n /tmp/storm.txt | sed -n 54p)
if [ -n "$storm_p90" ] && [ "$storm_p90" -le "$FORK_STORM_P90_MAX_US" ]; then
    pass "a short command under hogs and a fork storm: uname p90 $storm_p90 us of 60 runs"
else fail "a short command under hogs and a fork storm" "uname p90 '${storm_p90:-?}' us; $(tail -n 2 "$LOG4")"; fi

# A longer command (60 ms of CPU, as `ps axuw` on a busy system) under four hogs. What a task
# has run since it last slept counts in its deadline up to five lags (100 ms): when it
# counted up to one lag, the command was level with the hogs after its first 20 ms, and
# shared the CPU with them for the rest: p50 290 ms (277-354); now it goes first for most of
# its run: 125 ms (111-133).
LONG_COMMAND_P50_MAX_US=200000
start_hogs 4
sleep 1
scxkit-probe run-latency --count 5 --interval-ms 300 -- scxkit-probe burn --cpu-ms 60 > /tmp/long.txt
stop_hogs
long_p50=$(sort -n /tmp/long.txt | sed -n 3p)
if [ -n "$long_p50" ] && [ "$long_p50" -le "$LONG_COMMAND_P50_MAX_US" ]; then
    pass "a 60 ms command under four hogs runs first: p50 $long_p50 us of 5 runs"
else fail "a 60 ms command under four hogs runs first" "p50 '${long_p50:-?}' us ($(tr '\n' ' ' < /tmp/long.txt)); $(tail -n 2 "$LOG4")"; fi
expect_clean_exit "scx_bpfland (desktop)" "$LOG4"

# Pipe hand-offs (hackbench) on one CPU: the kernel skips select_cpu for every task here, so
# whether a wakeup is synchronous is unknown. A wakeup from a task (the pipe's writer, which
# sleeps next) must not preempt; one from an interrupt (a timer, above) may. Preempting on
# every such wakeup took 1.78x EEVDF's time in the bench, 0.99x without: 49% of 26,327
# dispatches preempted then, 2 to 4% now (the rest: the timer wakeups).
PREEMPT_SHARE_MAX_PCT=20
within_pct() { # VALUE REFERENCE PCT: both numbers known, and VALUE at most PCT% of REFERENCE
    [ -n "$1" ] && [ -n "$2" ] && [ $(($1 * 100)) -le $(($2 * $3)) ]
}
hackbench_switches() { # the context switches of one hackbench run over pipes (the kernel's
    # count); nothing when hackbench failed
    local before; before=$(sed -n 's/^ctxt //p' /proc/stat)
    hackbench -p -g 10 -l 100 > /dev/null 2>&1 || return 0
    echo $(( $(sed -n 's/^ctxt //p' /proc/stat) - before ))
}
LOG3=/tmp/scx_bpfland-pipes.log
start_sched "$LOG3" scx_bpfland --stats 1
expect_loaded "scx_bpfland (pipes)" bpfland "$LOG3"
hackbench_switches > /dev/null
expect_clean_exit "scx_bpfland (pipes)" "$LOG3"
share=$(sed -n 's/.*totals: .* preempt [0-9]* (\([0-9]*\)\.[0-9]*%).*/\1/p' "$LOG3" | tail -n 1)
if [ -n "$share" ] && [ "$share" -le "$PREEMPT_SHARE_MAX_PCT" ]; then
    pass "pipe hand-offs on one CPU rarely preempt: ${share}% of dispatches"
else
    fail "pipe hand-offs on one CPU do not preempt" "preempt share '${share:-?}'%; $(grep totals "$LOG3")"
fi

# In a crowd the least slice of a regular task grows with the regular tasks waiting
# (--crowd-tasks): 40 hogs on one CPU get 5 ms turns (1 ms x 40 / 8), which the 4 ms tick
# ends at 8 ms: 455 to 471 switches in 3 s in six counts over two loads, against 840 to 842
# at a 1 ms floor (--crowd-tasks 0, one per tick). hackbench's switches follow (the bench's
# hackbench_switches_k) but vary too much from run to run for a bound: in one boot's nine
# runs each, 20,800 to 29,400 at the floor and 13,500 to 21,000 with the default.
CROWD_SWITCHES_MAX_PCT=75
hog_switches() { # the context switches in 3 s of 40 hogs on one CPU (the kernel's count)
    local before
    start_hogs 40 > /dev/null # not holding open the output its caller captures
    sleep 1
    before=$(sed -n 's/^ctxt //p' /proc/stat)
    sleep 3
    echo $(( $(sed -n 's/^ctxt //p' /proc/stat) - before ))
    stop_hogs
}
LOG_FLOOR=/tmp/scx_bpfland-floor.log
start_sched "$LOG_FLOOR" scx_bpfland --stats 2 --crowd-tasks 0
expect_loaded "scx_bpfland (40 hogs, --crowd-tasks 0)" bpfland "$LOG_FLOOR"
floor_switches=$(hog_switches)
expect_clean_exit "scx_bpfland (40 hogs, --crowd-tasks 0)" "$LOG_FLOOR"

# Every task's wait is bounded (BPFLAND_MAX_WAIT_MS, 1 s); without the bound, a nice-19 hog
# behind 40 hogs waited tens of seconds.
LOG5=/tmp/scx_bpfland-nice.log
start_sched "$LOG5" scx_bpfland --stats 2
expect_loaded "scx_bpfland (40 hogs; nice 19 behind them)" bpfland "$LOG5"
crowd_switches=$(hog_switches)
check "40 hogs on one CPU: ${crowd_switches:-failed} context switches in 3 s, at most $CROWD_SWITCHES_MAX_PCT% of the ${floor_switches:-failed} at a 1 ms floor" \
    within_pct "$crowd_switches" "$floor_switches" "$CROWD_SWITCHES_MAX_PCT"
expect_low_weight_turns scx_bpfland 0 5 "$LOG5"
expect_clean_exit "scx_bpfland (40 hogs; nice 19 behind them)" "$LOG5"

# scx_rustland in the same one-CPU boot (a boot of its own would cost the suite a minute):
# wakeups from task to task under hogs wake its policy only at the next scheduling point,
# and a request/response chain (a message thread wakes 4 workers, 200 us of work each) must
# not wait for more. Read only every 1 ms, or when the CPU idled, each hop waited for it:
# p50 4 ms (8 ms before the waker's slice was capped); at every scheduling point 0.5 ms;
# woken for every wakeup (before batching) 0.17 ms.
# Then hackbench's 200 senders, each waking its receivers: a woken receiver waits for its
# sender's slice to end or the sender to sleep, and in such a crowd the least slice grows
# (--crowd-tasks), and so does what a waker keeps of it. With the waker's slice cut to 1 ms
# and a 1 ms floor, each sender was switched out at the next tick: 28,000 to 37,000 switches
# against EEVDF's 112,000 to 121,000 (26%, release, one boot's five runs); 6,000 now (5%).
PIPE_SWITCHES_MAX_PCT_OF_EEVDF=12
eevdf_switches=$(hackbench_switches)
LOG6=/tmp/scx_rustland-1cpu.log
stress-ng --cpu 2 --timeout 60s --quiet & hogs=$!
start_sched "$LOG6" scx_rustland --stats 1
expect_loaded "scx_rustland (one CPU)" rustland "$LOG6"
scxkit-probe wakeup --groups 1 --workers 4 --work-us 200 --seconds 3 > /tmp/wakeup.txt
p50_us=$(sed -n 's/^wakeup_p50_us \([0-9]*\).*/\1/p' /tmp/wakeup.txt)
check "scx_rustland, a request/response chain under 2 hogs on one CPU: wakeup p50 ${p50_us:-none} us (at most 2000)" \
    [ "${p50_us:-999999}" -le 2000 ]
# A 60 Hz frame loop (4 ms of CPU per frame) under the same hogs: a hog queued again at the
# end of its slice is handed over at once. Deferred like a task's wakeup of another, it made
# the frame p99 5.4 to 12.4 ms in four runs (4.2 ms before batching). The current code reads
# 4 to 8 ms in most runs, and 14 and 16 ms in two of the last six (CI and clean-clone suites;
# the rustland frame tail of issue 17), so this bound (20 ms) only holds off a collapse (frames
# lost, a p99 of hundreds of ms), no longer the deferred hand-over.
FRAME_P99_MAX_MS=20
scxkit-probe frames --work-us 4000 --seconds 4 > /tmp/frames.txt
frame_p99=$(sed -n 's/^frame_p99_ms \([0-9]*\).*/\1/p' /tmp/frames.txt)
check "scx_rustland, a 60 Hz frame loop under 2 hogs on one CPU: frame p99 ${frame_p99:-none} ms (at most $FRAME_P99_MAX_MS): $(tr '\n' ' ' < /tmp/frames.txt)" \
    [ "${frame_p99:-999}" -le "$FRAME_P99_MAX_MS" ]
kill "$hogs"; wait "$hogs" 2>/dev/null
# Hogs beside a stream of short forks: three hogs and twelve shells that fork a subshell
# and wait for it, over and over. Each hog must keep getting the CPU. A deadline order whose
# clock moved only with the vruntimes that started starved them: the subshells, placed behind
# the clock, ran and exited without moving it, while each hog waited at its deadline 100 ms
# ahead (9 to 17 ms of CPU per hog in 20 s, waits of 5 to 6 s). The vruntime order gives
# about 210 ms in 10 s and waits up to 245 ms here (up to 316 ms since a crowd's least slice
# grows: 2 ms with 16 waiting); EEVDF about 400 ms and 20 ms.
HOG_LONGEST_WAIT_MAX_MS=1000
HOG_CPU_MIN_MS=100
start_fork_loops 12
for n in 1 2 3; do scxkit-probe hog --seconds 10 > "/tmp/hog$n.txt" & eval "hog$n=\$!"; done
wait "$hog1" "$hog2" "$hog3"
stop_fork_loops
for n in 1 2 3; do
    cpu_ms=$(sed -n 's/^hog_cpu_ms //p' "/tmp/hog$n.txt")
    wait_ms=$(sed -n 's/^hog_longest_wait_ms //p' "/tmp/hog$n.txt")
    check "scx_rustland, hog $n of 3 beside 12 fork loops on one CPU: ${cpu_ms:-no} ms of CPU in 10 s (at least $HOG_CPU_MIN_MS), longest wait ${wait_ms:-none} ms (at most $HOG_LONGEST_WAIT_MAX_MS)" \
        [ "${cpu_ms:-0}" -ge "$HOG_CPU_MIN_MS" -a "${wait_ms:-99999}" -le "$HOG_LONGEST_WAIT_MAX_MS" ]
done
rustland_switches=$(hackbench_switches)
check "scx_rustland, hackbench (200 senders) on one CPU: ${rustland_switches:-failed} context switches, at most $PIPE_SWITCHES_MAX_PCT_OF_EEVDF% of EEVDF's ${eevdf_switches:-failed}" \
    within_pct "$rustland_switches" "$eevdf_switches" "$PIPE_SWITCHES_MAX_PCT_OF_EEVDF"
# The framework bounds a wait in the shared queue (USCHED_MAX_WAIT_MS, 1 s): in vtime order
# alone, the nice-19 hog got no turn in 10 s.
expect_low_weight_turns scx_rustland 0 5 "$LOG6"
expect_clean_exit "scx_rustland (one CPU)" "$LOG6"

# A load beside eight CPU hogs on one CPU: the loading thread runs at nice -20 until attached
# (scxkit-runtime's load_priority), or a restart for hotplug would leave the machine on the
# default scheduler for a fair share's worth of loading time. Measured here with scx_rusty
# (debug): attached 68 s after its start at nice 0, 6 s with the raised priority; on 4 vCPUs
# under 16 hogs, loaded again 79 s after a CPU went at nice 0, 11 s raised.
LOAD_UNDER_HOGS_MAX_S=20
LOG7=/tmp/scx_rusty-1cpu.log
stress-ng --cpu 8 --timeout 300s --quiet & hogs=$!
sleep 1
started_s=$(cut -d. -f1 /proc/uptime)
start_sched "$LOG7" scx_rusty
if wait_for "$LOAD_UNDER_HOGS_MAX_S" is_enabled; then
    pass "scx_rusty loads beside 8 CPU hogs on one CPU in $(( $(cut -d. -f1 /proc/uptime) - started_s )) s (at most $LOAD_UNDER_HOGS_MAX_S)"
else
    fail "scx_rusty loads beside 8 CPU hogs on one CPU" "not attached after $LOAD_UNDER_HOGS_MAX_S s: state $(sched_state); $(tail -n 3 "$LOG7")"
    wait_for 120 is_enabled
fi
kill "$hogs"; wait "$hogs" 2>/dev/null
expect_clean_exit scx_rusty "$LOG7"
finish
