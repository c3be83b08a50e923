# vm: --cpus 4 --nodes 2 --tcg-threads single --mem 4096
# kernels: 6.19
# scx_rusty on 4 CPUs in 2 NUMA nodes with its default domains (one per LLC: one per node
# here), then per L2 cache (one per CPU) with FIFO queues; its statistics in Prometheus; bounded
# waits that leave sleepers alone; no stealing with --greedy-threshold 0; 36,000 sleeping
# threads, every one tracked, with hogs still balanced (4 GB: each thread costs about 45 KB);
# 3,000 threads spinning in one domain, each served within a short round.
. /scxkit/lib.sh
LOG=/tmp/scx_rusty.log

start_sched "$LOG" scx_rusty --stats 1 --enable-prometheus
expect_loaded scx_rusty rusty "$LOG"
expect_ext_task scx_rusty
grep "cannot be called on this kernel" "$LOG" | sed 's/^INFO *//' | while read -r line; do note "fallback: $line"; done
if grep -q "NODE\[00\] 0b0011" "$LOG" && grep -q "  DOM\[01\] 0b1100" "$LOG"; then
    pass "one domain per LLC, one per node: $(grep -c '  DOM\[' "$LOG") domains"
else
    fail "one domain per LLC" "$(grep -E 'NODE|DOM' "$LOG")"
fi
stress-ng --cpu 4 --fork 1 --switch 1 --timeout 15s --quiet >/dev/null 2>&1 &
load=$!
sleep 8
expect_prometheus "scx_rusty" 'dispatched_tasks_total{scheduler="scx_rusty",type="queued"}'
check "Prometheus has per-domain balancer loads" grep -q '^lb_load{scheduler="scx_rusty",node="1",domain="1"}' /tmp/metrics
check "Prometheus has per-level balancer costs" grep -q '^lb_attempts_total{scheduler="scx_rusty",result="idle",level="node"}' /tmp/metrics
check "Prometheus has per-level balancer outcomes" grep -q '^lb_balanced_total{scheduler="scx_rusty",level="node"}' /tmp/metrics
check "Prometheus counts moves that found no task" grep -q '^lb_no_task_total{scheduler="scx_rusty",level="domain"}' /tmp/metrics
check "Prometheus has the BPF-kept domain loads" grep -q '^domain_load{scheduler="scx_rusty",node="0",domain="0"}' /tmp/metrics
# userspace_cpu: the value of userspace_cpu_seconds_total in /tmp/metrics.
userspace_cpu() { awk '/^userspace_cpu_seconds_total/ { print $NF; exit }' /tmp/metrics; }
# The counter moved in whole seconds here (6.19, 4 vCPUs): it took over 6 s to grow once
# in CI; wait up to 15 s.
cpu0=$(userspace_cpu)
cpu1=$cpu0
waited_s=0
while [ "$waited_s" -lt 15 ]; do
    sleep 1
    waited_s=$((waited_s + 1))
    wget -q -O /tmp/metrics http://127.0.0.1:9000/metrics
    cpu1=$(userspace_cpu)
    [ -n "$cpu0" ] && [ -n "$cpu1" ] && awk "BEGIN { exit !($cpu1 > $cpu0) }" && break
done
if [ -n "$cpu0" ] && [ -n "$cpu1" ] && awk "BEGIN { exit !($cpu1 > $cpu0) }"; then
    pass "Prometheus has userspace CPU time, growing: $cpu0 s, then $cpu1 s ${waited_s} s later"
else
    fail "Prometheus's userspace CPU time grows" "'$cpu0' then '$cpu1' s, ${waited_s} s later"
fi
wait "$load"
check "scx_rusty still loaded after 15 s of stress-ng" is_enabled

# On domain 0's CPUs: a task queued 1 s ago is taken out of vruntime order
# (RUSTY_MAX_WAIT_MS); without the bound, the nice-19 hog got no turn in 10 s.
expect_low_weight_turns scx_rusty 0,1 5 "$LOG"

