# vm: --cpus 8 --nodes 2 --tcg-threads single
# kernels: 7.3
# Guest integration test of scx_rusty on 8 CPUs in 2 NUMA nodes. QEMU gives each node one
# LLC, so the four domains of the balancing checks (two per node) are given with -C.
. /scxkit/lib.sh
LOG=/tmp/scx_rusty.log
DOMS="-C 0x03 -C 0x0c -C 0x30 -C 0xc0"
# Only the balancer may move tasks between domains: no stealing, no greedy placement.
NO_GREEDY="--greedy-threshold 0 --direct-greedy-under 0 --kick-greedy-under 0"

expect_refused "-C across NUMA nodes refused" "spans NUMA nodes" scx_rusty -C 0x1e -C 0xe1
expect_refused "-C overlapping refused" "overlaps an earlier domain on CPUs 1" scx_rusty -C 0x3 -C 0xfe
expect_refused "-C leaving CPUs out refused" "CPUs 4-7 are in no domain" scx_rusty -C 0x0f
expect_refused "-C beyond the CPUs refused" "beyond this machine" scx_rusty -C 0x1ff
expect_refused "-C naming no CPU refused" "names no CPU" scx_rusty -C 0x0 -C 0xff
expect_refused "--cache-level with -C refused" "cannot be used with" scx_rusty --cache-level 2 -C 0xff
expect_refused "missing cache level refused" "no CPU reports a level-4 cache" scx_rusty --cache-level 4
expect_refused "--interval 0 refused" "--interval 0: expected seconds" scx_rusty --interval 0
expect_refused "--load-half-life out of range refused" "--load-half-life 20" scx_rusty --load-half-life 20
expect_refused "--direct-greedy-numa without direct greedy refused" "--direct-greedy-numa needs" \
    scx_rusty --direct-greedy-numa --direct-greedy-under 0
expect_refused "cross-node stealing without stealing refused" "needs stealing within a node" \
    scx_rusty --greedy-threshold 0 --greedy-threshold-x-numa 1
expect_refused "--direct-greedy-under over 100 refused" "101" scx_rusty --direct-greedy-under 101
expect_refused "--node-imbalance-pct of 100 or more refused" "--node-imbalance-pct 100: expected a percentage from 0 to 99" \
    scx_rusty --node-imbalance-pct 100
expect_refused "--max-moves-per-pass 0 refused" "--max-moves-per-pass" scx_rusty --max-moves-per-pass 0
expect_refused "overutil slice above underutil refused" "must not exceed --slice-us-underutil" \
    scx_rusty --slice-us-overutil 30000 --slice-us-underutil 20000

# dom_of CPU: the domain of CPU under $DOMS (two CPUs each).
dom_of() { echo $(( $1 / 2 )); }

# spawn_workers N CPUS: N CPU-bound workers started on CPUS; sets WORKERS.
spawn_workers() {
    local i; WORKERS=""
    for i in $(seq "$1"); do taskset -c "$2" sh -c 'while :; do :; done' & WORKERS="$WORKERS $!"; done
}
stop_workers() { kill $WORKERS 2>/dev/null; wait $WORKERS 2>/dev/null; WORKERS=""; }
widen() { local p; for p in "$@"; do taskset -p -c 0-7 "$p" >/dev/null; done; }

# worker_counts PID...: how many of the tasks are on each domain now, as "d0 d1 d2 d3".
worker_counts() {
    local c0=0 c1=0 c2=0 c3=0 p
    for p in "$@"; do
        case $(dom_of "$(last_cpu "$p")") in 0) c0=$((c0 + 1)) ;; 1) c1=$((c1 + 1)) ;; 2) c2=$((c2 + 1)) ;; 3) c3=$((c3 + 1)) ;; esac
    done
    echo "$c0 $c1 $c2 $c3"
}

# within_one SHARE COUNTS...: every count is within one of SHARE (an integer).
within_one() {
    local share=$1 c; shift
    for c in "$@"; do [ "$c" -ge $((share - 1)) ] && [ "$c" -le $((share + 1)) ] || return 1; done
}

