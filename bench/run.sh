#!/usr/bin/env bash
# Benchmarks a scheduler against EEVDF in one guest boot and reports ratios.
#   bench/run.sh [--kernel SERIES] [--seconds N] [--cpus N --nodes N] [SCHEDULER [ARGS...]]
# Defaults: kernel 7.3, 20 s per workload, scx_bpfland, as many vCPUs as host cores (each
# vCPU is a host thread: with more vCPUs than cores, the host's own scheduling of those
# threads dominates wakeup latency and hides the guest's). Writes the table to the terminal
# and the JSON record and PNG chart to ~/.cache/scxkit/bench (SCXKIT_CACHE moves it).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kernel=${SCXKIT_KERNEL:-7.3} secs=20 cpus=$(nproc) nodes=1
while [ $# -gt 0 ]; do
    case $1 in
        --kernel) kernel=$2; shift 2 ;;
        --seconds) secs=$2; shift 2 ;;
        --cpus) cpus=$2; shift 2 ;;
        --nodes) nodes=$2; shift 2 ;;
        *) break ;;
    esac
done
sched=${1:-scx_bpfland}; shift || true
out=${SCXKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scxkit}/bench
"$top/vm/setup-host.sh"
cargo build --quiet --manifest-path "$top/Cargo.toml" --workspace --bins
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# One host thread per vCPU, for latencies to mean anything (see vm/run.sh): a boot may then
# panic in the emulator; run it again.
"$top/vm/run.sh" --kernel "$kernel" --cpus "$cpus" --nodes "$nodes" --tcg-threads multi --timeout $((secs * 8 + 600)) --add "$top/target/debug/$sched" --add "$top/target/debug/scxkit-probe" \
    --log "$log" "$top/bench/scenario.sh" -- "$secs" "$sched" "$@" | grep -E '^(====|INFO|vm/run)' || true
release=$(grep -ao 'scxkit-guest: [^,]*' "$log" | head -n1 | cut -d' ' -f2)
python3 "$top/bench/report.py" "$log" "$sched" "${release:-$kernel}" "$out"