# A sleeper's wakeup latency on domain 0 under 40 hogs, then with a nice-19 hog there too.
# Taken out of vruntime order about every second, far ahead in vruntime, the nice-19 hog
# once pulled the domain's vruntime clock along, and every sleeper after it queued behind
# all the hogs (7.3, icount: 24.7 ms on average without it, 152.6 ms with it).
start_hogs 40 0,1
sleep 2
alone_us=$(wake_avg_us 10000 150 0,1)
taskset -c 0,1 sh -c 'while :; do :; done' & low=$!
renice -n 19 -p "$low" >/dev/null
sleep 2
with_us=$(wake_avg_us 10000 150 0,1)
stop_hogs; kill "$low"; wait "$low" 2>/dev/null
if [ -n "$alone_us" ] && [ -n "$with_us" ] && [ "$with_us" -le $((alone_us * 3 + 5000)) ]; then
    pass "scx_rusty: a nice-19 hog taken out of turn leaves sleepers' wakeups alone: ${with_us} us on average with it, ${alone_us} us without"
else
    fail "scx_rusty: a nice-19 hog taken out of turn leaves sleepers' wakeups alone" "${with_us:-?} us with it, ${alone_us:-?} us without; $(tail -n 1 "$LOG")"
fi
expect_clean_exit scx_rusty "$LOG"

# With stealing off (--greedy-threshold 0) and no balancer, six hogs homed on domain 0 stay
# there while domain 1 idles: other domains take over a queue left unserved for 100 ms only
# while one of its CPUs goes offline. With 500 ms slices the rule once fired in steady state
# (icount: about 6 takes a second, the hogs seen on all 4 CPUs).
LOG3=/tmp/scx_rusty-nosteal.log
start_sched "$LOG3" scx_rusty --greedy-threshold 0 --no-load-balance --slice-us-underutil 500000 --slice-us-overutil 500000 --stats 1
expect_loaded "scx_rusty --greedy-threshold 0" rusty "$LOG3"
# This shell watches from domain 1: behind the hogs' 500 ms slices it would wait seconds a turn.
taskset -p -c 2,3 $$ >/dev/null
start_hogs 6 0
sleep 1
for pid in $HOGS; do taskset -p -c 0-3 "$pid" >/dev/null; done
sleep 1
seen=$(cpus_seen 5 $HOGS)
unserved=$(sed -n 's/.* unserved \([0-9]*\) .*/\1/p' "$LOG3" | awk '{ n += $1 } END { print n + 0 }')
stop_hogs
taskset -p -c 0-3 $$ >/dev/null
if [ "$seen" = "0 1" ] && [ "$unserved" -eq 0 ]; then
    pass "--greedy-threshold 0: hogs homed on domain 0 stay there (CPUs seen: $seen), no unserved takes"
else
    fail "--greedy-threshold 0: hogs homed on domain 0 stay there" "CPUs seen: $seen, unserved takes: $unserved"
fi
expect_clean_exit "scx_rusty --greedy-threshold 0" "$LOG3"

LOG2=/tmp/scx_rusty-l2.log
start_sched "$LOG2" scx_rusty --cache-level 2 --fifo --stats 1
expect_loaded "scx_rusty --cache-level 2 --fifo" rusty "$LOG2"
check "--cache-level 2: one domain per L2 cache (4)" [ "$(grep -c '  DOM\[' "$LOG2")" -eq 4 ]
stress-ng --cpu 4 --switch 1 --timeout 10s --quiet >/dev/null 2>&1
check "scx_rusty --cache-level 2 --fifo still loaded after 10 s of stress-ng" is_enabled
expect_clean_exit "scx_rusty --cache-level 2 --fifo" "$LOG2"

