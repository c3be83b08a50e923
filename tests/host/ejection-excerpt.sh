#!/usr/bin/env bash
# Host test of ejection_excerpt (vm/guest/lib.sh), which a failed guest check prints for each
# scheduler the kernel ejected: the sample is a real scx_simple log (7.3, a watchdog stall),
# and the same log as if the kernel had named a stalled task.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/vm/guest/lib.sh"
sample=$top/tests/fixtures/scheduler-log/ejected-watchdog.log
failed=0

# expect WHAT TEXT GREP-ARGS...: passes when grep GREP-ARGS finds a line of TEXT.
expect() {
    local what=$1 text=$2; shift 2
    if grep -q "$@" <<<"$text"; then echo "PASS $what"; else
        echo "FAIL $what: no grep $* in:"; sed 's/^/    /' <<<"$text"; failed=1; fi
}

# expect_none WHAT TEXT GREP-ARGS...: passes when grep GREP-ARGS finds no line of TEXT.
expect_none() {
    local what=$1 text=$2; shift 2
    if ! grep -q "$@" <<<"$text"; then echo "PASS $what"; else
        echo "FAIL $what: grep $* finds:"; grep "$@" <<<"$text" | sed 's/^/    /'; failed=1; fi
}

reason=$(grep -m 1 "ejected by the kernel" "$sample")
got=$(ejection_excerpt "$sample" "$reason")
expect "the exit's header is kept" "$got" -F "stress-ng-cpu[131] triggered exit kind 1026 on CPU 1:"
expect "each CPU's state is kept" "$got" -x "CPU 0   : nr_run=8 flags=0x101 cpu_rel=0 ksync=1"
expect "what each CPU runs is kept" "$got" -F "curr=stress-ng-cpu[131] class=ext_sched_class"
expect_none "with no stalled task named, no task record" "$got" -F "dsq_vtime="
expect_none "the event counters are left out" "$got" "SCX_EV_"
expect_none "the exit's backtrace is left out" "$got" "scx_vexit"
[ "$(wc -l <<<"$got")" -le 20 ] && echo "PASS a short excerpt ($(wc -l <<<"$got") lines)" ||
    { echo "FAIL the excerpt is $(wc -l <<<"$got") lines"; failed=1; }

# A scheduler with an ops.dump (scx_bpfland, 7.3, a watchdog stall): its own state is kept.
bpfland=$top/tests/fixtures/scheduler-log/ejected-bpfland.log
got=$(ejection_excerpt "$bpfland" "$(grep -m 1 "ejected by the kernel" "$bpfland")")
expect "the scheduler's own dump is kept" "$got" -F "bpfland: waiting since 432 ms ago (0: none), unserved 1, primary saturated 1"
expect "each of its lines" "$got" -F "bpfland: CPU 1: primary 1, offline 0 (bits 0), busy for 437 ms"
expect "the CPU states after it" "$got" -x "CPU 1   : nr_run=9 flags=0x101 cpu_rel=0 ksync=3"
expect_none "its backtrace is still left out" "$got" "scx_vexit"
[ "$(wc -l <<<"$got")" -le 24 ] && echo "PASS a short excerpt ($(wc -l <<<"$got") lines)" ||
    { echo "FAIL the excerpt is $(wc -l <<<"$got") lines"; failed=1; }

reason="Error: scx_simple ejected by the kernel: runnable task stall (ERROR_STALL): stress-ng-cpu[126] failed to run for 0.504s"
got=$(ejection_excerpt "$sample" "$reason")
expect "the stalled task's record is kept" "$got" -F "  R stress-ng-cpu[126] *root -420ms"
expect "with its queue" "$got" -F "dsq_vtime=0 slice=1000000000 weight=100"
expect "and its backtrace" "$got" -x "    asm_sysvec_apic_timer_interrupt+0x1a/0x20"
expect_none "other tasks' records are left out" "$got" -F "stress-ng-cpu[128] *root"
expect_none "the next task's record is left out" "$got" -F "stress-ng-cpu[127]"
exit $failed