# stat_lines N: the newest N stats lines of $LOG.
stat_lines() { grep "domains (util, load)" "$LOG" | tail -n "$1"; }
# sum_of LINES PATTERN: the sum over LINES of the number sed PATTERN picks (one group).
sum_of() { echo "$1" | sed -n "s/$2/\1/p" | awk '{ s += $1 } END { print s + 0 }'; }
# sum_pairs_of LINES PATTERN: the same for a PATTERN with two groups, both summed.
sum_pairs_of() { echo "$1" | sed -n "s/$2/\1 \2/p" | awk '{ s += $1 + $2 } END { print s + 0 }'; }
node_of() { [ "$(last_cpu "$1")" -lt 4 ] && echo 0 || echo 1; }
# stat_sum LOG FIELD: the number after FIELD on the "totals:" line.
total_of() { grep "totals:" "$1" | tail -n 1 | sed -n "s/.*$2 \([0-9]*\).*/\1/p"; }

# 1. Balancing. Eight workers start on domain 0 and are then allowed everywhere; a ninth may
# never use domain 3. Within three balancing intervals (1 s each) the balancer, the only
# mechanism left, must have spread them to two per domain (within one).
start_sched "$LOG" scx_rusty $DOMS $NO_GREEDY --interval 1 --stats 1
expect_loaded scx_rusty rusty "$LOG"
expect_ext_task scx_rusty
if grep -q "NODE\[01\] 0b11110000" "$LOG" && grep -q "  DOM\[03\] 0b11000000" "$LOG"; then
    pass "the domains are logged as a tree of binary masks"
else
    fail "the domains are logged as a tree" "$(grep -E 'NODE|DOM' "$LOG")"
fi
spawn_workers 8 0,1
taskset -c 0,1 sh -c 'while :; do :; done' & fenced=$!
sleep 4
widened_at=$(stat_lines 1000 | wc -l)
widen $WORKERS
taskset -p -c 0-5 "$fenced" >/dev/null
sleep 3
counts=$(worker_counts $WORKERS)
if within_one 2 $counts; then
    pass "8 workers started on domain 0 are two per domain (within one) 3 s (3 intervals) later: $counts"
else
    fail "workers spread within three balancing intervals" "per domain: $counts; $(tail -n 3 "$LOG" | cut -c1-400)"
fi
seen=$(cpus_seen 5 "$fenced")
case " $seen " in
    *" 6 "*|*" 7 "*) fail "a task is never moved to a domain its affinity excludes" "seen on CPUs $seen" ;;
    *) pass "a task allowed on CPUs 0-5 stays off domain 3 (seen on CPUs $seen)" ;;
esac
# The log lines end with each domain's load as BPF keeps it: the spread between the most and
# least loaded domain must have fallen from the first line after widening to the last.
spread() { echo "$1" | sed -n 's/.*domains (util, load): //p' | tr ',' '\n' | awk '{print $3}' | sort -n | sed -n '1p;$p' | tr '\n' ' ' | awk '{printf "%.2f", $2 - $1}'; }
first=$(grep "domains (util, load)" "$LOG" | sed -n '6p'); last=$(grep "domains (util, load)" "$LOG" | tail -n 1)
s_first=$(spread "$first"); s_last=$(spread "$last")
if awk "BEGIN { exit !($s_last < $s_first / 2) }"; then
    pass "the per-domain load spread fell from $s_first to $s_last busy tasks"
else
    fail "the per-domain load spread falls" "from $s_first to $s_last: $first / $last"
fi
# The outcomes and the hierarchy in the stats: the passes after widening asked for moves
# between the nodes and BPF applied them, and a pass printed node 0 above the average of
# the nodes, giving load away, with its domains under it.
lines=$(stat_lines 1000 | tail -n +$((widened_at + 1)) | head -n 5)
node_requested=$(sum_of "$lines" '.*requested \([0-9]*\)\/[0-9]* applied.*')
node_applied=$(sum_of "$lines" '.*applied \([0-9]*\)\/[0-9]* refused.*')
if [ "$node_requested" -ge 1 ] && [ "$node_applied" -ge 1 ]; then
    pass "work born on node 0: moves between nodes requested ($node_requested) and applied ($node_applied) in 5 s"
else
    fail "work born on one node gets moves between nodes, requested and applied" "requested $node_requested, applied $node_applied; $(echo "$lines" | sed -n 's/.*\(moves[^|]*\).*/\1/p' | tr '\n' ';')"
fi
# The tree of the pass that moved most out of node 0.
at=$(grep -n -E '^ +NODE\[00\] load [0-9.]+ imbal \+[0-9.]+% delta -' "$LOG" |
    awk '{ d = $NF + 0; if (n == "" || d < best) { best = d; n = $1 } } END { sub(":.*", "", n); print n }')
