# Helpers for guest scenarios (busybox sh in the initramfs, bash in the Debian guest).
# Source with: . /scxkit/lib.sh
# Every check prints "PASS name" or "FAIL name: why"; `finish` exits non-zero if any failed.

# The Debian guest keeps what a scenario leaves for its next boot here (the initramfs has
# no such thing): the failures so far, the number of boots.
GUEST_STATE=/var/lib/scxkit-guest
REBOOT_FLAG=/run/scxkit-guest-rebooting
SCXK_FAILS=$(cat "$GUEST_STATE/fails" 2>/dev/null || echo 0)

# busybox has usleep; Debian's sleep takes fractions.
command -v usleep >/dev/null 2>&1 || usleep() { sleep "$(($1 / 1000000)).$(printf '%06d' $(($1 % 1000000)))"; }

# reboot_guest: (Debian guest) reboots; the runner then starts the scenario again, with
# SCXKIT_BOOT one higher and the failures so far counted.
reboot_guest() {
    echo "$SCXK_FAILS" > "$GUEST_STATE/fails"
    : > "$REBOOT_FLAG"
    echo "scxkit-guest: rebooting"
    systemctl reboot
    sleep 600
    exit 0
}

# Each result ends with the seconds since the previous one (or since boot), so that a slow
# check stands out: "PASS what [12 s]".
SCXK_LAST_RESULT_S=0
took() {
    local now_s; now_s=$(cut -d. -f1 /proc/uptime)
    SCXK_TOOK_S=$((now_s - SCXK_LAST_RESULT_S)) SCXK_LAST_RESULT_S=$now_s
}
pass() { took; echo "PASS $1 [$SCXK_TOOK_S s]"; }
# skip NAME WHY: a check that cannot apply here, with the reason; not a failure.
skip() { echo "SKIP $1: $2"; }
# note TEXT: a fact the summary should show (a fallback in use, a figure), not a check.
note() { echo "NOTE $1"; }
fail() { took; echo "FAIL $1 [$SCXK_TOOK_S s]: $2"; SCXK_FAILS=$((SCXK_FAILS + 1)); report_ejections; }

# report_ejections: after a failed check, the excerpt of each scheduler log in /tmp that
# records an ejection by the kernel, once per log, between "EJECTED LOG: REASON" and
# "EJECTED end" lines (the host's failure report keeps them). A check that fails because the
# kernel ejected the scheduler is explained by the dump, not by the log's last lines.
SCXK_EJECTIONS_SHOWN=" "
report_ejections() {
    local log reason
    # An ejection in progress: the scheduler prints the dump once the kernel has disabled it.
    if [ "$(sched_state)" = disabling ]; then wait_for 10 is_not_disabling; sleep 1; fi
    for log in /tmp/*.log; do
        case $SCXK_EJECTIONS_SHOWN in *" $log "*) continue ;; esac
        reason=$(grep -m 1 "ejected by the kernel" "$log" 2>/dev/null) || continue
        SCXK_EJECTIONS_SHOWN="$SCXK_EJECTIONS_SHOWN$log "
        echo "EJECTED $log: $reason"
        ejection_excerpt "$log" "$reason" | head -n 120
        echo "EJECTED end"
    done
}

# ejection_excerpt LOG REASON: from the kernel's debug dump in a scheduler's LOG, what
# explains an ejection: the exit's own header, the scheduler's own state (its ops.dump
# lines, unindented, between the exit's backtrace and the CPU states), each CPU's state
# (what it runs, its queue lengths) and, when REASON names a stalled task ("comm[pid] failed
# to run"), that task's record with its backtrace. Other tasks' records and the event
# counters are left out.
ejection_excerpt() {
    local task
    task=$(echo "$2" | sed -n 's/.*: \([^ ]*\[[0-9]*\]\) failed to run for.*/\1/p')
    awk -v task="$task" '
        /^---- the kernel.s debug dump/ { dump = 1; header = 1; next }
        /^---- end of dump/ || /^Event counters/ { dump = 0 }
        !dump { next }
        header { if (/^Backtrace:/) { header = 0; own = 1 } else print; next }
        /^CPU states/ { own = 0 }
        own { if (/^[^ ]/) print; next }
        /^CPU [0-9]+ *:/ { block = "cpu"; print; next }
        /^ *\*?R / { block = (task != "" && index($0, " " task " ")) ? "task" : ""; blanks = 0 }
        /^$/ { if (block == "cpu") block = ""; if (block == "task" && ++blanks == 2) block = "" }
        block != "" { print }
    ' "$1"
}

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

