#!/usr/bin/env bash
# Host test of tests/lib/summary.sh: what tests/guest.sh reports for a scenario, for sample
# consoles of tests/fixtures/console/, then guest.sh itself with a stand-in vm/run.sh. Runs
# under set -euo pipefail, as guest.sh does: a report that fails there ends the suite before
# its summary.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/summary.sh"
fixtures=$top/tests/fixtures/console
failed=0

# expect WHAT TEXT LINE: passes when one line of TEXT is exactly LINE.
expect() {
    local what=$1 text=$2 line=$3
    if grep -qxF -- "$line" <<<"$text"; then
        echo "PASS $what"
    else
        echo "FAIL $what: no line '$line' in:"
        sed 's/^/    /' <<<"$text"
        failed=1
    fi
}

# A boot that ran out of time (vm/run.sh's 124) with hung tasks and no failed check.
log=$fixtures/timeout-no-fail.log name="scx_simple on 7.3"
outcome=$(boot_outcome "$log" 124 0)
expect "a timeout is a failure, not retried" "$outcome" failed
summary=("$(summary_line "$outcome" "$name" 900 124 0)")
failures=("$(failure_report "$name" "$log")")
expect "the summary says the timed-out scenario failed" "${summary[0]}" "FAILED $name, 900 s (timed out)"
expect "the failures section names it" "${failures[0]}" "$name:"
expect "the failures section shows the end of its console" "${failures[0]}" "$(tail -n 1 "$log")"
results=$(scenario_results "$log")
expect "its results show the checks that passed" "$results" "PASS scheduler loaded"
expect "its results show the end of its console" "$results" "$(tail -n 1 "$log")"

# A hang the guest reported.
log=$fixtures/hang-reported.log
hang=$(grep '^HANG ' "$log")
failures=("$(failure_report "$name" "$log")")
expect "a reported hang is in the failures section" "${failures[0]}" "$hang"
expect "a reported hang is in the results" "$(scenario_results "$log")" "$hang"

# Checks that failed because the kernel ejected the scheduler (a real console): the failures
# section keeps the guest's excerpt of the dump, what each CPU ran.
log=$fixtures/ejected.log
failures=("$(failure_report "$name" "$log")")
expect "an ejection's reason is in the failures section" "${failures[0]}" "$(grep -m 1 '^EJECTED /' "$log")"
expect "so is each CPU's state from the dump" "${failures[0]}" "          curr=stress-ng-cpu[130] class=ext_sched_class"
expect "and the failed checks" "${failures[0]}" "FAIL a second failed check: the ejection is reported once"

# A check failed in a boot that survived the emulator's int3 oops: boot again, until the
# retries run out; the same failed check without the oops fails at once.
log=$fixtures/int3-oops-survived.log
expect "a failed boot with the emulator's oops is booted again" "$(boot_outcome "$log" 1 0)" retry
expect "no boot beyond the retries" "$(boot_outcome "$log" 1 "$MAX_PANIC_RETRIES")" failed
expect "a failed check without the oops is not retried" "$(boot_outcome "$fixtures/timeout-no-fail.log" 1 0)" failed

# A scenario that passed.
expect "a passed scenario's line" "$(summary_line ok "$name" 52 0 0)" "ok     $name, 52 s"

# tests/guest.sh itself: a copy whose vm/run.sh replays the timed-out console and exits 124,
# and whose cargo builds nothing. Its output must still end with the summary and failures.
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
mkdir -p "$copy/tests/lib" "$copy/tests/guest" "$copy/vm" "$copy/bin"
cp "$top/tests/guest.sh" "$copy/tests/"
cp "$top"/tests/lib/*.sh "$copy/tests/lib/"
echo 'echo scenario' > "$copy/tests/guest/stalls.sh"
printf '#!/bin/sh\nexit 0\n' > "$copy/bin/cargo"
cat > "$copy/vm/run.sh" <<STUB
#!/usr/bin/env bash
while [ "\$1" != --log ]; do shift; done
cp "$fixtures/timeout-no-fail.log" "\$2"
exit 124
STUB
chmod +x "$copy/bin/cargo" "$copy/vm/run.sh"
rc=0
out=$(PATH="$copy/bin:$PATH" "$copy/tests/guest.sh" --kernel 7.3 2>&1) || rc=$?
expect "guest.sh fails a timed-out scenario" "exit $rc" "exit 1"
expect "guest.sh prints its summary" "$out" "==== summary"
expect "guest.sh's summary says the scenario timed out" "$(sed -E 's/, [0-9]+ s/, N s/' <<<"$out")" \
    "FAILED stalls on 7.3, N s (timed out)"
expect "guest.sh ends with the failures section" "$(tail -n 1 <<<"$out")" "$(tail -n 1 "$fixtures/timeout-no-fail.log")"
exit $failed
