# Balancing benchmark inside the guest: the same two workloads under EEVDF, then under a
# scheduler, in one boot. Prints "BENCH <label> <figure> <value>" lines for balance-report.py.
#   balance-scenario.sh WORK SCHEDULER [ARGS...]
# WORK scales both workloads (loop iterations of one worker, in thousands).
. /scxkit/lib.sh
work=$1; shift
ncpu=$(nproc)
nodes=$(ls -d /sys/devices/system/node/node* | wc -l)
node0=$(cat /sys/devices/system/node/node0/cpulist)

# node_of CPU: the NUMA node of CPU.
node_of() { local n; for n in /sys/devices/system/node/node*; do [ -e "$n/cpu$1" ] && { echo "${n##*node}"; return; }; done; echo 0; }

# watch_nodes OUT PID...: until the tasks are gone, samples their CPU every 0.1 s and writes
# to OUT how often a task was seen on another node than at its previous sample.
watch_nodes() {
    local out=$1 changes=0 p c n; shift
    local alive=1 prev
    while [ "$alive" -eq 1 ]; do
        alive=0
        for p in "$@"; do
            c=$(last_cpu "$p" 2>/dev/null) || continue
            alive=1
            n=$(node_of "$c")
            eval "prev=\${node_$p:-$n}"
            [ "$prev" != "$n" ] && changes=$((changes + 1))
            eval "node_$p=$n"
        done
        usleep 100000
    done
    echo "$changes" > "$out"
}

# now_ms: the guest's monotonic clock in ms.
now_ms() { awk '{printf "%d", $1 * 1000}' /proc/uptime; }

# One worker: a fixed amount of CPU work in the shell.
WORKER="i=0; while [ \$i -lt $((work * 1000)) ]; do i=\$((i + 1)); done"

suite() {
    local label=$1 i pids="" start end
    echo "==== $label: $ncpu workers born on node 0 ($node0), then allowed everywhere"
    start=$(now_ms)
    for i in $(seq "$ncpu"); do taskset -c "$node0" sh -c "$WORKER" & pids="$pids $!"; done
    for p in $pids; do taskset -p -c "0-$((ncpu - 1))" "$p" >/dev/null; done
    watch_nodes /tmp/moves $pids &
    local watcher=$!
    wait $pids; end=$(now_ms); wait "$watcher"
    echo "BENCH $label uneven_s $(awk "BEGIN { print ($end - $start) / 1000 }")"
    echo "BENCH $label uneven_node_changes $(cat /tmp/moves)"
    echo "==== $label: a parallel build: $((ncpu * 8)) short jobs, $ncpu at a time"
    start=$(now_ms)
    seq $((ncpu * 8)) | xargs -P "$ncpu" -n 1 sh -c "i=0; while [ \$i -lt $((work * 100)) ]; do i=\$((i + 1)); done" _
    end=$(now_ms)
    echo "BENCH $label build_s $(awk "BEGIN { print ($end - $start) / 1000 }")"
    echo "BENCH $label build_jobs_per_s $(awk "BEGIN { print $ncpu * 8 * 1000 / ($end - $start) }")"
}

echo "==== $ncpu CPUs in $nodes nodes"
suite eevdf
# With --stats, an scxkit scheduler prints its totals at exit (its moves between nodes).
"$@" --stats 5 > /tmp/sched.log 2>&1 &
pid=$!
wait_for 60 is_enabled || { echo "the scheduler did not load"; cat /tmp/sched.log; exit 1; }
suite "$1"
kill -INT "$pid"; wait "$pid"; rc=$?
grep "totals:" /tmp/sched.log | sed 's/^INFO *//; s/^/INFO /' | cut -c1-600
is_enabled && { echo "the scheduler is still loaded"; exit 1; }
exit $rc
