# vm: --tcg-threads single
# Guest integration test of the userspace-policy framework: scx_rustland, then the scx_fifo
# example (run by tests/guest.sh inside a 4-CPU, 2-node guest).
. /scxkit/lib.sh
LOG=/tmp/scx_rustland.log
NCPU=$(nproc)
# The most a periodic sleeper may wait, on average, behind a hog on its CPU, us. Its timer
# wakeup preempts the hog: 1.9 to 2.8 ms in the suite's runs (debug build, single-threaded
# TCG, 4 vCPUs on one host thread). Waiting for the hog's 5 ms slice: 4 ms or more each.
WAKE_BEHIND_HOG_MAX_US=3500

expect_refused "--slice-us-min above --slice-us refused" "must not exceed --slice-us" \
    scx_rustland --slice-us 1000 --slice-us-min 2000
expect_refused "--slice-boost 0 refused" "'--slice-boost <FACTOR>'" scx_rustland --slice-boost 0
expect_refused "a negative --nvcsw-threshold refused" "not a rate per second" scx_rustland --nvcsw-threshold=-1
expect_refused "a too short --fallback-after-ms refused" "'--fallback-after-ms <MS>'" scx_rustland --fallback-after-ms 10
expect_refused "a bad --watch-pid refused" "'--watch-pid <PIDS>'" scx_rustland --watch-pid abc
expect_refused "a fallback later than half the watchdog refused" "must be at most half of --watchdog-timeout-ms" \
    scx_rustland --watchdog-timeout-ms 300 --fallback-after-ms 2000

# last_stat NAME: the value after NAME in the newest stats line ("fallback 1.5 s" -> 1.5).
last_stat() { grep "dispatched" "$LOG" | tail -n 1 | sed -n "s/.* $1 \([0-9.]*\).*/\1/p"; }
# fallback_entries: how many times BPF has taken over, from the newest stats line.
fallback_entries() { grep "dispatched" "$LOG" | tail -n 1 | sed -n 's/.*(\([0-9]*\) entries).*/\1/p'; }

# 1. Loads; with every CPU busy, a periodic sleeper is classed interactive and a hog is not;
# the policy loop does not page-fault once running.
start_hogs "$NCPU"
hog=$(echo $HOGS | cut -d" " -f1)
sh -c "$PERIODIC_SLEEPER_10MS" & sleeper=$!
start_sched "$LOG" scx_rustland --stats 1 --watch-pid "$sleeper,$hog" --enable-prometheus
expect_loaded scx_rustland rustland "$LOG"
expect_ext_task scx_rustland
sleep 6
expect_class "a periodic sleeper is interactive" "$sleeper" interactive "$LOG"
expect_class "a CPU hog is regular" "$hog" regular "$LOG"
# The sleeper's wakeups are decided ahead (a wake grant, given to interactive tasks): BPF
# queues them without a round trip through the policy. It wakes up to 100 times a second.
granted=$(last_stat granted)
check "an interactive task's wakeups skip the policy's round trip: $granted granted in the last second (at least 30)" \
    [ "${granted:-0}" -ge 30 ]
faults=$(grep "dispatched" "$LOG" | tail -n 3 | sed -n 's/.* faults \([0-9]*\) .*/\1/p' | tr '\n' ' ')
if [ "$faults" = "0 0 0 " ]; then pass "no page faults in the policy process in its last three seconds under load"
else fail "no page faults in the policy process in steady state" "faults per second: $faults"; fi
check "decisions come from userspace under load" sh -c "[ \"\$(grep dispatched $LOG | tail -n 1 | sed -n 's/.*: user \([0-9]*\) .*/\1/p')\" -gt 0 ]"
expect_prometheus scx_rustland 'dispatched_tasks_total{scheduler="scx_rustland",type="user"}'
# The kernel's debug dump (SysRq D here; an ejection prints the same) shows the framework's
# queues and its clock, against which the tasks listed there have their dsq_vtime.
# (On 7.1/7.2, with no user queues, there is no queues line.)
sched_ext_dump > /tmp/usched-dump.txt
if { lacks_user_queues "$LOG" || grep -q "^usched: queued shared [0-9]*, BPF's own [0-9]*" /tmp/usched-dump.txt; } &&
   grep -q "^usched: vtime_now [1-9][0-9]*, sent [1-9]" /tmp/usched-dump.txt; then
    pass "the kernel's debug dump shows the framework's queues and clock: $(grep '^usched:' /tmp/usched-dump.txt | tr '\n' ' ')"