# lacks_user_queues LOG: the scheduler logged that this kernel cannot create queues (7.1/7.2):
# its queues are all the kernel's global FIFO.
lacks_user_queues() { grep -q "scx_bpf_create_dsq cannot be called on this kernel" "$1"; }
sched_state() { cat /sys/kernel/sched_ext/state 2>/dev/null; }
sched_ops() { cat /sys/kernel/sched_ext/root/ops 2>/dev/null; }
is_enabled() { [ "$(sched_state)" = enabled ]; }
is_disabled() { [ "$(sched_state)" = disabled ]; }
is_not_disabling() { [ "$(sched_state)" != disabling ]; }

# ext_enabled PID: the task is in the sched_ext class.
ext_enabled() { grep -q '^ext.enabled *: *1' "/proc/$1/sched" 2>/dev/null; }

# stat_field PID N: field N of /proc/PID/stat (N >= 3; the command name is skipped safely).
stat_field() {
    local line n=$2
    read -r line < "/proc/$1/stat" || return 1
    set -- ${line##*) }
    shift $((n - 3))
    echo "$1"
}

# last_cpu PID: the CPU the task last ran on (field 39 of /proc/PID/stat). Shell builtins
# only: a sampler that forks would itself load the CPUs it is watching.
last_cpu() { stat_field "$1" 39; }

# count_matches LOG PATTERN: how many lines of LOG match PATTERN.
count_matches() { grep -c -- "$2" "$1" 2>/dev/null || true; }

# How long one CPU on/offline write may take (a few seconds under load in the emulator)
# before the guest is called hung.
HOTPLUG_LIMIT_S=60

# wait_exit PID SECONDS: waits for PID to end, polling every 0.05 s; fails after SECONDS.
wait_exit() {
    local pid=$1 i=0
    while kill -0 "$pid" 2>/dev/null; do
        [ "$i" -ge $(($2 * 20)) ] && return 1
        usleep 50000; i=$((i + 1))
    done
}

# set_cpu_online CPU 0|1: the write, bounded. One that has not returned within
# HOTPLUG_LIMIT_S is a hang: reported with the blocked tasks and sched_ext's state, and the
# scenario ends at once (the host then ends the guest, which may not power off).
set_cpu_online() {
    local writer
    ( echo "$2" > "/sys/devices/system/cpu/cpu$1/online" ) &
    writer=$!
    wait_exit "$writer" "$HOTPLUG_LIMIT_S" || hang "putting CPU $1 $([ "$2" = 1 ] && echo online || echo offline)"
    wait "$writer"
}

# dump_state: what a hang leaves to explain it: sched_ext's state, each CPU's hotplug state
# and target, the stacks of the blocked tasks (SysRq w, printed at full log level) and of
# what each CPU runs (SysRq l), the tasks runnable on each CPU and, with a scheduler loaded,
# sched_ext's own dump of every CPU's queues (SysRq D).
dump_state() {
    local d
    echo "---- sched_ext: state $(sched_state), ops '$(sched_ops)'," \
        "enable_seq $(cat /sys/kernel/sched_ext/enable_seq 2>/dev/null)," \
        "hotplug_seq $(cat /sys/kernel/sched_ext/hotplug_seq 2>/dev/null)," \
        "online CPUs $(cat /sys/devices/system/cpu/online)"
    for d in /sys/devices/system/cpu/cpu[0-9]*/hotplug; do
        echo "${d%/hotplug}: hotplug state $(cat "$d/state" 2>/dev/null), target $(cat "$d/target" 2>/dev/null)"
    done
    echo 1 > /proc/sys/kernel/sysrq
    # The console shows errors only (loglevel=4): a warning the kernel printed before says
    # what went wrong first.
    dmesg | grep -A 30 -m 1 -e "-\[ cut here \]-" | head -n 40
    dmesg -n 7 2>/dev/null
    echo w > /proc/sysrq-trigger
    echo l > /proc/sysrq-trigger
    runnable_tasks
    # Bounded: reading the trace buffer may wait for what is stuck.
    if ! is_disabled; then
        sched_ext_dump & wait_exit $! 15 || echo "---- sched_ext's dump did not come within 15 s"
    fi
    sleep 1
    scheduler_log_end
    echo "---- end of the blocked tasks and sched_ext's dump"
}

# runnable_tasks: what each CPU runs and has runnable (the kernel's scheduler debug file): a
# task that waits for a CPU shows nowhere else.
runnable_tasks() {
    local pid
    echo "---- runnable tasks per CPU"
    grep -E "^cpu#|^ *>?R " /sys/kernel/debug/sched/debug 2>/dev/null | head -n 80
    for pid in $(sed -n 's/^>R *[^ ]* *\([0-9]*\) .*/\1/p' /sys/kernel/debug/sched/debug 2>/dev/null); do
        echo "---- running: $pid $(cat /proc/$pid/comm 2>/dev/null), CPUs $(sed -n 's/^Cpus_allowed_list:\t*//p' /proc/$pid/status 2>/dev/null)"
        grep -E "^(ext\.|policy|prio|nr_switches|nr_voluntary|nr_involuntary)" /proc/$pid/sched 2>/dev/null
    done
}

# scheduler_log_end: the end of the newest scheduler log in /tmp, after a moment: the
# kernel ejects a scheduler on an RCU stall too, and the scheduler then prints the kernel's
# dump of its queues, taken at the stall (SysRq D, later, finds it gone).
scheduler_log_end() {
    local log
    log=$(ls -t /tmp/*.log 2>/dev/null | head -n 1)
    [ -n "$log" ] || return 0
    sleep 2
    echo "---- the end of $log"
    tail -n 150 "$log"
}

# sched_ext_dump: sched_ext's own dump of every CPU's queues (SysRq D). It goes to its trace
# event only, enabled at boot (enabling it now would wait for the CPU hotplug lock, which a
# stuck hotplug holds). Only this dump's lines are shown: emptying the trace buffer instead
# waits for an RCU grace period, which a stall never ends.
sched_ext_dump() {
    local t=/sys/kernel/tracing/trace before
    enable_sched_ext_dump
    before=$(grep -c "sched_ext_dump: " "$t" 2>/dev/null)
    echo D > /proc/sysrq-trigger
    sleep 1
    grep "sched_ext_dump: " "$t" 2>/dev/null | tail -n "+$((${before:-0} + 1))" | sed 's/.*sched_ext_dump: //' | head -n 300
}

# enable_sched_ext_dump: turns on the trace event that carries sched_ext's dump (SysRq D), if
# it is not on yet.
enable_sched_ext_dump() {
    local e=/sys/kernel/tracing/events/sched_ext/sched_ext_dump/enable
    [ "$(cat "$e" 2>/dev/null)" = 1 ] || echo 1 > "$e" 2>/dev/null
}

# The kernel's hung-task report comes after this long in D state (its default, 120 s, made a
# hang wait out the whole boot's timeout).
HUNG_TASK_S=45

# What marks a kernel log line as a stall report (kernel_stall_line); vm/run.sh reads the
# console for it too.
KERNEL_STALL_ERE='blocked for more than|INFO: rcu_[a-z_]+ (self-detected stall|detected (expedited )?stalls)|rcu_[a-z_]+ kthread starved for'

# kernel_stall_line: the first line of a kernel log (stdin) that says the kernel is stuck:
# tasks blocked (the hung-task report), or an RCU stall: a CPU, a task or RCU's own kthread
# that has not run for the stall timeout (21 s). A runnable task that no CPU runs shows as the
# latter only: with the scheduler's helper waiting for that grace period, sched_ext's own
# watchdog never fires.
kernel_stall_line() {
    kernel_stall_report | sed 's/ | .*//'
}

# kernel_stall_report: from a console on stdin, the first stall line (kernel_stall_line) and
# up to three of the RCU report's next lines (with or without dmesg's timestamps; its advice
# and stack-dump headings skipped), which name the stalled CPUs or the blocked tasks, joined
# by " | " on one line: the failures section keeps only that line.
kernel_stall_report() {
    awk -v stall_re="$KERNEL_STALL_ERE" '
        !found && $0 ~ stall_re {
            found = 1; out = $0; next
        }
        found && /Unless rcu_|RCU grace-period kthread stack dump|Stack dump where RCU GP kthread/ { next }
        found && more < 3 && /(^|\] )rcu: / { sub(/^(.*\] )?rcu: */, ""); gsub(/\t/, ""); out = out " | " $0; more++; next }
        found { exit }
        END { if (found) print out }
    '
}

