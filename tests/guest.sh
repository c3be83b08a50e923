#!/usr/bin/env bash
# Runs guest integration scenarios: builds the schedulers, boots each chosen kernel once per
# scenario and reports PASS/FAIL lines.
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

# A BPF program cannot crash the kernel (the verifier sees to that), so a guest kernel panic
# is the kernel's or the emulator's doing. One is known to be the emulator's: under
# multi-threaded TCG, in up to one boot in five, "Oops: int3" while sched_ext flips its static
# keys (see vm/run.sh). Only that panic is retried, at most MAX_PANIC_RETRIES times, and the
# scenario is then reported flaky; any other panic, or a failed check, fails at once. Three
# such boots in a row were seen once (scx_bpfland on 6.19, while the host was busy building).
MAX_PANIC_RETRIES=4
. "$top/tests/lib/panic.sh"

# A scenario may ask for its own guest on a first-lines comment, e.g. "# vm: --cpus 1 --icount".
run_scenario() {
    local kernel=$1 scenario=$2 log=$3 vm_opts
    vm_opts=$(sed -n '1,5s/^# vm: //p' "$scenario" | head -n 1)
    # shellcheck disable=SC2086 # vm_opts is a list of options
    "$top/vm/run.sh" --kernel "$kernel" --timeout 900 $vm_opts "${bins[@]}" --log "$log" "$scenario" >/dev/null
}

# retry_note STATUS RETRIES: the summary's note on the emulator oopses retried, if any: a
# scenario that passed only on a later boot is flaky, not clean.
retry_note() {
    local status=$1 retries=$2
    [ "$retries" -gt 0 ] || return 0
    case $status in
        ok) echo " (flaky: $retries emulator int3 oops retried)" ;;
        *) echo " (after $retries emulator int3 oops retried)" ;;
    esac
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
            verdict=$(panic_verdict "$log")
            if [ "$verdict" = other ]; then
                echo "PANIC $name: the guest kernel panicked, and not with the known emulator oops:"
                panic_lines "$log"
                status=FAILED
            elif [ "$rc" -eq 0 ]; then
                status=ok
            elif [ "$verdict" = emulator-int3 ] && [ "$retries" -lt "$MAX_PANIC_RETRIES" ] \
                    && ! grep -aqE '^FAIL ' "$log"; then
                retries=$((retries + 1))
                echo "RETRY $name (boot $((retries + 1)) of at most $((MAX_PANIC_RETRIES + 1))):" \
                    "the emulator's int3 oops (multi-threaded TCG racing with text patching)"
                panic_lines "$log"
                : > "$log"
                continue
            else
                status=FAILED
            fi
            break
        done
        took="$((SECONDS - started_s)) s"
        case $status in
            ok) summary+=("ok     $name, $took$(retry_note ok "$retries")") ;;
            *) summary+=("FAILED $name, $took$(retry_note FAILED "$retries")"); failed=1
               # Repeated after the summary: the end of the output is what a CI page shows.
               failures+=("$name:" "$(grep -aE '^(FAIL|PANIC)' "$log" | head -n 8)")
               grep -aqE '^FAIL' "$log" || failures+=("$(tail -n 12 "$log")") ;;
        esac
        grep -aE '^(PASS|FAIL|SKIP|NOTE|ALL PASSED|[0-9]+ FAILED)' "$log" || echo "(no results: see the console below)"
        grep -aqE '^ALL PASSED' "$log" || tail -n 40 "$log"
        rm -f "$log"
    done
done
printf '%s\n' "==== summary" "${summary[@]}" "total $((SECONDS / 60)) min $((SECONDS % 60)) s"
[ ${#failures[@]} -eq 0 ] || printf '%s\n' "==== failures" "${failures[@]}"
exit $failed