else fail "the kernel's debug dump shows the framework's state" "$(grep -c . /tmp/usched-dump.txt) lines: $(grep -i usched /tmp/usched-dump.txt | head -n 3)"; fi
kill $sleeper; wait $sleeper 2>/dev/null

# 2. SIGSTOP for 40 s with every CPU busy: BPF takes over, a shell command still completes,
# the scheduler stays loaded, and after SIGCONT the fallback time is counted: the stop's
# length less the fallback delay (0.5 s), give or take the policy's first turn after SIGCONT.
FALLBACK_SLACK_MS=1500
fallback0_s=$(last_stat fallback) stopped_us=$(now_us)
kill -STOP "$SCHED_PID"
sleep 2
# The README quotes a worst of 180 ms here; the bound leaves TCG's noise a factor of three.
WORST_STOPPED_MS=540
worst=0 runs=0 all=""
for i in $(seq 8); do
    ms=$(latency_ms uname -r); all="$all $ms"
    case $ms in ''|*[!0-9]*) continue ;; esac
    runs=$((runs + 1))
    [ "$ms" -gt "$worst" ] && worst=$ms
    sleep 4
done
if is_enabled && [ "$(sched_ops)" = rustland ] && [ "$runs" -eq 8 ] && [ "$worst" -le "$WORST_STOPPED_MS" ]; then
    pass "policy stopped 40 s under load: 8 shell commands completed, worst $worst ms (at most $WORST_STOPPED_MS), still loaded"
else fail "policy stopped 40 s under load: 8 commands within $WORST_STOPPED_MS ms, still loaded" "latencies (ms):$all; state $(sched_state) ops '$(sched_ops)'"; fi
kill -CONT "$SCHED_PID"
stopped_ms=$(( ($(now_us) - stopped_us) / 1000 ))
sleep 3
fallback_s=$(last_stat fallback)
counted_ms=$(awk -v a="${fallback0_s:-0}" -v b="${fallback_s:-0}" 'BEGIN { printf "%d", (b - a) * 1000 }')
if kill -0 "$SCHED_PID" && is_enabled && [ -n "$fallback_s" ] &&
   [ "$counted_ms" -ge $((stopped_ms - FALLBACK_SLACK_MS)) ] && [ "$counted_ms" -le $((stopped_ms + FALLBACK_SLACK_MS)) ]; then
    pass "after SIGCONT the policy is back and the fallback time was counted: $counted_ms ms for a stop of $stopped_ms ms"
else fail "after SIGCONT the fallback time is counted" "fallback counted $counted_ms ms ('$fallback0_s' -> '$fallback_s' s) for a stop of $stopped_ms ms (within $FALLBACK_SLACK_MS ms), state $(sched_state); $(grep dispatched "$LOG" | tail -n 2)"; fi
sleep 2
user=$(grep "dispatched" "$LOG" | tail -n 1 | sed -n 's/.*: user \([0-9]*\) .*/\1/p')
check "the policy decides again after SIGCONT (user $user in the last second)" [ "${user:-0}" -gt 0 ]
stop_hogs

# Weights: two hogs on CPU 1, nice 0 and nice 19, their CPU time over 6 s. vtime order alone
# gave about 1 to 1 (each decision's round trip lets the other task run); the shorter slice
# of light tasks gave 564 to 3 (README, release build). At least 2 to 1 is asserted: in the
# tests' debug build each round trip is slower and lets the light task run, 2.6 to 5 to 1
# over the last runs (426:165 and 448:157 at the low end; EEVDF: about 100 to 1).
# (busybox has renice but no nice.)
taskset -c 1 sh -c 'while :; do :; done' & nice0=$!
taskset -c 1 sh -c 'while :; do :; done' & nice19=$!
renice -n 19 -p $nice19 >/dev/null
sleep 6
ticks0=$(stat_field $nice0 14) ticks19=$(stat_field $nice19 14)
floor19=$ticks19; [ "${floor19:-0}" -ge 1 ] 2>/dev/null || floor19=1
if [ -n "$ticks0" ] && [ -n "$ticks19" ] && [ "$ticks0" -ge $((2 * floor19)) ]; then
    pass "weights on one CPU: nice 0 ran $ticks0 ticks, nice 19 $ticks19 (at least 2 to 1; vtime order alone: 1 to 1; EEVDF: about 100 to 1)"