tree=$([ -n "$at" ] && sed -n "${at},$((at + 5))p" "$LOG")
if echo "$tree" | grep -q "^ *DOMAIN\[01\] load" && echo "$tree" | grep -q "^ *NODE\[01\] load .* delta +"; then
    pass "the stats print each node, then its domains, with load, imbalance and delta"
    echo "$tree" | while read -r line; do note "hierarchy: $line"; done
else
    fail "the stats print the hierarchy with node 0 above the average, node 1 receiving" "$(grep -A5 'NODE\[00\] load' "$LOG" | head -n 12)"
fi
stop_workers; kill "$fenced"; wait "$fenced" 2>/dev/null

# A balanced machine: two workers pinned to each CPU. The passes find the nodes balanced and
# ask for no move between them. (With one per CPU, a node held 4 busy tasks, and the rest of
# the guest once put one 17% above the average.) The passes read are those 6 to 8 s after
# the last spawn, three to four half-lives of the load average (2 s): the spawns take a while
# under TCG, and 3 s after them a pass once still found the nodes apart and moved a task
# (CI, a slow run).
pinned_all=""
for cpu in 0 1 2 3 4 5 6 7; do spawn_workers 2 "$cpu"; pinned_all="$pinned_all $WORKERS"; done
sleep 8
lines=$(grep "domains (util, load)" "$LOG" | tail -n 3)
balanced=$(sum_of "$lines" '.*lb node\/domain balanced \([0-9]*\)\/[0-9]* .*')
node_requested=$(sum_of "$lines" '.*requested \([0-9]*\)\/[0-9]* applied.*')
if [ "$balanced" -ge 2 ] && [ "$node_requested" -eq 0 ]; then
    pass "two workers per CPU: the node level found the machine balanced ($balanced times in 3 s, once settled) and asked for no move"
else
    fail "a balanced machine counts balanced and moves nothing between nodes" "balanced $balanced, node moves requested $node_requested; $(echo "$lines" | sed -n 's/.*\(lb node[^|]*\).*/\1/p' | tr '\n' ';')"
fi
WORKERS=$pinned_all; stop_workers
# A task allowed on part of its home domain (CPUs 1-2, homed on domain 0 by its birth on
# CPU 0) while CPU 1 has two tasks pinned to it and CPUs 2-3 are busy: it must still run
# (put on a CPU's local queue, it would wait there until the watchdog ejected the scheduler).
spawn_workers 2 1; pinned=$WORKERS
spawn_workers 3 2,3; busy=$WORKERS
taskset -c 0 sh -c 'taskset -p -c 1,2 $$ >/dev/null; while :; do :; done' & partial=$!
sleep 2
before=$(stat_field "$partial" 14)
sleep 5
ran=$(( $(stat_field "$partial" 14) - ${before:-0} ))
# It shares CPU 1 with the two pinned tasks: a third of 5 s is 167 ticks (100 a second);
# half of that is asked for (one tick would have passed before).
if [ "$ran" -ge 83 ] && is_enabled && [ "$(sched_ops)" = rusty ]; then
    pass "a task allowed on part of its home domain gets its share next to pinned tasks ($ran ticks in 5 s, fair 167)"
else
    fail "a task allowed on part of its home domain gets its share (at least 83 ticks in 5 s)" "utime '$ran' ticks, state $(sched_state); $(grep -i stall "$LOG" | head -n 2)"
fi
kill "$partial"; WORKERS="$pinned $busy"; stop_workers; wait "$partial" 2>/dev/null


# Two CPU-bound tasks alone on CPUs 6 and 7 (domain 3), then allowed everywhere. Neither
# ever waits for its CPU, so neither is enqueued again by itself: node 1 is two busy tasks
# ahead, and the balancer's move of one of them must be applied (at the end of a slice,
# by dispatch) within two passes, and not be asked again and again.
spawn_workers 1 6; lone=$WORKERS; spawn_workers 1 7; lone="$lone $WORKERS"
sleep 1
widen $lone
sleep 2
set -- $lone
at2="$(node_of "$1") $(node_of "$2")"
sleep 5
at7="$(node_of "$1") $(node_of "$2")"
lines=$(stat_lines 7)
applied=$(sum_pairs_of "$lines" '.*applied \([0-9]*\)\/\([0-9]*\).*')
late=$(echo "$lines" | tail -n 4)
expired_ran=$(sum_of "$late" '.*expired ran\/not-run \([0-9]*\)\/[0-9]* .*')
expired_not_run=$(sum_of "$late" '.*expired ran\/not-run [0-9]*\/\([0-9]*\) .*')
case "$at2/$at7" in
    "0 1/0 1"|"1 0/1 0") pass "two lone CPU-bound tasks on one domain: one moved to the other node within 2 s and stayed (nodes $at2, then $at7)" ;;
    *) fail "a lone CPU-bound task is moved by the balancer within two passes" "nodes 2 s after widening: $at2, 7 s: $at7; $(echo "$lines" | sed -n 's/.*\(moves[^|]*\).*/\1/p' | tr '\n' ';')" ;;
