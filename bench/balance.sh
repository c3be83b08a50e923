#!/usr/bin/env bash
# Balancing benchmark: a scheduler against EEVDF in one boot of a guest with NUMA nodes, on
# work born on one node and on a parallel-build-like load of short jobs. Reports completion
# times, build throughput and how often workers changed node, with ratios to EEVDF and to
# the previous run (kept in ~/.cache/scxkit/bench; SCXKIT_CACHE moves it).
#   bench/balance.sh [--kernel SERIES] [--cpus N --nodes N] [--work K] [SCHEDULER [ARGS...]]
# Defaults: 7.3, 8 CPUs in 2 nodes, work 60, scx_rusty. The guest runs in the reproducible
# mode (icount): the vCPUs take turns on one host thread, so the figures are throughput and
# placement, not latency, and two boots agree within a few percent.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kernel=${SCXKIT_KERNEL:-7.3} cpus=8 nodes=2 work=60
while [ $# -gt 0 ]; do
    case $1 in
        --kernel) kernel=$2; shift 2 ;;
        --cpus) cpus=$2; shift 2 ;;
        --nodes) nodes=$2; shift 2 ;;
        --work) work=$2; shift 2 ;;
        *) break ;;
    esac
done
sched=${1:-scx_rusty}; shift || true
out=${SCXKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scxkit}/bench
"$top/vm/setup-host.sh"
cargo build --quiet --release --manifest-path "$top/Cargo.toml" -p "$sched"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$top/vm/run.sh" --kernel "$kernel" --cpus "$cpus" --nodes "$nodes" --icount --timeout 1800 \
    --add "$top/target/release/$sched" --log "$log" "$top/bench/balance-scenario.sh" -- "$work" "$sched" "$@" \
    | grep -E '^(====|INFO|vm/run)' || true
python3 "$top/bench/balance-report.py" "$log" "$sched" "$kernel" "$out"
