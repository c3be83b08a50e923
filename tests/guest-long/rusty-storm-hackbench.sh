# vm: --cpus 4 --nodes 2 --icount
# kernels: 7.3
# scx_rusty through CPU hotplug storms under hackbench (8 groups over pipes) and 40 hogs on
# 4 CPUs in 2 nodes: every CPU but 0 off and on, four rounds. It must follow every event
# without a reload: the storm ends where it began. Before it did (when it was loaded again
# once the online CPUs had stayed 2 s on another set), each reload left every task on EEVDF,
# and within a minute the kernel reported an RCU stall (4 runs of 4, and 2 of 2 on
# 2026-12-07): khugepaged (nice 19), preempted in a read-side section, waited behind 360
# tasks; the reload's attach waited for the CPU hotplug lock, a CPU coming up for the grace
# period, and the scheduler's loader for a page fault. Outside the default suite for its
# length (about 3 minutes in the reproducible mode). Run it with
#   tests/guest.sh tests/guest-long/rusty-storm-hackbench.sh
. /scxkit/lib.sh
ROUNDS=4
LOG=/tmp/scx_rusty-storm.log
start_sched "$LOG" scx_rusty --stats 5
expect_loaded "scx_rusty (storm under hackbench)" rusty "$LOG"
seq0=$(enable_seq)
hackbench -p -g 8 -l 1000000 > /dev/null 2>&1 & bench=$!
start_hogs 40
round=0
while [ "$round" -lt "$ROUNDS" ]; do
    for cpu in 3 2 1; do set_cpu_online "$cpu" 0; done
    sleep 0.5
    for cpu in 1 2 3; do set_cpu_online "$cpu" 1; done
    set_cpu_online 2 0; set_cpu_online 2 1
    round=$((round + 1))
done
kill "$bench" 2>/dev/null; killall -q hackbench; stop_hogs; wait "$bench" 2>/dev/null
wait_for 60 is_enabled
ops=$(sched_ops)
check "scx_rusty attached throughout $ROUNDS storm rounds under hackbench and 40 hogs (ops '$ops', enable_seq $seq0 -> $(enable_seq))" \
    sh -c "kill -0 $SCHED_PID && [ '$ops' = rusty ] && [ $(enable_seq) = $seq0 ]"
expect_clean_exit "scx_rusty (storm under hackbench)" "$LOG"
finish