esac
# A request left to expire would be asked again every pass, its task running throughout.
# Moves of tasks that then slept a whole interval expire too (the shell's sleep: up to 3 in
# one pass were seen); they are counted apart, as not run.
if [ "$applied" -ge 1 ] && [ "$expired_ran" -le 1 ]; then
    pass "its move was applied ($applied applied in 7 s), at most one move of a task that ran expired in four passes ($expired_ran; $expired_not_run of tasks that did not run)"
else
    fail "a lone task's move is applied, not left to expire" "applied $applied, expired in the last 4 s: $expired_ran of tasks that ran, $expired_not_run not run; $(echo "$lines" | sed -n 's/.*\(moves[^|]*\).*/\1/p' | tr '\n' ';')"
fi
WORKERS=$lone; stop_workers

# Two tasks pinned to CPU 6 take turns, each queued on domain 3 at the end of every slice.
# The kick after queuing must wake only a CPU the task may use: CPU 7, idle in the same
# domain, must not be woken for them (it was, about 47 times a second).
spawn_workers 2 6; pinned6=$WORKERS
sleep 4
lines=$(stat_lines 3)
queued=$(sum_of "$lines" '.*, queued \([0-9]*\) .*')
kicks=$(sum_of "$lines" '.*kicks home \([0-9]*\) greedy \([0-9]*\) .*')
if [ "$queued" -ge 60 ] && [ "$kicks" -le $((queued / 4)) ]; then
    pass "tasks pinned to a busy CPU wake no other CPU: $kicks kicks for $queued queued in 3 s"
else
    fail "queued tasks kick only CPUs they may use" "$kicks kicks for $queued queued in 3 s (at least 60 queued, at most a quarter kicked; kicking CPUs the tasks may not use gave about one per queued task)"
fi
# Pinned by affinity is not `pinned`: that path is for tasks that may not migrate at the
# moment (queued, they would keep CPU 6 from its domain's queue).
pinned=$(sum_of "$lines" '.*, pinned \([0-9]*\), .*')
check "tasks pinned by affinity are queued, not dispatched as pinned ($pinned pinned for $queued queued)" [ "$pinned" -le $((queued / 10)) ]
WORKERS=$pinned6; stop_workers
expect_cpu_away_followed scx_rusty rusty "$LOG"
expect_clean_exit scx_rusty "$LOG"
applied=$(grep "totals:" "$LOG" | head -n 1 | sed -n 's/.*applied \([0-9]*\)\/\([0-9]*\).*/\1 \2/p')
requested=$(grep "totals:" "$LOG" | head -n 1 | sed -n 's/.*requested \([0-9]*\)\/\([0-9]*\).*/\1 \2/p')
set -- $applied
if [ -n "$applied" ] && [ $(( $1 + $2 )) -ge 6 ]; then
    pass "the balancer's moves were applied (node/domain requested $requested, applied $applied)"
else
    fail "the balancer's moves are applied" "requested '$requested' applied '$applied'"
fi

# 2. The control: with --no-load-balance nothing moves them, so the check above can fail.
# Loaded with CPU 7 offline, it builds its domains without it, and again with it once it
# comes online.
LOG2=/tmp/scx_rusty-nolb.log
set_cpu_online 7 0
start_sched "$LOG2" scx_rusty $DOMS $NO_GREEDY --interval 1 --no-load-balance --stats 1
expect_loaded "scx_rusty --no-load-balance (CPU 7 offline)" rusty "$LOG2"
check "loaded with CPU 7 offline, it built its domains without it ($(grep 'DOM\[03\]' "$LOG2"))" grep -q "  DOM\[03\] 0b01000000" "$LOG2"
expect_rebuilt_for_new_cpu "scx_rusty --no-load-balance" rusty "$LOG2" 7
check "the rebuild built domain 3 with CPU 7 ($(grep 'DOM\[03\]' "$LOG2" | tail -n 1))" sh -c "grep 'DOM\[03\]' '$LOG2' | tail -n 1 | grep -q ' 0b11000000'"
spawn_workers 8 0,1
sleep 3; widen $WORKERS; sleep 4
counts=$(worker_counts $WORKERS)
if [ "${counts%% *}" -eq 8 ]; then
    pass "with --no-load-balance the workers stay on domain 0: $counts"