# How long the guest's state may take to print after a stall, s.
STATE_DUMP_LIMIT_S=90

# watch_kernel_stalls: run in the background by /init. On the kernel's first hung-task or RCU
# stall report, explains the guest's state and ends the boot (the host stops a guest that
# cannot power off). Not real-time: while it ran SCHED_FIFO, 3 runs of tests/guest/hotplug.sh
# in about 10 ended in RCU stalls (scx_simple once, scx_rustland twice, 6.19), none before
# (not understood; see README).
watch_kernel_stalls() {
    local line
    echo "$HUNG_TASK_S" > /proc/sys/kernel/hung_task_timeout_secs 2>/dev/null || return 0
    enable_sched_ext_dump
    while sleep 5; do
        line=$(dmesg | kernel_stall_report)
        [ -n "$line" ] || continue
        echo "HANG the kernel reports a stall: $line; the guest's state follows"
        # Bounded: a step of the dump may wait for what is stuck (vm/run.sh stops a guest
        # that has not reported by then either).
        dump_state & wait_exit $! "$STATE_DUMP_LIMIT_S" || echo "---- the guest's state did not come within $STATE_DUMP_LIMIT_S s"
        echo "SCXKIT_SCENARIO_EXIT=3"
        poweroff -f
    done
}

# hang WHAT: WHAT has not returned in time: say so, explain, and end the scenario now.
hang() {
    echo "HANG $1 has not returned within ${HOTPLUG_LIMIT_S} s; the guest's state follows"
    dump_state
    echo "$((SCXK_FAILS + 1)) FAILED"
    exit 3
}

