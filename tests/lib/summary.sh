# What tests/guest.sh makes of a scenario's boots: whether to boot again, the scenario's line
# in the summary, its part of the failures section, and its results. Source it; it defines
# functions only. None of them fails: the suite runs under set -euo pipefail, and a failing
# command substitution there would end it before its summary. tests/host/summary.sh checks
# them against sample consoles.

. "$(dirname "${BASH_SOURCE[0]}")/panic.sh"

# A BPF program cannot crash the kernel (the verifier sees to that), so a guest kernel panic
# is the kernel's or the emulator's doing. One is known to be the emulator's: under
# multi-threaded TCG, in up to one boot in five, "Oops: int3" while sched_ext flips its static
# keys (see vm/run.sh). A failed boot that shows it, panicked or not, is booted again, at most
# MAX_PANIC_RETRIES times, and the scenario is then reported flaky; the checks of such a boot
# do not count (the oops stalls a CPU for seconds), but the next boot's do. Any other panic,
# or a failed check without that oops, fails at once. Three
# such boots in a row were seen once (scx_bpfland on 6.19, while the host was busy building).
MAX_PANIC_RETRIES=4

# vm/run.sh's exit status when the boot ran out of time.
VM_TIMEOUT_RC=124

# The result lines a scenario prints (vm/guest/lib.sh); HANG: a CPU hotplug write or an
# attach that did not return.
RESULT_RE='^(PASS|FAIL|SKIP|NOTE|HANG|ALL PASSED|[0-9]+ FAILED)'
# The lines that say what went wrong, repeated in the failures section.
FAILURE_RE='^(FAIL|PANIC|HANG)'

# boot_outcome LOG RC RETRIES: what one boot came to, from its console LOG, vm/run.sh's exit
# status RC and the number of boots already retried:
#   ok      the scenario passed
#   retry   the boot failed and shows the emulator's int3 oops, retries left: boot again
#   panic   a kernel panic that is not the emulator's
#   failed  anything else: a failed check, a timeout, the retries used up
boot_outcome() {
    local log=$1 rc=$2 retries=$3 verdict
    verdict=$(panic_verdict "$log")
    if [ "$verdict" = other ]; then
        echo panic
    elif [ "$rc" -eq 0 ]; then
        echo ok
    elif [ "$verdict" = emulator-int3 ] && [ "$retries" -lt "$MAX_PANIC_RETRIES" ]; then
        echo retry
    else
        echo failed
    fi
}

# retry_note OUTCOME RETRIES: the summary's note on the emulator oopses retried, if any: a
# scenario that passed only on a later boot is flaky, not clean.
retry_note() {
    local outcome=$1 retries=$2
    [ "$retries" -gt 0 ] || return 0
    case $outcome in
        ok) echo " (flaky: $retries emulator int3 oops retried)" ;;
        *) echo " (after $retries emulator int3 oops retried)" ;;
    esac
}

# summary_line OUTCOME NAME TOOK_S RC RETRIES: the scenario's line in the summary. A timeout
# is named: the console of a hung guest may end anywhere.
summary_line() {
    local outcome=$1 name=$2 took_s=$3 rc=$4 retries=$5 note
    note=$(retry_note "$outcome" "$retries")
    [ "$rc" -ne "$VM_TIMEOUT_RC" ] || note=" (timed out)$note"
    case $outcome in
        ok) echo "ok     $name, $took_s s$note" ;;
        *) echo "FAILED $name, $took_s s$note" ;;
    esac
}

# failure_report NAME LOG: the scenario's part of the failures section: its failure lines,
# the excerpt of the kernel's dump for a scheduler it ejected (the first one, between the
# guest's EJECTED lines), and the end of its console when no check failed (a panic, a hang,
# a timeout).
failure_report() {
    local name=$1 log=$2
    echo "$name:"
    grep -aE "$FAILURE_RE" "$log" | head -n 8 || true
    awk '!shown && /^EJECTED / { shown = 1 } shown { print } shown && /^EJECTED end$/ { exit }' "$log" |
        head -n 80 || true
    grep -aqE '^FAIL' "$log" || tail -n 12 "$log"
}

# scenario_results LOG: the scenario's result lines, and the end of its console unless it
# passed.
scenario_results() {
    local log=$1
    grep -aE "$RESULT_RE" "$log" || echo "(no results: see the console below)"
    grep -aqE '^ALL PASSED' "$log" || tail -n 40 "$log"
}
