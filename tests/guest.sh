#!/usr/bin/env bash
# Runs guest integration scenarios: builds the schedulers, boots each chosen kernel once per
# scenario and reports PASS/FAIL lines.
#   tests/guest.sh [--kernel SERIES]... [SCENARIO...]
# Defaults: kernels 6.19 and 7.3 (oldest and newest), every tests/guest/*.sh.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kernels=() scenarios=()
while [ $# -gt 0 ]; do
    case $1 in
        --kernel) kernels+=("$2"); shift 2 ;;
        *) scenarios+=("$1"); shift ;;
    esac
done
[ ${#kernels[@]} -gt 0 ] || kernels=(6.19 7.3)
[ ${#scenarios[@]} -gt 0 ] || scenarios=("$top"/tests/guest/*.sh)

cargo build --quiet --manifest-path "$top/Cargo.toml" --workspace --bins
bins=()
for b in "$top"/target/debug/scx_*; do [ -x "$b" ] && [ -f "$b" ] && bins+=(--add "$b"); done

failed=0 summary=()
for kernel in "${kernels[@]}"; do
    for scenario in "${scenarios[@]}"; do
        name="$(basename "$scenario" .sh) on $kernel"
        echo "==== $name"
        log=$(mktemp)
        if "$top/vm/run.sh" --kernel "$kernel" --timeout 900 "${bins[@]}" --log "$log" "$scenario" >/dev/null; then
            summary+=("ok     $name")
        else
            summary+=("FAILED $name"); failed=1
        fi
        grep -aE '^(PASS|FAIL|ALL PASSED|[0-9]+ FAILED)' "$log" || echo "(no results: see the console below)"
        grep -aqE '^ALL PASSED' "$log" || tail -n 40 "$log"
        rm -f "$log"
    done
done
printf '%s\n' "==== summary" "${summary[@]}"
exit $failed
