#!/usr/bin/env bash
# Runs the guest integration tests on every sched_ext kernel series the mirror offers.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/vm/setup-host.sh"
args=()
for series in $("$top/vm/kernel.sh" --list); do args+=(--kernel "$series"); done
exec "$top/tests/guest.sh" "${args[@]}" "$@"
