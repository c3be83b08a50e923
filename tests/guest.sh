#!/usr/bin/env bash
# Runs guest integration scenarios: builds the schedulers (and the Debian package, when a
# scenario runs on the Debian guest), boots each chosen kernel once per scenario and reports
# PASS/FAIL lines.
#   tests/guest.sh [--kernel SERIES]... [SCENARIO...]
# Defaults: kernels 6.19 and 7.3 (oldest and newest), every tests/guest/*.sh. A scenario may
# narrow the default kernels on a first-lines comment, e.g. "# kernels: 7.3" for a long one
# whose loading the oldest series already proves elsewhere; --kernel runs it anyway.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kernels=() scenarios=()
while [ $# -gt 0 ]; do
    case $1 in
        --kernel) kernels+=("$2"); shift 2 ;;
        *) scenarios+=("$1"); shift ;;
    esac
done
explicit_kernels=${#kernels[@]}
[ ${#kernels[@]} -gt 0 ] || kernels=(6.19 7.3)
[ ${#scenarios[@]} -gt 0 ] || scenarios=("$top"/tests/guest/*.sh)

cargo build --quiet --manifest-path "$top/Cargo.toml" --workspace --bins
bins=()
# Every scheduler, and the probe (workloads and clocks busybox lacks).
for b in "$top"/target/debug/scx_* "$top"/target/debug/scxkit-probe; do [ -x "$b" ] && [ -f "$b" ] && bins+=(--add "$b"); done

. "$top/tests/lib/summary.sh"

# The Debian package (debug binaries), built once, when a scenario on the Debian guest needs it.
deb=""

# A scenario may ask for its own guest on a first-lines comment, e.g. "# vm: --cpus 1 --icount".
# One on the Debian guest ("--rootfs debian") finds the package at /root/scxkit.deb.
run_scenario() {
    local kernel=$1 scenario=$2 log=$3 vm_opts extra=()
    vm_opts=$(sed -n '1,5s/^# vm: //p' "$scenario" | head -n 1)
    if [[ " $vm_opts " == *" --rootfs debian "* ]]; then
        [ -n "$deb" ] || deb=$("$top/packaging/build-deb.sh" --profile dev)
        extra=(--add "$deb:/root/scxkit.deb")
    fi
    # shellcheck disable=SC2086 # vm_opts is a list of options
    "$top/vm/run.sh" --kernel "$kernel" --timeout 900 $vm_opts "${bins[@]}" "${extra[@]}" --log "$log" "$scenario" >/dev/null
}

# wanted_on SCENARIO KERNEL: whether the default run includes this pair.
wanted_on() {
    local only
    [ "$explicit_kernels" -eq 0 ] || return 0
    only=$(sed -n '1,5s/^# kernels: //p' "$1" | head -n 1)
    [ -z "$only" ] || [[ " $only " == *" $2 "* ]]
}

failed=0 summary=() failures=()
for kernel in "${kernels[@]}"; do
    for scenario in "${scenarios[@]}"; do
        wanted_on "$scenario" "$kernel" || continue
        name="$(basename "$scenario" .sh) on $kernel"
        echo "==== $name"
        started_s=$SECONDS
        log=$(mktemp)
        retries=0
        while :; do
            rc=0
            run_scenario "$kernel" "$scenario" "$log" || rc=$?
            outcome=$(boot_outcome "$log" "$rc" "$retries")
            [ "$outcome" = retry ] || break
            retries=$((retries + 1))
            echo "RETRY $name (boot $((retries + 1)) of at most $((MAX_PANIC_RETRIES + 1))):" \
                "the emulator's int3 oops (multi-threaded TCG racing with text patching)"
            panic_lines "$log"
            : > "$log"
        done
        if [ "$outcome" = panic ]; then
            echo "PANIC $name: the guest kernel panicked, and not with the known emulator oops:"
            panic_lines "$log"
        fi
        summary+=("$(summary_line "$outcome" "$name" "$((SECONDS - started_s))" "$rc" "$retries")")
        if [ "$outcome" != ok ]; then
            failed=1
            # Repeated after the summary: the end of the output is what a CI page shows.
            failures+=("$(failure_report "$name" "$log")")
        fi
        scenario_results "$log"
        rm -f "$log"
    done
done
printf '%s\n' "==== summary" "${summary[@]}" "total $((SECONDS / 60)) min $((SECONDS % 60)) s"
[ ${#failures[@]} -eq 0 ] || printf '%s\n' "==== failures" "${failures[@]}"
exit $failed
