#!/usr/bin/env bash
# The second command: installs what is missing, then runs every test: host unit tests, then
# the guest integration tests on the oldest and newest kernel series (tests/guest.sh).
#   ./test.sh            all tests
#   ./test.sh --host     host tests only
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
"$top/vm/setup-host.sh"
echo "==== host tests"
cargo test --quiet --manifest-path "$top/Cargo.toml" --workspace
"$top/tests/host/panic-signature.sh"
"$top/tests/host/summary.sh"
"$top/tests/host/stall-line.sh"
"$top/tests/host/hang-stop.sh"
"$top/tests/host/ejection-excerpt.sh"
"$top/tests/host/guest-shell.sh"
"$top/tests/host/task-cpu-ns.sh"
python3 -m unittest discover --quiet -s "$top/bench" -p 'test_*.py'
[ "${1:-}" = "--host" ] && exit 0
echo "==== guest tests"
# The Debian guest's root filesystem (cached; about a minute to build on a fresh machine).
"$top/vm/rootfs.sh" >/dev/null
"$top/tests/guest.sh"
