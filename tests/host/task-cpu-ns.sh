#!/usr/bin/env bash
# Host test of task_cpu_ns (vm/guest/lib.sh) on this host's own /proc/PID/sched: a number
# shell arithmetic takes as decimal, also for a task that has run under 1 ms (whose joined
# digits start with 0, which busybox's sh read as octal and failed on).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/vm/guest/lib.sh"
command -v busybox >/dev/null || { echo "FAIL busybox is missing (vm/setup-host.sh installs it)"; exit 1; }
[ -r /proc/self/sched ] || { echo "SKIP no /proc/PID/sched on this host"; exit 0; }
# A forked shell that blocks at once, opening a FIFO nobody writes to: it runs well under 1 ms.
fifo=$(mktemp -u); mkfifo "$fifo"
( read -r _ < "$fifo" ) & young=$!
sleep 0.2
ns=$(task_cpu_ns "$young")
kill "$young" 2>/dev/null; rm -f "$fifo"
if [[ "$ns" =~ ^(0|[1-9][0-9]*)$ ]] && busybox sh -c "echo \$(( $ns + 1 ))" >/dev/null 2>&1; then
    echo "PASS task_cpu_ns of a task that has hardly run: $ns ns, a decimal number"
else
    echo "FAIL task_cpu_ns of a task that has hardly run: '$ns'"
    exit 1
fi
