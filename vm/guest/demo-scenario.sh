# Demo inside the guest: a scheduler with live stats while stress-ng keeps every CPU busy.
#   demo-scenario.sh SECONDS SCHEDULER [ARGS...]
. /scxkit/lib.sh
secs=$1; shift
echo "==== starting $* (stats every second), then ${secs} s of stress-ng on $(nproc) CPUs"
"$@" --stats 1 &
pid=$!
wait_for 60 is_enabled || { echo "the scheduler did not load"; exit 1; }
echo "==== sched_ext: $(sched_state), scheduler: $(sched_ops)"
stress-ng --cpu "$(nproc)" --switch 2 --timeout "${secs}s" --quiet &
load=$!
sleep 2
for p in $(pidof stress-ng | tr " " "\n" | head -n 3); do
    echo "==== stress-ng pid $p: $(grep ext.enabled /proc/$p/sched | tr -s ' ')"
done
wait "$load"
kill -INT "$pid"; wait "$pid"; rc=$?
echo "==== stopped (status $rc); sched_ext is now $(sched_state)"
exit $rc