else fail "weights on one CPU: nice 0 runs at least 2 times as much as nice 19" "ticks '$ticks0' and '$ticks19'"; fi
kill $nice0 $nice19; wait $nice0 $nice19 2>/dev/null

# A timer wakeup of an interactive task on a CPU a hog runs (both bound to CPU 2, the policy
# elsewhere): granted, it preempts the hog there, as a hand-over would by waking the policy
# on that CPU. Granted without preempting, it waited for the hog's slice: about 5 ms on
# average on one vCPU (bench latency1); handed over to a policy on another CPU, as long.
# (This scenario's single-threaded TCG: in multi-threaded TCG the averages stay near 5 ms,
# and a trace there showed the timer interrupts themselves reaching CPU 2 about every 4 ms,
# each granted wakeup then preempting at once: a limit of that mode, not yet understood.)
taskset -c 2 sh -c 'while :; do :; done' & hog2=$!
sleep 1
avg=$(wake_avg_us 1000 3000 2)
kill $hog2; wait $hog2 2>/dev/null
check "a periodic sleeper preempts the hog on its CPU: cyclictest average $avg us (at most $WAKE_BEHIND_HOG_MAX_US)" \
    [ "${avg:-99999}" -le "$WAKE_BEHIND_HOG_MAX_US" ]

# Pipe hand-offs on the policy's own CPU, with every CPU busy: the policy reads the tasks
# woken in batches rather than being woken (and preempting the writer) for each one. Woken
# for each, it made hackbench over pipes take 6x EEVDF's time on one vCPU (bench
# throughput1), with 2.1M context switches against EEVDF's 0.23M. The policy and hackbench
# share CPU 1, as on a one-CPU machine; its loop's turns are counted as its thread's sleeps
# (the kernel's count, /proc). hackbench -g 1 -l 50 sends 20,000 messages; at most 1,100
# turns are asserted (woken for each wakeup: 1,184 to 2,711 turns, the writers preempted and
# handed over again; batched: about 250 in the reproducible mode, 957 and 1,028 in the
# suite's real-time runs, where timer wakeups add turns).
policy_sleeps() { sed -n 's/^voluntary_ctxt_switches:[^0-9]*//p' "/proc/$SCHED_PID/status"; }
start_hogs "$NCPU"
taskset -pc 1 "$SCHED_PID" >/dev/null
lines0=$(grep -c "dispatched" "$LOG") sleeps0=$(policy_sleeps)
taskset -c 1 hackbench -p -g 1 -l 50 >/dev/null 2>&1
sleeps=$(( $(policy_sleeps) - sleeps0 ))
usleep 1100000
decisions=$(grep "dispatched" "$LOG" | tail -n +$((lines0 + 1)) | sed -n 's/.*: user \([0-9]*\) .*/\1/p' |
    awk '{ n += $1 } END { print n + 0 }')
check "pipe hand-offs on the policy's CPU are decided in batches: $decisions decisions, $sleeps sleeps of the policy for 20000 messages (at most 1100)" \
    [ "$decisions" -ge 100 -a "$sleeps" -le 1100 ]
taskset -pc "0-$((NCPU - 1))" "$SCHED_PID" >/dev/null
stop_hogs

# A real-time hog on the policy's CPU while the others are idle: the policy moves to an idle
# CPU when it wakes, and BPF never has to take over (it did, again and again, when the policy
# stayed on its previous CPU).
pcpu=$(last_cpu "$SCHED_PID") entries0=$(fallback_entries)
stress-ng --cpu 1 --taskset "$pcpu" --sched fifo --sched-prio 50 --timeout 5s --quiet >/dev/null 2>&1
sleep 2
entries1=$(fallback_entries)
check "a real-time hog on the policy's CPU $pcpu: no fallback ($entries0 -> $entries1 entries), now on CPU $(last_cpu "$SCHED_PID")" \
    [ -n "$entries0" -a "$entries0" = "$entries1" ]

