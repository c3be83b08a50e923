# Guest integration test of scx_simple (run by tests/guest.sh inside the QEMU guest).
. /scxkit/lib.sh
LOG=/tmp/scx_simple.log

expect_refused "unknown option refused" "unexpected argument '--no-such-option'" \
    scx_simple --no-such-option
expect_refused "invalid value refused" "invalid value 'fast' for '--slice-us" \
    scx_simple --slice-us fast
expect_refused "out-of-range value refused" "--stats" scx_simple --stats 0

start_sched "$LOG" scx_simple --stats 1 --enable-prometheus
expect_loaded scx_simple simple "$LOG"
expect_refused "a second scheduler is refused, naming the first" "another sched_ext scheduler is loaded: 'simple'" \
    scx_simple
expect_ext_task scx_simple
expect_survives scx_simple 30 simple
check "stats lines are printed" grep -q "dispatched .*local" "$LOG"
expect_prometheus scx_simple 'dispatched_tasks_total{scheduler="scx_simple",type="shared"}'
expect_hotplug_restart scx_simple simple "$LOG"
expect_clean_exit scx_simple "$LOG"
echo "---- scx_simple log ----"; cat "$LOG"
finish