finish() {
    if [ "$SCXK_FAILS" -eq 0 ]; then echo "ALL PASSED"; return 0; fi
    echo "$SCXK_FAILS FAILED"; return 1
}

# ---- scheduler life-cycle helpers, shared by every scheduler's scenario ----

# start_sched LOG CMD...: starts a scheduler in the background, sets SCHED_PID.
start_sched() {
    local log=$1; shift
    "$@" > "$log" 2>&1 &
    SCHED_PID=$!
}

# expect_loaded NAME OPS LOG: the scheduler got enabled within 60 s under ops name OPS. An
# attach still under way after that is a hang.
expect_loaded() {
    if wait_for 60 is_enabled && [ "$(sched_ops)" = "$2" ]; then
        pass "$1 loads (state enabled, root/ops '$2')"
    elif [ "$(sched_state)" = enabling ]; then
        hang "attaching $1"
    else
        fail "$1 loads" "state '$(sched_state)', ops '$(sched_ops)'; log: $(tail -n 20 "$3")"
    fi
}

# expect_refused NAME PATTERN CMD...: CMD exits non-zero, prints PATTERN and loads nothing
# (sched_ext's state and loaded ops are the same before and after).
expect_refused() {
    local name=$1 pattern=$2 out rc before; shift 2
    before="$(sched_state) $(sched_ops)"
    out=$("$@" 2>&1); rc=$?
    if [ "$rc" -ne 0 ] && echo "$out" | grep -q -- "$pattern" && [ "$(sched_state) $(sched_ops)" = "$before" ]; then
        pass "$name"
    else
        fail "$name" "rc=$rc state=$(sched_state), output: $(echo "$out" | head -n 5)"
    fi
}

# expect_clean_exit NAME LOG: SIGINT stops SCHED_PID within 30 s, status 0, sched_ext off,
# and the exit reason was printed.
expect_clean_exit() {
    local name=$1 log=$2 rc
    kill -INT "$SCHED_PID"
    if ! wait_for 30 sh -c "! kill -0 $SCHED_PID"; then
        fail "$name stops on SIGINT" "still running after 30 s"; kill -KILL "$SCHED_PID"; return
    fi
    wait "$SCHED_PID"; rc=$?
    if [ "$rc" -eq 0 ] && wait_for 10 is_disabled && grep -q "exited: unregistered from user space" "$log"; then
        pass "$name stops on SIGINT, prints the exit reason, sched_ext disabled"
    else
        fail "$name stops on SIGINT" "rc=$rc state=$(sched_state); log: $(tail -n 5 "$log")"
    fi
}

# expect_ext_task NAME: a freshly started task runs in the sched_ext class.
expect_ext_task() {
    sh -c 'while :; do :; done' & local hog=$!
    if wait_for 10 ext_enabled "$hog"; then pass "$1: user tasks run in the ext class"
    else fail "$1: user tasks run in the ext class" "$(grep ext.enabled /proc/$hog/sched)"; fi
    kill "$hog"; wait "$hog" 2>/dev/null
}

# expect_survives NAME SECONDS OPS: stress-ng cpu, fork and context-switch load for SECONDS;
# the scheduler must still be loaded and alive afterwards.
expect_survives() {
    local name=$1 secs=$2 ops=$3 n; n=$(nproc)
    stress-ng --cpu "$n" --fork 2 --switch 2 --timeout "${secs}s" --quiet >/dev/null 2>&1
    if kill -0 "$SCHED_PID" 2>/dev/null && is_enabled && [ "$(sched_ops)" = "$ops" ]; then
        pass "$name survives ${secs} s of stress-ng (cpu, fork, switch)"
    else
        fail "$name survives ${secs} s of stress-ng" "state $(sched_state), ops '$(sched_ops)'"
    fi
}

enable_seq() { cat /sys/kernel/sched_ext/enable_seq 2>/dev/null; }

