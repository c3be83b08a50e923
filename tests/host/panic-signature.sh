#!/usr/bin/env bash
# Host test of tests/lib/panic.sh: the verdict tests/guest.sh acts on, for each sample console
# of tests/fixtures/console/. The samples follow the kernel's report formats; only an
# "Oops: int3" that comes first, panicked or survived, on multi-threaded TCG may be retried;
# anything else must fail the scenario.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/panic.sh"
fixtures=$top/tests/fixtures/console

# Sample console, then the verdict it must get.
expected=(
    int3-oops.log             emulator-int3
    null-deref.log            other
    int3-after-null-deref.log other
    hung-task.log             other
    int3-oops-survived.log    emulator-int3
    int3-oops-single-thread.log other
    clean.log                 none
)

failed=0
for ((i = 0; i < ${#expected[@]}; i += 2)); do
    sample=${expected[i]} want=${expected[i + 1]}
    got=$(panic_verdict "$fixtures/$sample")
    if [ "$got" = "$want" ]; then
        echo "PASS panic verdict of $sample: $got"
    else
        echo "FAIL panic verdict of $sample: $got, expected $want"
        failed=1
    fi
done

# The lines printed for a failed boot name the fault and the panic.
lines=$(panic_lines "$fixtures/null-deref.log")
for want in 'BUG: kernel NULL pointer dereference' 'RIP: 0010:scx_dsq_move' 'Kernel panic - not syncing'; do
    if grep -qF "$want" <<<"$lines"; then
        echo "PASS panic lines of null-deref.log show '$want'"
    else
        echo "FAIL panic lines of null-deref.log miss '$want'"
        failed=1
    fi
done
exit $failed