else
    fail "with --no-load-balance the workers stay on domain 0" "per domain: $counts"
fi
# The kernel's debug dump (SysRq D) carries rusty's own lines: one per domain, the 8
# workers queued on domain 0's two CPUs, and the idle waker.
sched_ext_dump > /tmp/rusty-dump.txt
if [ "$(grep -c '^rusty: domain [0-3] (node [01]): queued ' /tmp/rusty-dump.txt)" -eq 4 ] &&
   grep -q '^rusty: domain 0 (node 0): queued [1-9]' /tmp/rusty-dump.txt &&
   grep -q '^rusty: waker fired on CPU' /tmp/rusty-dump.txt; then
    pass "the kernel's debug dump shows rusty's domains: $(grep '^rusty: domain 0' /tmp/rusty-dump.txt)"
else
    fail "the kernel's debug dump shows rusty's domains" "$(grep -c . /tmp/rusty-dump.txt) lines: $(grep '^rusty' /tmp/rusty-dump.txt | head -n 5)"
fi
stop_workers
expect_clean_exit "scx_rusty --no-load-balance" "$LOG2"
requested=$(grep "totals:" "$LOG2" | tail -n 1 | sed -n 's/.*requested \([0-9]*\/[0-9]*\).*/\1/p')
check "--no-load-balance requests no move (requested $requested)" [ "$requested" = "0/0" ]

# 3. Greedy stealing and direct greedy cross nodes only with their options. Workers homed
# on domain 0 (no balancing) overload it; one hog per CPU keeps domain 1 busy (so its CPUs
# find their own queue empty and steal); node 1 is idle. Sleepers homed on domain 0 wake
# often and find no idle CPU on node 0.
# greedy_run LOG OPTIONS...: runs that load for 6 s under scx_rusty with OPTIONS.
greedy_run() {
    local log=$1 sleepers name; shift
    name="scx_rusty ${*:-(greedy defaults)}"
    start_sched "$log" scx_rusty $DOMS --no-load-balance --stats 1 "$@"
    expect_loaded "$name" rusty "$log"
    spawn_workers 6 0,1; local homed=$WORKERS
    spawn_workers 2 2,3; local fillers=$WORKERS
    taskset -c 0,1 stress-ng --sleep 4 --sleep-max 64 --timeout 10s --quiet >/dev/null 2>&1 & sleepers=$!
    sleep 2; widen $homed
    for p in $(ls /proc | grep -E '^[0-9]+$'); do
        case $(cat "/proc/$p/comm" 2>/dev/null) in stress-ng*) taskset -a -p -c 0-7 "$p" >/dev/null 2>&1 ;; esac
    done
    sleep 6
    WORKERS="$homed $fillers"; stop_workers
    kill "$sleepers" 2>/dev/null; wait "$sleepers" 2>/dev/null
    expect_clean_exit "$name" "$log"
}
LOG3=/tmp/scx_rusty-greedy.log
greedy_run "$LOG3"
stole_node=$(total_of "$LOG3" "stole node"); stole_far=$(total_of "$LOG3" "xnuma")
far_direct=$(total_of "$LOG3" "direct_greedy_xnuma")
check "by default, CPUs steal within their node (stole $stole_node)" [ "${stole_node:-0}" -gt 0 ]
check "by default, no CPU steals across nodes (stole $stole_far)" [ "$stole_far" = 0 ]
check "by default, direct greedy stays within the node (crossed $far_direct)" [ "$far_direct" = 0 ]
# Each option alone: with both, node 1's CPUs may steal enough of domain 0's work to leave
# no idle CPU there for a waking task to take.
LOG4=/tmp/scx_rusty-xnuma.log
greedy_run "$LOG4" --greedy-threshold-x-numa 1
stole_far=$(total_of "$LOG4" "xnuma")
check "with --greedy-threshold-x-numa 1, CPUs steal across nodes (stole $stole_far)" [ "${stole_far:-0}" -gt 0 ]
LOG4B=/tmp/scx_rusty-direct-xnuma.log
greedy_run "$LOG4B" --direct-greedy-numa
far_direct=$(total_of "$LOG4B" "direct_greedy_xnuma")
check "with --direct-greedy-numa, waking tasks cross nodes (crossed $far_direct)" [ "${far_direct:-0}" -gt 0 ]

