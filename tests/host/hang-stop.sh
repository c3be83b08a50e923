#!/usr/bin/env bash
# Host test of vm/run.sh's hang limit: a guest whose console shows the kernel's RCU stall
# report, and which then never reports (its watcher starved, or its dump stuck), is stopped
# HANG_REPORT_LIMIT_S after it, with status 3 and the stall line, not at the boot's timeout
# (CI's hotplug boot of 2026-12-02 ran out its 900 s after a stall at 114 s). QEMU is a
# stand-in that prints the report and sleeps.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
fake=$(mktemp -d); trap 'rm -rf "$fake"' EXIT
mkdir "$fake/bin"
cat > "$fake/bin/qemu-system-x86_64" <<'QEMU'
#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = -pidfile ] && echo $$ > "$2"; shift; done
echo "[  114.884445] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:"
exec sleep 600
QEMU
chmod +x "$fake/bin/qemu-system-x86_64"
echo 'echo never runs' > "$fake/scenario.sh"

started_s=$SECONDS rc=0
PATH="$fake/bin:$PATH" SCXKIT_HANG_REPORT_LIMIT_S=3 \
    "$top/vm/run.sh" --timeout 60 --log "$fake/log" "$fake/scenario.sh" > "$fake/out" 2>&1 || rc=$?
took_s=$((SECONDS - started_s))
if [ "$rc" -eq 3 ] && [ "$took_s" -lt 40 ] && grep -q '^HANG the guest showed a stall (.*rcu_preempt detected stalls' "$fake/log"; then
    echo "PASS a guest silent after an RCU stall report is stopped in ${took_s} s with status 3"
else
    echo "FAIL a guest silent after an RCU stall report: status $rc after ${took_s} s (want 3, under 40 s); $(tail -n 3 "$fake/out")"
    exit 1
fi