# 3. Mixed stress, CPU hotplug, SIGINT.
stress-ng --cpu 2 --fork 1 --switch 1 --vm 1 --vm-bytes 64M --cyclic 1 --timeout 25s --quiet >/dev/null 2>&1
if kill -0 "$SCHED_PID" && is_enabled && [ "$(sched_ops)" = rustland ]; then
    pass "scx_rustland survives 25 s of mixed stress (cpu, fork, switch, vm, cyclic)"
else fail "scx_rustland survives 25 s of mixed stress" "state $(sched_state)"; fi
expect_hotplug_followed scx_rustland rustland "$LOG"
expect_clean_exit scx_rustland "$LOG"

# 4. Under load, fifteen quick stops (150 ms, with BPF taking over after 100 ms) and
# resumes: the scheduler stays loaded (the hand-back between BPF and the policy is racy
# ground: custody trimming keeps BPF's record of held tasks true across it).
# Then SIGKILL: the kernel is back on its default scheduler at once.
start_hogs "$NCPU"
start_sched "$LOG" scx_rustland --fallback-after-ms 100 --stats 1
expect_loaded scx_rustland rustland "$LOG"
sleep 2
for i in $(seq 15); do kill -STOP "$SCHED_PID"; usleep 150000; kill -CONT "$SCHED_PID"; usleep 50000; done
sleep 3
entries=$(fallback_entries)
if is_enabled && [ "$(sched_ops)" = rustland ] && [ "${entries:-0}" -ge 10 ]; then
    pass "15 quick stops and resumes under load: still loaded, $entries fallbacks counted"
else fail "15 quick stops and resumes under load" "state $(sched_state), fallbacks '$entries'; $(grep -iE 'stall|error' "$LOG" | head -n 2)"; fi
kill -KILL "$SCHED_PID"; t0=$(now_us)
wait_for 5 is_disabled; t1=$(now_us)
ms=$(latency_ms uname -r)
if is_disabled; then
    pass "SIGKILL under load: default scheduler after $(( (t1 - t0) / 1000 )) ms, then a shell command in $ms ms"
else fail "SIGKILL under load returns to the default scheduler" "state $(sched_state)"; fi
stop_hogs

# 4b. A full custody record (BPF's list of the tasks the policy holds, which the fallback
# sweeps): cut to 16 places for the test, under hogs and 128 threads that sleep and wake.
# Hand-overs beyond it are refused and counted (BPF dispatches those tasks itself), no push
# into it fails, and a 3 s stop with the record full leaves every task running.
CLOG=/tmp/scx_rustland-custody.log
start_hogs "$NCPU"
start_sched "$CLOG" env SCXKIT_TEST_CUSTODY_PLACES=16 scx_rustland --stats 1
expect_loaded "scx_rustland with 16 custody places" rustland "$CLOG"
stress-ng --sleep 2 --sleep-max 64 --timeout 14s --quiet >/dev/null 2>&1 & sleepers=$!
sleep 5
kill -STOP "$SCHED_PID"; sleep 1
ms=$(latency_ms uname -r); sleep 2
kill -CONT "$SCHED_PID"
wait "$sleepers"; sleepers_rc=$?
sleep 1
if is_enabled && [ "$(sched_ops)" = rustland ] && [ "$sleepers_rc" -eq 0 ]; then
    pass "policy stopped 3 s with its custody record full: still loaded, a command in $ms ms, the sleepers finished"
else fail "a stop with the custody record full" "state $(sched_state), stress-ng status $sleepers_rc; $(grep -iE 'stall|error' "$CLOG" | head -n 2)"; fi
stop_hogs
expect_clean_exit "scx_rustland with 16 custody places" "$CLOG"
full=$(grep "totals:" "$CLOG" | tail -n 1 | sed -n 's/.*custody full \([0-9]*\) push failed \([0-9]*\).*/\1/p')
push_failed=$(grep "totals:" "$CLOG" | tail -n 1 | sed -n 's/.*custody full \([0-9]*\) push failed \([0-9]*\).*/\2/p')
check "hand-overs beyond the custody record are refused and counted ($full)" [ "${full:-0}" -gt 0 ]
check "no push into the custody record failed ($push_failed)" [ "$push_failed" = 0 ]

