#!/usr/bin/env bash
# The first command: installs what is missing, builds, and runs a scheduler on a demo workload
# with live stats: natively when this kernel has sched_ext, otherwise in the QEMU guest.
#   ./demo.sh [SCHEDULER [ARGS...]]        default: scx_simple
# Environment: DEMO_SECONDS (default 20), SCXKIT_KERNEL (guest series, default 7.3).
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
sched=${1:-scx_simple}; shift || true
secs=${DEMO_SECONDS:-20}

"$top/vm/setup-host.sh"
cargo build --quiet --manifest-path "$top/Cargo.toml" --workspace --bins
bin="$top/target/debug/$sched"
[ -x "$bin" ] || { echo "demo: no scheduler named $sched (have: $(cd "$top/scheds" && ls | tr '\n' ' '))" >&2; exit 2; }

if [ -d /sys/kernel/sched_ext ]; then
    echo "demo: this kernel has sched_ext; running $sched natively for ${secs} s"
    [ "$(id -u)" -eq 0 ] || { echo "demo: loading a scheduler needs root: sudo $0 $sched" >&2; exit 1; }
    stress-ng --cpu "$(nproc)" --switch 2 --timeout "$((secs + 3))s" --quiet &
    timeout -s INT "$secs" "$bin" --stats 1 "$@" || true
    wait
else
    echo "demo: this kernel has no sched_ext; booting the guest kernel ${SCXKIT_KERNEL:-7.3} under QEMU"
    exec "$top/vm/run.sh" --timeout $((secs + 300)) --add "$bin" \
        "$top/vm/guest/demo-scenario.sh" -- "$secs" "$sched" "$@"
fi
