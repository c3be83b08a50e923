# vm: --tcg-threads single
# CPU hotplug storms under load, for every scheduler in one boot: one CPU, then all but CPU
# 0, going off and on again, many times in a row: the arguments EVENTS and RUSTY_EVENTS
# (defaults 60 and 8, to keep the suite short; vm/run.sh --tcg-threads single ...
# tests/guest/hotplug.sh -- 200 200 for the full storm, about 2 min per scheduler plus 6 s a
# scx_rusty restart). A write that does not return, or a hung task, ends the boot at once
# with the blocked tasks' stacks (lib.sh: set_cpu_online, watch_hung_tasks). scx_simple,
# scx_bpfland and scx_rustland follow each event without a restart (ops.cpu_online /
# ops.cpu_offline) and must stay attached throughout; scx_rusty rebuilds its domains, so it
# asks for a restart on each event.
. /scxkit/lib.sh
EVENTS=${1:-60}
RUSTY_EVENTS=${2:-8}

storm() {
    local name=$1 ops=$2 events=$3 mode=$4 log=/tmp/$1.log; shift 4
    start_sched "$log" "$name" "$@"
    expect_loaded "$name" "$ops" "$log"
    hotplug_storm "$name" "$ops" "$log" "$events" "$mode"
    expect_clean_exit "$name" "$log"
    echo "---- $name: $(count_matches "$log" 'followed without a restart') events followed, $(count_matches "$log" 'asked for a restart') restarts"
}

storm scx_simple simple "$EVENTS" follows
# CPU 1 of the primary domain goes offline and back, by turns. (With the whole primary
# domain going, 0x2: open, see the README: a review saw the watchdog eject it under heavy load.)
storm scx_bpfland bpfland "$EVENTS" follows --primary-domain 0x3
storm scx_rustland rustland "$EVENTS" follows
storm scx_rusty rusty "$RUSTY_EVENTS" restarts
finish