# expect_cpu_away_followed NAME OPS LOG: a scheduler built for the CPUs online at load
# (scx_rusty's domains) follows CPU n-1 going away for longer than a rebuild waits for the
# CPUs to settle (REBUILD_AFTER_QUIET, 2 s), and coming back: no reload, no restart, and its
# balancer's capacities follow the CPUs online ("balancing for CPUs ...").
expect_cpu_away_followed() {
    local name=$1 ops=$2 log=$3 cpu seq0 rebuilds0 without with ok=1; cpu=$(( $(nproc) - 1 ))
    seq0=$(enable_seq) rebuilds0=$(count_matches "$log" "restarting: .*settled on")
    set_cpu_online "$cpu" 0
    without=$(cat /sys/devices/system/cpu/online)
    wait_for 20 sh -c "grep 'balancing for CPUs' $log | tail -n 1 | grep -q 'CPUs $without:'" || ok=0
    sleep 3
    set_cpu_online "$cpu" 1
    with=$(cat /sys/devices/system/cpu/online)
    wait_for 20 sh -c "grep 'balancing for CPUs' $log | tail -n 1 | grep -q 'CPUs $with:'" || ok=0
    if [ "$ok" = 1 ] && [ "$(enable_seq)" = "$seq0" ] && [ "$(count_matches "$log" "restarting: .*settled on")" = "$rebuilds0" ] \
            && [ "$(kernel_restarts "$log")" = 0 ] && is_enabled && [ "$(sched_ops)" = "$ops" ] && kill -0 "$SCHED_PID"; then
        pass "$name follows CPU $cpu away for seconds and back without a reload (enable_seq $seq0 unchanged), balancing for CPUs $without, then $with"
    else
        fail "$name follows a CPU away and back without a reload" "enable_seq $seq0 -> $(enable_seq), state $(sched_state); log: $(grep -E 'balancing for|restart|settled' "$log" | tail -n 4)"
    fi
}

# expect_rebuilt_for_new_cpu NAME OPS LOG CPU: LOG's scheduler, loaded while CPU was offline
# (its domains have no place for it), is loaded again by itself for the CPUs online once CPU
# comes online and they settle.
expect_rebuilt_for_new_cpu() {
    local name=$1 ops=$2 log=$3 cpu=$4 seq0 rebuilds0 with
    seq0=$(enable_seq) rebuilds0=$(count_matches "$log" "restarting: .*settled on")
    set_cpu_online "$cpu" 1
    with=$(cat /sys/devices/system/cpu/online)
    if rebuilt_for "$log" "$with" $((rebuilds0 + 1)) && [ "$(enable_seq)" -ge $((seq0 + 1)) ] \
            && [ "$(sched_ops)" = "$ops" ] && [ "$(kernel_restarts "$log")" = 0 ] && kill -0 "$SCHED_PID"; then
        pass "$name, loaded with CPU $cpu offline, is loaded again for CPUs $with once it comes online (enable_seq $seq0 -> $(enable_seq))"
    else
        fail "$name is loaded again for a CPU that came online" "enable_seq $seq0 -> $(enable_seq), state $(sched_state); log: $(grep -E 'restart|settled|followed' "$log" | tail -n 4)"
    fi
}

# kernel_restarts LOG: how many times the kernel asked LOG's scheduler for a restart, other
# than by refusing an attach made while a CPU went on or offline (a rebuild's reload may take
# a while under load, and a storm goes on meanwhile).
kernel_restarts() {
    grep "asked for a restart" "$1" 2>/dev/null | grep -vc "hotplug seq .* did not match" || true
}

# rebuilt_for LOG CPUS N: within 30 s, the Nth rebuild of LOG's scheduler is for CPUS, and it
# is attached again.
rebuilt_for() {
    wait_for 30 sh -c "[ \$(grep -c 'restarting: .*settled on' $1) -ge $3 ] && grep 'restarting: .*settled on' $1 | tail -n 1 | grep -q 'settled on $2:'" \
        && wait_for 30 is_enabled
}

# expect_hotplug_followed NAME OPS LOG: a CPU going offline and back online leaves the
# scheduler attached (no new enable, no restart) and its log says it followed.
expect_hotplug_followed() {
    local name=$1 ops=$2 log=$3 cpu seq0 restarts0 followed0; cpu=$(( $(nproc) - 1 ))
    seq0=$(enable_seq) restarts0=$(count_matches "$log" "asked for a restart")
    followed0=$(count_matches "$log" "followed without a restart")
    set_cpu_online "$cpu" 0
    wait_for 10 sh -c "[ \$(grep -c 'followed without a restart' $log) -gt $followed0 ]"
    set_cpu_online "$cpu" 1
    if wait_for 10 sh -c "[ \$(grep -c 'followed without a restart' $log) -ge $((followed0 + 2)) ]" \
            && [ "$(enable_seq)" = "$seq0" ] && [ "$(count_matches "$log" "asked for a restart")" = "$restarts0" ] \
            && is_enabled && [ "$(sched_ops)" = "$ops" ] && kill -0 "$SCHED_PID"; then
        pass "$name follows CPU $cpu going offline and online without a restart (enable_seq $seq0 unchanged)"
    else
        fail "$name follows hotplug without a restart" "enable_seq $seq0 -> $(enable_seq), state $(sched_state); log: $(tail -n 4 "$log")"
    fi
}

