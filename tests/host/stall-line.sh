#!/usr/bin/env bash
# Host test of kernel_stall_line (vm/guest/lib.sh), on which the guest's stall watcher ends a
# boot: hung tasks and RCU stalls are stalls, a clean console and a panic are not; and of
# kernel_stall_report, the line it prints with the RCU report's details. The RCU
# sample is a console of a hotplug run that waited out its whole timeout.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/vm/guest/lib.sh"
fixtures=$top/tests/fixtures/console

# Sample console, then the text its stall line must hold ("-" for none).
expected=(
    hung-task.log       'INFO: task stress-ng:233 blocked for more than 122 seconds.'
    rcu-stall.log       'rcu: rcu_preempt kthread starved for 162801 jiffies!'
    rcu-self-stall.log  'rcu: INFO: rcu_preempt self-detected stall on CPU'
    clean.log           -
    null-deref.log      -
)

failed=0
for ((i = 0; i < ${#expected[@]}; i += 2)); do
    sample=${expected[i]} want=${expected[i + 1]}
    got=$(kernel_stall_line < "$fixtures/$sample" || true)
    if { [ "$want" = - ] && [ -z "$got" ]; } || { [ "$want" != - ] && [[ "$got" == *"$want"* ]]; }; then
        echo "PASS stall line of $sample: ${got:--}"
    else
        echo "FAIL stall line of $sample: '${got}', expected '$want'"
        failed=1
    fi
done

# The report the stall watcher prints: the stall line, then what names the stalled CPU.
got=$(kernel_stall_report < "$fixtures/rcu-self-stall.log")
if [[ "$got" == *"self-detected stall on CPU | 1-....: (5250 ticks this GP)"* ]]; then
    echo "PASS the stall report names the stalled CPU: $got"
else
    echo "FAIL the stall report of rcu-self-stall.log: '$got'"
    failed=1
fi
# Without dmesg's timestamps (a console that prints none), the details still follow.
got=$(sed 's/^\[[^]]*\] //' "$fixtures/rcu-self-stall.log" | kernel_stall_report)
if [[ "$got" == *"self-detected stall on CPU | 1-....: (5250 ticks this GP)"* ]]; then
    echo "PASS the stall report without timestamps names the stalled CPU"
else
    echo "FAIL the stall report without timestamps: '$got'"
    failed=1
fi
# A starved RCU kthread: its advice and stack-dump headings do not take the details' room.
got=$(kernel_stall_report < "$fixtures/rcu-stall.log")
if [[ "$got" != *"Unless"* && "$got" != *"stack dump"* && "$got" == *"(detected by 2, t=178559 jiffies"* ]]; then
    echo "PASS the starved kthread's report keeps the details, not the advice"
else
    echo "FAIL the starved kthread's report: '$got'"
    failed=1
fi
exit $failed