# 4c. BPF's own queue (refused hand-overs, then the fallback's tasks) and the shared queue of
# the policy's decisions take turns on each CPU. Three hogs per CPU and a custody record of
# two places: while the policy is stopped, every hand-over is refused or swept into BPF's
# queue, which then never empties. Served strictly first, it starved the hogs the policy had
# queued for the whole 3 s stop (3.56 s, half the CPU time of the others); taking turns,
# the longest wait was 0.52 s. (On 6.19 in CI, such a wait ended in an RCU stall: a task
# preempted in an RCU read section waited 21 s.) Two stops, each hog running before the
# first. The bound: the fallback's start (500 ms) and 1.5 s for the queues (new code: up to
# 0.73 s over twenty runs, 1.4 s beside memory stressors; old code with two stops: 2.6 to
# 3.6 s).
HOG_WAIT_ACROSS_STOP_MAX_MS=2000
TLOG=/tmp/scx_rustland-turns.log
# hogs_running PID...: each has run 20 ms of CPU (its measuring loop has begun).
hogs_running() {
    local pid ns
    for pid in "$@"; do
        read -r ns _ < "/proc/$pid/schedstat" || return 1
        [ "$ns" -ge 20000000 ] || return 1
    done
}
start_sched "$TLOG" env SCXKIT_TEST_CUSTODY_PLACES=2 scx_rustland --stats 1
expect_loaded "scx_rustland with 2 custody places" rustland "$TLOG"
no_user_queues=""
lacks_user_queues "$TLOG" && no_user_queues=1
if [ -n "$no_user_queues" ]; then
    skip "hogs across stops with BPF's queue never empty" "no user queues on this kernel: both queues are the kernel's global one"
else
    probe_hogs=""
    for n in $(seq $((3 * NCPU))); do scxkit-probe hog --seconds 10 > "/tmp/turns-hog$n.txt" & probe_hogs="$probe_hogs $!"; done
    wait_for 5 hogs_running $probe_hogs || note "not every hog ran within 5 s"
    sleep 1
    for stop in 1 2; do kill -STOP "$SCHED_PID"; sleep 3; kill -CONT "$SCHED_PID"; sleep 1; done
    wait $probe_hogs
    waits=$(sed -n 's/^hog_longest_wait_ms //p' /tmp/turns-hog*.txt | tr '\n' ' ')
    worst=$(echo "$waits" | tr ' ' '\n' | sort -n | tail -n 1)
    check "$((3 * NCPU)) hogs across two 3 s stops, BPF's queue never empty: each waits at most $HOG_WAIT_ACROSS_STOP_MAX_MS ms at a time (longest waits: ${waits:-none}ms)" \
        [ "$(echo "$waits" | wc -w)" -eq $((3 * NCPU)) -a "${worst:-99999}" -le "$HOG_WAIT_ACROSS_STOP_MAX_MS" ]
fi
expect_clean_exit "scx_rustland with 2 custody places" "$TLOG"
first=$(grep "totals:" "$TLOG" | tail -n 1 | sed -n 's/.*shared first \([0-9]*\).*/\1/p')
if [ -z "$no_user_queues" ]; then
    check "the shared queue went first while BPF's queue held tasks, counted ($first)" [ "${first:-0}" -gt 0 ]
fi

# 5. The FIFO example: loads, schedules, survives stress, stops cleanly.
FIFO_LOG=/tmp/scx_fifo.log
start_sched "$FIFO_LOG" scx_fifo --stats 1
expect_loaded scx_fifo fifo "$FIFO_LOG"
expect_ext_task scx_fifo
expect_survives scx_fifo 15 fifo
check "scx_fifo dispatched tasks as userspace decided" sh -c "grep dispatched $FIFO_LOG | grep -q ': user [1-9]'"
check "scx_fifo held tasks and was called again when a CPU ran out of work (nudges)" \
    sh -c "grep dispatched $FIFO_LOG | grep -q 'nudges [1-9]'"
expect_clean_exit scx_fifo "$FIFO_LOG"

echo "---- scx_rustland log ----"; grep -v "pid " "$LOG" | tail -n 12
echo "---- scx_fifo log ----"; tail -n 6 "$FIFO_LOG"
finish