# hotplug_storm NAME OPS LOG EVENTS MODE: EVENTS CPU on/offline writes in a row under CPU
# and fork load: CPU n-1 alone, then CPUs 1 to n-1 together, by turns (CPU 0 stays). The
# kernel must never eject the scheduler. MODE "follows": it stays attached throughout
# (enable_seq unchanged); "rebuilds": the runtime may load it again for the CPUs online
# where a pause lets them settle (Hotplug::RebuildsForNewCpus, for a CPU offline at load).
hotplug_storm() {
    local name=$1 ops=$2 log=$3 events=$4 mode=$5 last i=0 cpu seq0 start_s load pinned pair
    last=$(( $(nproc) - 1 ))
    seq0=$(enable_seq) start_s=$(cut -d. -f1 /proc/uptime)
    # Besides hogs and forks, tasks bound to the CPUs that go away: one to CPU n-1 alone,
    # one to CPUs 1 and n-1.
    stress-ng --cpu "$(nproc)" --fork 1 --timeout 3600s --quiet & load=$!
    taskset -c "$last" stress-ng --cpu 1 --cpu-load 50 --timeout 3600s --quiet & pinned=$!
    taskset -c "1,$last" stress-ng --cpu 1 --cpu-load 30 --timeout 3600s --quiet & pair=$!
    while [ "$i" -lt "$events" ]; do

        if [ $(( (i / 4) % 2 )) -eq 0 ]; then
            set_cpu_online "$last" $(( i % 2 == 0 ? 0 : 1 ))
        else
            for cpu in $(seq 1 "$last"); do set_cpu_online "$cpu" $(( i % 2 == 0 ? 0 : 1 )); done
        fi
        [ "$mode" = rebuilds ] && ! wait_for 60 is_enabled && break
        i=$((i + 1))
    done
    kill "$load" "$pinned" "$pair"; wait "$load" "$pinned" "$pair" 2>/dev/null
    for cpu in $(seq 1 "$last"); do set_cpu_online "$cpu" 1; done
    wait_for 60 is_enabled
    if [ "$i" -eq "$events" ] && kill -0 "$SCHED_PID" && is_enabled && [ "$(sched_ops)" = "$ops" ] \
            && [ "$(kernel_restarts "$log")" = 0 ] \
            && { [ "$mode" = rebuilds ] || [ "$(enable_seq)" = "$seq0" ]; }; then
        pass "$name: $events hotplug events under load (one CPU, then $last, by turns) in $(( $(cut -d. -f1 /proc/uptime) - start_s )) s, $mode, still loaded (enable_seq $seq0 -> $(enable_seq))"
    else
        fail "$name: $events hotplug events under load" "done $i, state $(sched_state), ops '$(sched_ops)', enable_seq $seq0 -> $(enable_seq); log: $(grep -m 2 -E '^Error|ejected|failed to run' "$log") ... $(tail -n 2 "$log")"
    fi
}

# expect_prometheus NAME SERIES: the scheduler's Prometheus endpoint (default address) serves
# SERIES with a value above zero.
expect_prometheus() {
    local name=$1 series=$2 body value
    wait_for 20 sh -c "wget -q -O /tmp/metrics http://127.0.0.1:9000/metrics && grep -q '^$series' /tmp/metrics"
    body=$(cat /tmp/metrics 2>/dev/null)
    value=$(echo "$body" | grep "^$series" | head -n1 | awk '{print $NF}')
    if [ -n "$value" ] && [ "${value%%.*}" -gt 0 ] 2>/dev/null; then
        pass "$name serves Prometheus metrics ($series = $value)"
    else
        fail "$name serves Prometheus metrics" "no positive $series in: $(echo "$body" | head -n 8)"
    fi
}

# cpus_seen SECONDS PID...: the distinct CPUs the tasks were seen on over SECONDS, sampling
# the processor field of /proc/PID/stat every 0.1 s; prints them sorted, space-separated.
cpus_seen() {
    local secs=$1 i=0 seen="" p c; shift
    while [ "$i" -lt $((secs * 10)) ]; do
        for p in "$@"; do
            c=$(last_cpu "$p") || continue
            case " $seen " in *" $c "*) ;; *) seen="$seen $c" ;; esac
        done
        usleep 100000; i=$((i + 1))
    done
    echo $seen | tr ' ' '\n' | sort -n | tr '\n' ' ' | sed 's/ $//'
}

