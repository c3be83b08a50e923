#!/usr/bin/env bash
# Host test: every script the busybox guest runs parses in busybox's sh (ash), which has
# none of bash's extensions (a `for ((...))` loop in bench/scenario.sh failed every bench
# boot at once). The Debian guest's scripts run under bash, and are held to the same.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
command -v busybox >/dev/null || { echo "FAIL busybox is missing (vm/setup-host.sh installs it)"; exit 1; }
failed=0
for script in "$top"/vm/guest/init "$top"/vm/guest/*.sh "$top"/bench/*scenario.sh "$top"/tests/guest/*.sh "$top"/tests/guest-long/*.sh; do
    name=${script#"$top"/}
    if out=$(busybox sh -n "$script" 2>&1); then
        echo "PASS busybox sh parses $name"
    else
        echo "FAIL busybox sh parses $name: $out"
        failed=1
    fi
done
exit $failed
