# Helpers for guest scenarios (busybox sh). Source with: . /scxkit/lib.sh
# Every check prints "PASS name" or "FAIL name: why"; `finish` exits non-zero if any failed.

SCXK_FAILS=0

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; SCXK_FAILS=$((SCXK_FAILS + 1)); }

# check NAME COMMAND...: passes when COMMAND succeeds.
check() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name" "'$*' failed"; fi; }

# wait_for SECONDS COMMAND...: polls COMMAND every 0.2 s; fails after SECONDS.
wait_for() {
    local limit=$1 i=0; shift
    while [ "$i" -lt $((limit * 5)) ]; do
        "$@" 2>/dev/null && return 0
        sleep 0.2; i=$((i + 1))
    done
    return 1
}

sched_state() { cat /sys/kernel/sched_ext/state 2>/dev/null; }
sched_ops() { cat /sys/kernel/sched_ext/root/ops 2>/dev/null; }
is_enabled() { [ "$(sched_state)" = enabled ]; }
is_disabled() { [ "$(sched_state)" = disabled ]; }

# ext_enabled PID: the task is in the sched_ext class.
ext_enabled() { grep -q '^ext.enabled *: *1' "/proc/$1/sched" 2>/dev/null; }

# last_cpu PID: the CPU the task last ran on (field 39 of /proc/PID/stat).
last_cpu() { sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f37; }

finish() {
    if [ "$SCXK_FAILS" -eq 0 ]; then echo "ALL PASSED"; return 0; fi
    echo "$SCXK_FAILS FAILED"; return 1
}