# cpu_ticks CPU...: busy and total ticks (USER_HZ) of the CPUs so far, from /proc/stat, as
# "BUSY TOTAL". Idle and iowait are not busy.
cpu_ticks() {
    local busy=0 total=0 name user nice sys idle iowait irq softirq steal rest want
    while read -r name user nice sys idle iowait irq softirq steal rest; do
        for want in "$@"; do
            [ "$name" = "cpu$want" ] || continue
            busy=$((busy + user + nice + sys + irq + softirq + steal))
            total=$((total + user + nice + sys + idle + iowait + irq + softirq + steal))
        done
    done < /proc/stat
    echo "$busy $total"
}

# busy_pct SECONDS CPU...: the share of the CPUs' time spent busy over the next SECONDS, in
# percent. Time-integrated, so a task that moves between CPUs is counted wherever it ran.
busy_pct() {
    local secs=$1 b0 t0 b1 t1; shift
    read -r b0 t0 <<EOT
$(cpu_ticks "$@")
EOT
    sleep "$secs"
    read -r b1 t1 <<EOT
$(cpu_ticks "$@")
EOT
    [ "$t1" -gt "$t0" ] || { echo 0; return; }
    echo $(( (b1 - b0) * 100 / (t1 - t0) ))
}

# now_us: the time in microseconds (busybox date with nanoseconds where it has them, else
# /proc/uptime's 10 ms steps: for coarse durations only).
now_us() {
    local ns; ns=$(date +%s%N 2>/dev/null)
    case $ns in
        *N|'') echo $(( $(cut -d' ' -f1 /proc/uptime | tr -d .) * 10000 )) ;;
        *) echo $((ns / 1000)) ;;
    esac
}

# latency_ms CMD...: runs CMD (fork, exec, exit) and prints how long it took, in ms.
latency_ms() { echo $(( $(scxkit-probe run-latency -- "$@") / 1000 )); }

# frames_late_from FILE N: the late frames (index:ms, space-separated) that a frame loop's
# report in FILE (scxkit-probe frames) lists at or after frame N.
frames_late_from() {
    sed -n 's/^frames_late //p' "$1" | tr ',' '\n' | awk -F: -v n="$2" '$1 ~ /^[0-9]+$/ && $1 + 0 >= n' | tr '\n' ' '
}

# start_hogs N [CPUS]: N CPU-bound shell loops (allowed on CPUS only, if given); their pids
# in HOGS.
start_hogs() {
    local i; HOGS=""
    for i in $(seq "$1"); do
        if [ -n "${2:-}" ]; then taskset -c "$2" sh -c 'while :; do :; done' & else sh -c 'while :; do :; done' & fi
        HOGS="$HOGS $!"
    done
}

stop_hogs() { kill $HOGS 2>/dev/null; wait $HOGS 2>/dev/null; HOGS=""; }

# start_fork_loops N: N shells that fork a subshell and wait for it, over and over (a stream
# of short-lived new tasks); their pids in FORKERS.
start_fork_loops() {
    local i; FORKERS=""
    for i in $(seq "$1"); do sh -c 'while :; do ( : ); done' & FORKERS="$FORKERS $!"; done
}

stop_fork_loops() { kill $FORKERS 2>/dev/null; wait $FORKERS 2>/dev/null; FORKERS=""; }

# task_cpu_ns PID: the CPU time PID has run so far, ns (the scheduler's own count, exact
# where a spinning probe's own clock is not; see README on PAUSE in the reproducible mode).
# Without leading zeros: below 1 ms the joined digits start with 0, which shell arithmetic
# reads as octal (an error at the first 8 or 9, which ended a scenario instead of failing it).
task_cpu_ns() {
    sed -n 's/^se.sum_exec_runtime *: *\([0-9]*\)\.\([0-9]*\)$/\1\2/p' "/proc/$1/sched" | sed 's/^0*\([0-9]\)/\1/'
}

# expect_low_weight_turns NAME CPUS MIN LOG: a nice-19 hog behind 40 nice-0 hogs, all allowed
# on CPUS only, gets at least MIN turns in 10 s. Charged 100 times its run, its vruntime runs
# seconds ahead of theirs; only a bound on any task's wait gives it a turn about every second.
# A kernel thread at nice 19 (khugepaged) preempted in an RCU read section, left waiting
# longer, stalls RCU until the kernel ejects the scheduler.
expect_low_weight_turns() {
    local name=$1 cpus=$2 min=$3 log=$4 low turns
    low=$(start_nice19_hog "$cpus")
    sleep 1
    start_hogs 40 "$cpus"
    turns=$(turns_in_10s "$low")
    stop_hogs; kill "$low"; wait "$low" 2>/dev/null
    if [ "$turns" -ge "$min" ]; then
        pass "$name: a nice-19 hog behind 40 hogs on CPUs $cpus gets a turn about every second: $turns turns in 10 s"
    else fail "$name: a nice-19 hog behind 40 hogs keeps getting turns" "$turns turns in 10 s; $(tail -n 2 "$log")"; fi
}