# More than 32,768 tasks (a pid-keyed map of that size would leave 3,000 unbalanced): half
# the sleepers started before the load (initialized as the scheduler loads), half after (at
# fork), then six hogs born on domain 0 and allowed everywhere, with stealing off so that only
# the balancer moves them. Each new thread's first run leaves a trace in its load, and 18,000
# of them add up to several busy tasks for a few half-lives, which the balancer evens out with
# the hogs: a short half-life lets that pass before the hogs come.
# Every task is tracked (tracked_tasks, counted from the task iterator's read each pass) and
# none left out. The guest's limits are raised first: pid_max is 32,768 with 4 CPUs, and
# threads-max about 31,000 in 4 GB.
SLEEPERS_PER_PROCESS=9000
SLEEPERS_TOTAL=$((4 * SLEEPERS_PER_PROCESS))
SLEEPERS=""
echo 4194304 > /proc/sys/kernel/pid_max
echo 1000000 > /proc/sys/kernel/threads-max
# start_sleepers TAG: two processes of sleeping threads; waits until both have started all.
start_sleepers() {
    local i
    for i in 1 2; do
        scxkit-probe sleepers --threads "$SLEEPERS_PER_PROCESS" --seconds 3600 > "/tmp/sleepers-$1-$i" &
        SLEEPERS="$SLEEPERS $!"
    done
    wait_for 300 sh -c "grep -q started /tmp/sleepers-$1-1 && grep -q started /tmp/sleepers-$1-2"
}
# metric NAME{LABELS: the value of the first series of /tmp/metrics that starts so.
metric() { awk -v m="$1" 'index($0, m) == 1 { print $NF; exit }' /tmp/metrics; }
start_sleepers before
LOG4=/tmp/scx_rusty-tasks.log
start_sched "$LOG4" scx_rusty --interval 1 --load-half-life 0.5 --greedy-threshold 0 --stats 1 --enable-prometheus
expect_loaded "scx_rusty with $((SLEEPERS_TOTAL / 2)) sleeping threads" rusty "$LOG4"
start_sleepers after
# sleeper_tid PID: a thread of that sleepers' process.
sleeper_tid() { ls "/proc/$1/task" | tail -n 1; }
check "a sleeper started before the load runs in the ext class" ext_enabled "$(sleeper_tid "$(echo $SLEEPERS | cut -d' ' -f1)")"
check "a sleeper started after the load runs in the ext class" ext_enabled "$(sleeper_tid "${SLEEPERS##* }")"
tracked=0
wait_for 30 sh -c "wget -q -O /tmp/metrics http://127.0.0.1:9000/metrics && awk '/^tracked_tasks/ { exit !(\\$NF >= $SLEEPERS_TOTAL) }' /tmp/metrics"
tracked=$(metric 'tracked_tasks{')
left_out=$(metric 'left_out_tasks{')
if [ "${tracked:-0}" -ge "$SLEEPERS_TOTAL" ] && [ "$left_out" = 0 ]; then
    pass "scx_rusty tracks every task: $tracked tracked with $SLEEPERS_TOTAL sleeping threads, $left_out left out"
else
    fail "scx_rusty tracks every task" "tracked ${tracked:-?} with $SLEEPERS_TOTAL sleeping threads, left out ${left_out:-?}"
fi
sleep 4
applied_before=$(metric 'lb_moves_applied_total{scheduler="scx_rusty",level="node"}')
start_hogs 6 0,1
sleep 1
for pid in $HOGS; do taskset -p -c 0-3 "$pid" >/dev/null; done
seen=$(cpus_seen 6 $HOGS)
wget -q -O /tmp/metrics http://127.0.0.1:9000/metrics
applied=$(( $(metric 'lb_moves_applied_total{scheduler="scx_rusty",level="node"}') - ${applied_before:-0} ))
# Domain 1 (CPUs 2-3) gets hogs only through the balancer's moves.
if [ "$applied" -gt 0 ] && { [ "${seen#*2}" != "$seen" ] || [ "${seen#*3}" != "$seen" ]; }; then
    pass "scx_rusty balances hogs among $tracked tasks: $applied moves between nodes applied, hogs seen on CPUs $seen"
else
    fail "scx_rusty balances hogs among $tracked tasks" "$applied moves between nodes applied, hogs seen on CPUs $seen; $(tail -n 1 "$LOG4")"
fi
stop_hogs
# The 36,000 sleepers are killed at once. Each thread comes back with a sleeper's credit, and
# a task queued after them waits behind them: the RCU grace-period kthread's average wait
# per run while they exit (run_delay over runs, /proc/PID/schedstat) is noted, with the
# walks for long-waiting tasks over the queues they fill. With a whole queue walked every
# 10 ms (up to 18,000 tasks a walk, the runqueue lock held), the kernel ejected scx_rusty in
# 5 of 8 runs on 6.19: RCU stalls, a soft lockup, or its watchdog's kworker starved 30 s.
# walk_figures: the long-wait walks so far: count, tasks looked at, ns.
walk_figures() {
    wget -q -O /tmp/metrics http://127.0.0.1:9000/metrics &&
        echo "$(metric long_wait_walks_total) $(metric long_wait_walked_tasks_total) $(metric long_wait_walk_nanoseconds_total)"
}
rcu_gp=$(grep -lx rcu_preempt /proc/[0-9]*/comm 2>/dev/null | head -n 1 | cut -d/ -f3)
rcu_before=$(cut -d' ' -f2,3 "/proc/$rcu_gp/schedstat" 2>/dev/null)
walks_before=$(walk_figures)
exit_start_s=$(date +%s)
kill $SLEEPERS
for pid in $SLEEPERS; do wait "$pid" 2>/dev/null; done
exit_s=$(( $(date +%s) - exit_start_s ))
rcu_after=$(cut -d' ' -f2,3 "/proc/$rcu_gp/schedstat" 2>/dev/null)
check "scx_rusty still loaded after $SLEEPERS_TOTAL threads killed at once exited (in $exit_s s)" is_enabled
walks_after=$(walk_figures)
# Each walk looks at 1,024 tasks at most in each of its two passes (whole walks looked at up
# to 18,000), and walks are paced to take about 1/16 of a CPU per queue: at most 1/8 of the
# exit's time for the two domain queues (measured: 253 ms of walking in a 12 s exit).
set -- $walks_before $walks_after
if [ $# -eq 6 ] && [ "$4" -eq "$1" ]; then
    note "no long-wait walk while they exited (in $exit_s s)"
elif [ $# -eq 6 ]; then
    walks=$(($4 - $1)) walked=$(($5 - $2)) walk_ms=$(( ($6 - $3) / 1000000 ))
    check "each long-wait walk while they exited looked at 2,048 tasks at most ($walks walks over $walked tasks, $walk_ms ms)" \
        [ "$walked" -le $((walks * 2048)) ]
    check "the long-wait walks took at most 1/8 of the exit's time ($walk_ms ms in $exit_s s)" \
        [ "$walk_ms" -le $((exit_s * 1000 / 8 + 100)) ]
else
    fail "the long-wait walks while the threads exited are counted" "figures before/after: '$walks_before' / '$walks_after'"
fi
set -- $rcu_before $rcu_after
if [ $# -eq 4 ] && [ "$4" -gt "$2" ]; then
    note "the RCU grace-period kthread waited $(( ($3 - $1) / ($4 - $2) / 1000000 )) ms per run on average while $SLEEPERS_TOTAL threads exited ($(($4 - $2)) runs)"
fi
expect_clean_exit "scx_rusty with $SLEEPERS_TOTAL sleeping threads" "$LOG4"

# 3,000 threads spinning in domain 1 (allowed on CPUs 2 and 3) while domain 0 idles: the
# machine is half busy, so the tuner keeps its long slice (20 ms), and each thread waited for
# 1,500 others to run one: the main thread of the spinners' process waited 37 s, and the
# kernel's watchdog ejected scx_rusty (7.3). Each domain's slice is now short enough for its
# queue to go round in about 500 ms, and at least 250 us. This shell stays on CPUs 0 and 1,
# and times a command that has to wait its turn in domain 1: 13.4 s (EEVDF: 9.3 s; 6.19,
# where TCG's switches between 3,000 threads cost more than their slices).
LOG5=/tmp/scx_rusty-spinners.log
start_sched "$LOG5" scx_rusty --stats 1
expect_loaded "scx_rusty for 3,000 spinning threads" rusty "$LOG5"
taskset -p -c 0,1 $$ >/dev/null
taskset -c 2,3 scxkit-probe sleepers --spin --threads 3000 --seconds 3600 > /tmp/spinners &
spinners=$!
wait_for 180 grep -q started /tmp/spinners || fail "3,000 spinning threads start on CPUs 2-3" "$(cat /tmp/spinners)"
sleep 5
turn_start_us=$(now_us)
taskset -c 2,3 true
turn_ms=$(( ($(now_us) - turn_start_us) / 1000 ))
sleep 10
check "a command on CPUs 2-3 behind 3,000 spinning threads ran within 25 s (in $turn_ms ms)" [ "$turn_ms" -le 25000 ]
check "scx_rusty still loaded 15 s after 3,000 threads started spinning in one domain" is_enabled
kill "$spinners"; wait "$spinners" 2>/dev/null
taskset -p -c 0-3 $$ >/dev/null
expect_clean_exit "scx_rusty with 3,000 spinning threads" "$LOG5"
finish
