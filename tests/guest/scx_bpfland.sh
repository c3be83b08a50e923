# Guest integration test of scx_bpfland (run by tests/guest.sh inside a 4-CPU, 2-node guest).
. /scxkit/lib.sh
LOG=/tmp/scx_bpfland.log

expect_refused "--primary-domain beyond the CPUs refused" "CPU 8 is beyond this machine's 4 CPUs" \
    scx_bpfland --primary-domain 0x100
expect_refused "--primary-domain with a bad character refused" "'x' is not a hex digit" \
    scx_bpfland --primary-domain xyz
expect_refused "empty --primary-domain refused" "empty cpumask" scx_bpfland --primary-domain ''
expect_refused "unknown option refused" "unexpected argument '--turbo'" scx_bpfland --turbo
expect_refused "slice below the minimum refused" "must not exceed --slice-us" \
    scx_bpfland --slice-us 500 --slice-min-us 1000

# 1. Primary domain 0x3: light tasks stay on CPUs 0-1; four hogs overflow onto every CPU.
# This shell and the scheduler stay off the primary domain so they do not crowd it.
taskset -p -c 2,3 $$ >/dev/null
# Under TCG a vCPU can stall for milliseconds while the host runs the others, so two short
# bursts can look like the default 5 ms of saturation (50 ms was seen too); 200 ms keeps its noise out
# of the light-task check. The hogs below saturate for seconds and overflow regardless.
start_sched "$LOG" scx_bpfland --primary-domain 0x3 --overflow-delay-us 200000 --stats 1
expect_loaded scx_bpfland bpfland "$LOG"
expect_ext_task scx_bpfland
# Two light tasks, started once the scheduler is in charge so that it places them from their
# first run: CPU workers busy 5% of the time in 2 ms bursts, so they wake often and their
# processor field stays fresh; no forks (a fork and exec under TCG keeps a CPU busy for
# milliseconds and is not light).
taskset -c 0-3 stress-ng --cpu 2 --cpu-load 5 --cpu-load-slice 2 --timeout 60s --quiet & light=$!
sleep 1
# Only the workers: the parent sleeps throughout.
light_pids=$(pidof stress-ng | tr ' ' '\n' | grep -v "^$light\$")
seen=$(cpus_seen 8 $light_pids)
if grep -q "scx_bpf_create_dsq cannot be called on this kernel" "$LOG"; then
    skip "light tasks stay on the primary domain 0x3" "this kernel cannot create queues; in the global-FIFO fallback CPUs outside the primary domain take queued work (CPUs seen: $seen)"
elif [ "$seen" = "0" ] || [ "$seen" = "1" ] || [ "$seen" = "0 1" ]; then
    pass "light tasks stay on the primary domain 0x3 (CPUs seen: $seen)"
else
    fail "light tasks stay on the primary domain 0x3" "CPUs seen: $seen; overflow seen: $(grep -o 'overflow [1-9][0-9]*' "$LOG" | tr '\n' ' ')"
fi
kill $light; wait $light 2>/dev/null
# The hogs phase needs no room kept free: this shell may run anywhere again.
taskset -p -c 0-3 $$ >/dev/null
taskset -c 0-3 stress-ng --cpu 4 --timeout 14s --quiet & hogs=$!
sleep 2
seen=$(cpus_seen 10 $(pidof stress-ng))
if [ "$seen" = "0 1 2 3" ]; then pass "four hogs overflow onto every CPU (CPUs seen: $seen)"
else fail "four hogs overflow onto every CPU" "CPUs seen: $seen; stats: $(tail -n 6 "$LOG")"; fi
wait $hogs
check "overflow counted in the stats" grep -q "overflow [1-9]" "$LOG"
expect_clean_exit scx_bpfland "$LOG"

# 2. Classification, mixed stress, metrics, unload (every CPU primary).
taskset -c 0-3 sh -c 'while :; do usleep 10000; done' & sleeper=$!
taskset -c 0-3 sh -c 'while :; do :; done' & hog=$!
LOG2=/tmp/scx_bpfland-2.log
start_sched "$LOG2" scx_bpfland --stats 1 --watch-pid "$sleeper,$hog" --enable-prometheus
expect_loaded scx_bpfland bpfland "$LOG2"
sleep 4
if grep "pid $sleeper:" "$LOG2" | tail -n 1 | grep -q ": interactive"; then
    pass "a periodic sleeper is interactive ($(grep "pid $sleeper:" "$LOG2" | tail -n 1 | cut -c7-))"
else fail "a periodic sleeper is interactive" "$(grep "pid $sleeper:" "$LOG2" | tail -n 2)"; fi
if grep "pid $hog:" "$LOG2" | tail -n 1 | grep -q ": regular"; then
    pass "a CPU hog is regular ($(grep "pid $hog:" "$LOG2" | tail -n 1 | cut -c7-))"
else fail "a CPU hog is regular" "$(grep "pid $hog:" "$LOG2" | tail -n 2)"; fi
kill $sleeper $hog
expect_prometheus scx_bpfland 'dispatched_tasks_total{scheduler="scx_bpfland",type="direct"}'
stress-ng --cpu 2 --fork 1 --switch 1 --vm 1 --vm-bytes 64M --cyclic 1 --timeout 60s --quiet >/dev/null 2>&1
if kill -0 "$SCHED_PID" && is_enabled && [ "$(sched_ops)" = bpfland ]; then
    pass "scx_bpfland survives 60 s of mixed stress (cpu, fork, switch, vm, cyclic)"
else fail "scx_bpfland survives 60 s of mixed stress" "state $(sched_state)"; fi
check "interactive tasks counted" grep -q "interactive tasks [1-9]" "$LOG2"
expect_clean_exit scx_bpfland "$LOG2"
echo "---- scx_bpfland log (first run) ----"; tail -n 15 "$LOG"
echo "---- scx_bpfland log (second run) ----"; tail -n 15 "$LOG2"
finish