# expect_low_weight_turns_in_crowd NAME MIN LOG: a nice-19 hog started after 400 shell hogs and
# 8 fork loops gets at least MIN turns in 10 s (stress-ng's 400 workers did not show it). Many tasks pass a 1 s bound at once there: a
# bound that takes the first of them in queue order left the nice-19 hog behind them (scx_bpfland
# on one CPU: 1 turn in 40 s; on four, khugepaged waited 36 s until the watchdog ejected it).
expect_low_weight_turns_in_crowd() {
    local name=$1 min=$2 log=$3 low turns
    start_hogs 400
    start_fork_loops 8
    low=$(start_nice19_hog)
    turns=$(turns_in_10s "$low")
    stop_fork_loops; stop_hogs; kill "$low"; wait "$low" 2>/dev/null
    if [ "$turns" -ge "$min" ]; then
        pass "$name: a nice-19 hog behind 400 hogs and 8 fork loops gets a turn about every second: $turns turns in 10 s"
    else fail "$name: a nice-19 hog behind 400 hogs and 8 fork loops keeps getting turns" "$turns turns in 10 s; $(tail -n 2 "$log")"; fi
}

# start_nice19_hog [CPUS]: starts a CPU-bound shell loop at nice 19 (on CPUS only, if given),
# prints its pid.
start_nice19_hog() {
    local low
    if [ -n "${1:-}" ]; then taskset -c "$1" sh -c 'while :; do :; done' >/dev/null & else sh -c 'while :; do :; done' >/dev/null & fi
    low=$!
    renice -n 19 -p "$low" >/dev/null
    echo "$low"
}

# turns_in_10s PID: the times PID got a CPU in 10 s, after 3 s for the load to settle.
turns_in_10s() {
    local turns0
    sleep 3
    turns0=$(cut -d' ' -f3 "/proc/$1/schedstat")
    sleep 10
    echo $(( $(cut -d' ' -f3 "/proc/$1/schedstat") - turns0 ))
}

# wake_avg_us PERIOD_US LOOPS [CPUS]: cyclictest's average wakeup latency of one periodic
# SCHED_OTHER thread (no -p: with one, cyclictest makes the thread real-time, outside
# sched_ext), on CPUS if given. Prints nothing when the thread did not run as SCHED_OTHER
# (priority field not 0).
wake_avg_us() {
    local run="cyclictest -q -t 1 --policy=other -i $1 -l $2 -m"
    [ -n "${3:-}" ] && run="taskset -c $3 $run"
    $run 2>/dev/null | sed -n 's/.* P: *0 .* Avg: *\([0-9]*\).*/\1/p' | tail -n 1
}

# sleeper_10ms_while CONDITION: a shell script that sleeps 10 ms at a time while CONDITION
# (a shell command) succeeds, without forking (a usleep child per sleep made it a fork loop:
# under hogs it slept 8 to 13 times a second, not 100): it reads, with a timeout, a FIFO
# nobody writes to.
sleeper_10ms_while() {
    echo 'f=$(mktemp -u); mkfifo "$f"; exec 3<>"$f"; rm -f "$f"; while '"$1"'; do read -t 0.01 x <&3; done'
}

# The same, forever.
PERIODIC_SLEEPER_10MS=$(sleeper_10ms_while :)

# expect_class NAME PID CLASS LOG: the newest --watch-pid line of PID in LOG ("pid N:
# interactive (...)") gives CLASS. The first line may come late (scx_rustland logs a task
# when it is handed over, which an interactive one is only after a slice of run), and it
# may be the class a task has before any rate was measured ("regular (0 voluntary
# switches/s"): waits up to WATCH_LINE_WAIT_S (seconds of uptime, not turns of the wait) for
# a newest line with a measured rate, then judges that line.
WATCH_LINE_WAIT_S=30
newest_class_line() { grep "pid $1:" "$2" | tail -n 1; }
class_settled() {
    case $(newest_class_line "$1" "$3") in
        '') return 1 ;;
        *"pid $1: $2"*) return 0 ;;
        *"(0 voluntary switches/s"*) return 1 ;;
        *) return 0 ;;
    esac
}
expect_class() {
    local name=$1 pid=$2 class=$3 line end
    end=$(( $(cut -d. -f1 /proc/uptime) + WATCH_LINE_WAIT_S ))
    until class_settled "$pid" "$class" "$4" || [ "$(cut -d. -f1 /proc/uptime)" -ge "$end" ]; do
        sleep 0.2
    done
    line=$(newest_class_line "$pid" "$4")
    case $line in
        '') fail "$name" "no line for pid $pid in $4 within $WATCH_LINE_WAIT_S s" ;;
        *"pid $pid: $class"*) pass "$name (pid ${line#*pid })" ;;
        *) fail "$name" "newest line: $line" ;;
    esac
}