# 3b. --new-task-spread. Node 0's CPUs run two hogs pinned to each, so that none is ever idle;
# a parent on CPU 0, allowed everywhere, forks three CPU-bound children. With nothing idle on
# node 0, each child starts on an idle CPU of node 1, its home from then on (no balancing, no
# cross-node stealing: nothing else would move them). Three children for node 1's four CPUs,
# and at least two of them asserted there: a fork that finds node 1's free CPUs busy (with
# scx_rusty's own process, this shell, a kworker) keeps its child on node 0. With four
# children, one stayed in 2 of 8 runs (7.3), and CI once saw two stay. The control, by
# default, leaves them all on node 0.
# fork_run LOG OPTIONS...: that load under scx_rusty with OPTIONS; sets KIDS_NODE1 to how many
# children are on node 1 after 3 s.
fork_run() {
    local log=$1 name kids p; shift
    name="scx_rusty ${*:-(new tasks with their parent)}"
    start_sched "$log" scx_rusty $DOMS --no-load-balance --stats 1 "$@"
    expect_loaded "$name" rusty "$log"
    local cpu hogs=""
    for cpu in 0 1 2 3; do spawn_workers 2 "$cpu"; hogs="$hogs $WORKERS"; done
    sleep 1
    taskset -c 0 sh -c 'taskset -p -c 0-7 $$ >/dev/null
        for i in 1 2 3; do sh -c "while :; do :; done" & echo $!; done > /tmp/fork-kids; wait' & local parent=$!
    sleep 3
    kids=$(cat /tmp/fork-kids); KIDS_NODE1=0
    for p in $kids; do [ "$(node_of "$p")" = 1 ] && KIDS_NODE1=$((KIDS_NODE1 + 1)); done
    kill $kids $parent 2>/dev/null; wait $parent 2>/dev/null
    WORKERS=$hogs; stop_workers
    expect_clean_exit "$name" "$log"
}
LOG4C=/tmp/scx_rusty-fork.log
fork_run "$LOG4C" --new-task-spread
spread=$(total_of "$LOG4C" "new_task_spread")
check "with --new-task-spread, new tasks start on node 1 when node 0 is busy: $KIDS_NODE1 of 3 children there, $spread spread" \
    [ "$KIDS_NODE1" -ge 2 -a "${spread:-0}" -ge 2 ]
LOG4D=/tmp/scx_rusty-fork-default.log
fork_run "$LOG4D"
check "by default they stay on node 0 ($KIDS_NODE1 of 3 on node 1)" [ "$KIDS_NODE1" -eq 0 ]

# 4. Defaults (one domain per LLC, here one per node) under 40 s of mixed stress that also
# changes affinities, then SIGINT.
LOG5=/tmp/scx_rusty-stress.log
start_sched "$LOG5" scx_rusty --stats 5
expect_loaded "scx_rusty (per-LLC domains)" rusty "$LOG5"
if grep -q "  DOM\[01\] 0b11110000" "$LOG5"; then
    pass "one domain per LLC: two domains, one per node"
else
    fail "one domain per LLC: two domains, one per node" "$(grep -E 'NODE|DOM|offline' "$LOG5")"
fi
stress-ng --cpu 8 --fork 2 --switch 2 --affinity 2 --timeout 40s --quiet >/dev/null 2>&1
if kill -0 "$SCHED_PID" 2>/dev/null && is_enabled && [ "$(sched_ops)" = rusty ]; then
    pass "scx_rusty survives 40 s of stress-ng (cpu, fork, switch, affinity)"
else
    fail "scx_rusty survives 40 s of stress-ng" "state $(sched_state); $(tail -n 5 "$LOG5")"
fi
expect_clean_exit "scx_rusty (per-LLC domains)" "$LOG5"
# Tasks that may not migrate reach ops.enqueue (SCX_OPS_ENQ_MIGRATION_DISABLED) and are the
# only ones dispatched as pinned; without the flag the count stayed 0 (the kernel placed them).
pinned=$(total_of "$LOG5" "pinned"); enqueues=$(grep "totals:" "$LOG5" | tail -n 1 | sed -n 's/.*, queued \([0-9]*\) .*/\1/p')
note "under 40 s of stress: $pinned tasks dispatched as pinned (migration disabled), $enqueues queued"
finish
