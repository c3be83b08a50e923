# Benchmark scenario inside the guest: EEVDF first, every scheduler of the plan in its order,
# EEVDF again last (the drift check), the same workloads for each, in one boot. Prints
# "BENCH <label> <figure> <value...>" lines for bench/report.py.
#   scenario.sh MODE SECONDS PLAN
# MODE: throughput (hackbench over pipes, stress-ng CPU and matrix, a fork/exec burst) or latency
# (cyclictest under CPU hogs, a shell command under hogs and a fork storm, request/response
# wakeups) or desktop (a 60 Hz frame loop, shell commands and build jobs, under a background
# of build jobs and CPU hogs that doubles twice) or build (a real make -j compile beside CPU
# hogs, real uname and ps timed meanwhile: the Debian guest) or compile (the same compile,
# no hogs). PLAN: lines
# "LABEL<TAB>COMMAND" (see bench/run.sh).
. /scxkit/lib.sh
mode=$1 secs=$2 plan=$3
ncpu=$(nproc)
# Histogram range of cyclictest, in microseconds; later samples count as overflows.
HIST_MAX_US=100000
# Shell commands timed per suite: enough for a p99.
SHELL_RUNS=150
# Programs started in the fork/exec burst.
BURST_EXECS=300
# hackbench: 10 groups of 20 senders and 20 receivers over pipes (400 tasks). With pipes the
# time is mostly context switches and wakeups, the scheduler's part: EEVDF took 13.9 s and
# scx_bpfland 8.5 s at 200 loops on one vCPU. Over sockets (the default), every scheduler
# took 1.7-1.8 s with 5 to 1 the switches: the messages' cost, not the scheduler's.
HACKBENCH_ARGS="-p -g 10 -l 100"
# CPU hogs under the latency workloads: two on one vCPU, one per vCPU otherwise.
hogs_n=$ncpu; [ "$ncpu" -eq 1 ] && hogs_n=2
# The desktop's background at its lightest, per vCPU: build job streams (20 ms of CPU each)
# and CPU hogs; then twice and four times that.
DESKTOP_LEVELS="1 2 4"
# The longest a desktop level's timed shell commands may take, s.
RUNS_LIMIT_S=$((secs * 3))
# A frame costs a quarter of a 60 Hz period of CPU time.
FRAME_WORK_US=4000

# bogo_per_s LABEL FIGURE STRESSOR: the BENCH line of STRESSOR's bogo ops per second (real
# time), read from stress-ng --metrics-brief's report on stdin.
bogo_per_s() {
    awk -v l="$1" -v fig="$2" -v s="$3" '$0 ~ " " s " +[0-9]" {
        for (i = 1; i <= NF; i++) if ($i == s && $(i + 5) ~ /^[0-9.]+$/) { print "BENCH", l, fig, $(i + 5); exit } }'
}

# Context switches on every CPU since boot (/proc/stat).
context_switches() { awk '$1 == "ctxt" { print $2 }' /proc/stat; }

throughput_suite() {
    local label=$1 i switches_before time_s
    for i in 1 2 3; do
        switches_before=$(context_switches)
        # shellcheck disable=SC2086 # a word list
        time_s=$(hackbench $HACKBENCH_ARGS 2>&1 | sed -n "s/^Time: *\([0-9.]*\).*/\1/p")
        # A run that printed no time counts neither figure.
        [ -n "$time_s" ] || continue
        echo "BENCH $label hackbench_pipe_s $time_s"
        echo "BENCH $label hackbench_switches_k $(( ($(context_switches) - switches_before) / 1000 ))"
    done
    stress-ng --cpu "$ncpu" --cpu-method int64 --timeout "${secs}s" --metrics-brief 2>&1 | bogo_per_s "$label" cpu_bogo_per_s cpu
    stress-ng --matrix "$ncpu" --timeout "${secs}s" --metrics-brief 2>&1 | bogo_per_s "$label" matrix_bogo_per_s matrix
    scxkit-probe run-latency --count "$BURST_EXECS" -- /bin/true \
        | awk -v l="$label" '{ us += $1 } END { if (us > 0) printf "BENCH %s forkexec_per_s %.1f\n", l, NR * 1e6 / us }'
}

latency_suite() {
    local label=$1 hogs
    stress-ng --cpu "$hogs_n" --timeout "$((secs + 3))s" --quiet & hogs=$!
    sleep 2
    cyclictest --policy=other -i 1000 -D "${secs}" -q -m -h "$HIST_MAX_US" 2>&1 \
        | grep -v ' 000000$' | sed "s/^/BENCH $label cyclictest /"
    wait "$hogs"
    stress-ng --cpu "$hogs_n" --fork 2 --timeout 600s --quiet & hogs=$!
    sleep 2
    scxkit-probe run-latency --count "$SHELL_RUNS" --interval-ms 30 -- uname -r | sed "s/^/BENCH $label shell_us /"
    kill "$hogs"; wait "$hogs" 2>/dev/null
    scxkit-probe wakeup --groups "$ncpu" --workers 4 --work-us 200 --seconds "$secs" | sed "s/^/BENCH $label /"
}

# timed_runs LABEL FIGURE COUNT INTERVAL_MS COMMAND...: COUNT runs of COMMAND timed, as
# FIGURE. Under a scheduler that starves it, the runs end after RUNS_LIMIT_S and the figure
# is reported failed: the boot goes on to the next scheduler instead of timing out.
timed_runs() {
    local label=$1 figure=$2 count=$3 interval_ms=$4 rc=0
    shift 4
    timeout "$RUNS_LIMIT_S" scxkit-probe run-latency --count "$count" --interval-ms "$interval_ms" -- "$@" \
        > /tmp/runs.txt || rc=$?
    # Percentiles of the runs that finished would leave out the slowest: none is reported.
    if [ "$rc" -eq 0 ]; then sed "s/^/BENCH $label $figure /" /tmp/runs.txt
    else echo "BENCH $label failed $figure: $(wc -l < /tmp/runs.txt) of $count runs of $1 in ${RUNS_LIMIT_S} s"; fi
}

# desktop_level LABEL LEVEL: the frame loop for SECONDS, `uname` and `ps` timed meanwhile,
# under LEVEL x (build job stream + CPU hog) per vCPU. Figures end in _xLEVEL.
desktop_level() {
    local label=$1 level=$2 n=$(($2 * ncpu)) hogs jobs frames tag
    tag="s/^\([a-z0-9_]*\) /BENCH $label \1_x$level /"
    stress-ng --cpu "$n" --timeout 600s --quiet & hogs=$!
    scxkit-probe build-jobs --parallel "$n" --job-cpu-ms 20 --seconds "$((secs + 2))" > /tmp/jobs.txt & jobs=$!
    sleep 1
    scxkit-probe frames --work-us "$FRAME_WORK_US" --seconds "$secs" > /tmp/frames.txt & frames=$!
    timed_runs "$label" "uname_us_x$level" 30 100 uname -r
    timed_runs "$label" "ps_us_x$level" 15 200 ps
    wait "$frames"; wait "$jobs"
    kill "$hogs"; wait "$hogs" 2>/dev/null
    sed "$tag" /tmp/frames.txt /tmp/jobs.txt
}

desktop_suite() {
    local level
    for level in $DESKTOP_LEVELS; do desktop_level "$1" "$level"; done
}

# The build mode's project: BUILD_FILES C files of BUILD_FUNCS functions of loops and
# branches each, for gcc -O2 (a file takes about a second on a vCPU of the icount guest).
BUILD_FILES=12
BUILD_FUNCS=2
BUILD_DIR=/tmp/build-project
BUILD_STOP=/tmp/build-stop

make_build_project() {
    local i=0
    rm -rf "$BUILD_DIR"; mkdir -p "$BUILD_DIR"
    while [ "$i" -lt "$BUILD_FILES" ]; do
        awk -v file="$i" -v funcs="$BUILD_FUNCS" 'BEGIN {
            for (f = 0; f < funcs; f++) {
                printf "long f%d_%d(long *v, int n) {\n  long s = 0;\n", file, f
                printf "  for (int i = 0; i < n; i++) {\n    switch ((v[i] + %d) %% 5) {\n", f
                for (c = 0; c < 5; c++) printf "    case %d: s += v[i] * %d - (s >> %d); break;\n", c, c + f, c + 1
                printf "    }\n    if (s > %d) s = s / 3 + v[(i * %d) %% n];\n  }\n  return s;\n}\n", 100000 + f, f + 7
            }
        }' > "$BUILD_DIR/unit$i.c"
        i=$((i + 1))
    done
    printf 'SRCS := $(wildcard unit*.c)\nall: $(SRCS:.c=.o)\n%%.o: %%.c\n\tgcc -O2 -c $< -o $@\n' > "$BUILD_DIR/Makefile"
}

# build_project: one whole build from clean, twice as many jobs as vCPUs.
build_project() {
    rm -f "$BUILD_DIR"/*.o
    make -s -C "$BUILD_DIR" -j "$((2 * ncpu))" all
}

# Makes the project, then one unmeasured build and `ps axuw`: the first EEVDF run otherwise
# found gcc, make and procps cold, half of the baseline.
build_warm_up() {
    make_build_project
    build_project > /dev/null
    ps axuw > /dev/null
}

# build_loop LABEL [MIN_BUILDS]: whole builds, one after another, for at least SECONDS and until
# BUILD_STOP appears, and MIN_BUILDS (default 1); prints the files compiled per second and a
# whole build's time, and adds the files compiled to the count in BUILD_STOP.files.
build_loop() {
    local label=$1 min_builds=${2:-1} builds=0 start_us deadline_us
    start_us=$(now_us) deadline_us=$(( $(now_us) + secs * 1000000 ))
    while [ "$(now_us)" -lt "$deadline_us" ] || [ ! -e "$BUILD_STOP" ] || [ "$builds" -lt "$min_builds" ]; do
        build_project || { echo "BENCH $label failed make"; return; }
        builds=$((builds + 1))
    done
    echo "$(( $(files_compiled) + builds * BUILD_FILES ))" > "$BUILD_STOP.files"
    awk -v n="$((builds * BUILD_FILES))" -v b="$builds" -v us="$(( $(now_us) - start_us ))" -v l="$label" \
        'BEGIN { printf "BENCH %s build_files_per_s %.3f\nBENCH %s build_s %.2f\n", l, n * 1e6 / us, l, us / 1e6 / b }'
}

# files_compiled: the files compiled since the suite began (0 before any).
files_compiled() { cat "$BUILD_STOP.files" 2>/dev/null || echo 0; }

TRACING=/sys/kernel/tracing
MIGRATE_EVENT=$TRACING/events/sched/sched_migrate_task

# migrations_start: every task's migration from now on is traced (the kernel's
# sched_migrate_task, whatever the scheduler); false where tracefs is missing.
migrations_start() {
    [ -d "$MIGRATE_EVENT" ] || mount -t tracefs tracefs "$TRACING" 2>/dev/null
    [ -d "$MIGRATE_EVENT" ] || return 1
    echo 4096 > "$TRACING/buffer_size_kb"
    echo 1 > "$MIGRATE_EVENT/enable"
    : > "$TRACING/trace"
}

# migrations_report LABEL FILES: stops the trace; prints the migrations, and those to another
# NUMA node, per file compiled (lower: tasks stay near their caches and memory), or, if the
# trace buffer overran, a failure instead (the counts would be short).
migrations_report() {
    local label=$1 files=$2 overrun
    echo 0 > "$MIGRATE_EVENT/enable"
    overrun=$(cat "$TRACING"/per_cpu/cpu*/stats | awk '/^overrun:/ { n += $2 } END { print n + 0 }')
    if [ "$overrun" -ne 0 ]; then
        # Short counts would read as fewer migrations: no figure rather than a wrong one.
        echo "BENCH $label failed trace overran by $overrun events"; : > "$TRACING/trace"; return
    fi
    for node in /sys/devices/system/node/node[0-9]*; do echo "${node##*node} $(cat "$node/cpulist")"; done > /tmp/cpu-nodes
    awk -v l="$label" -v files="$files" '
        FNR == NR { n = split($2, ranges, ","); for (i = 1; i <= n; i++) { split(ranges[i], r, "-");
                    if (r[2] == "") r[2] = r[1]; for (c = r[1] + 0; c <= r[2] + 0; c++) node[c] = $1 } next }
        /sched_migrate_task:/ { from = to = ""
            for (i = 1; i <= NF; i++) { if ($i ~ /^orig_cpu=/) from = substr($i, 10); if ($i ~ /^dest_cpu=/) to = substr($i, 10) }
            if (from == "" || to == "") next
            moves++; if (node[from] != node[to]) far++ }
        END { if (files > 0) printf "BENCH %s migrations_per_file %.1f\nBENCH %s node_changes_per_file %.2f\n", l, moves / files, l, far / files }
    ' /tmp/cpu-nodes "$TRACING/trace"
    : > "$TRACING/trace"
}

# build_probes LABEL: real `uname -r` and `ps axuw`, timed.
build_probes() {
    scxkit-probe run-latency --count 30 --interval-ms 100 -- uname -r | sed "s/^/BENCH $1 uname_us /"
    scxkit-probe run-latency --count 15 --interval-ms 200 -- ps axuw | sed "s/^/BENCH $1 ps_us /"
}

# build_suite LABEL: a real compile over and over beside one CPU hog per vCPU (the seeds'
# `make -j` with `stress-ng -c`), real `uname -r` and `ps axuw` timed meanwhile. The project
# is made by build_warm_up, before the first suite.
build_suite() {
    local label=$1 hogs build traced=0
    rm -f "$BUILD_STOP" "$BUILD_STOP.files"
    migrations_start && traced=1
    stress-ng --cpu "$ncpu" --timeout 600s --metrics-brief > /tmp/build-hogs.txt 2>&1 & hogs=$!
    build_loop "$label" & build=$!
    sleep 1
    build_probes "$label"
    touch "$BUILD_STOP"
    wait "$build"
    # SIGINT: stress-ng then reports its work, the hogs' share beside the compile's.
    kill -INT "$hogs"; wait "$hogs" 2>/dev/null
    bogo_per_s "$label" hogs_bogo_per_s cpu < /tmp/build-hogs.txt
    [ "$traced" -eq 0 ] || migrations_report "$label" "$(files_compiled)"
}

# Whole builds the compile mode times, at the least.
COMPILE_BUILDS=3

# compile_suite LABEL: the compile alone, timed over whole builds (at least COMPILE_BUILDS
# and SECONDS); then `uname -r` and `ps axuw` timed beside more builds, whose time is not
# counted. Timed together, the probes' own CPU took a larger share of a shorter window under
# a scheduler that ran them sooner, and read as a slower compile.
compile_suite() {
    local label=$1 build traced=0
    rm -f "$BUILD_STOP" "$BUILD_STOP.files"
    migrations_start && traced=1
    touch "$BUILD_STOP"
    build_loop "$label" "$COMPILE_BUILDS"
    [ "$traced" -eq 0 ] || migrations_report "$label" "$(files_compiled)"
    rm -f "$BUILD_STOP"
    build_loop "$label-beside-probes" > /dev/null & build=$!
    sleep 1
    build_probes "$label"
    touch "$BUILD_STOP"
    wait "$build"
}

suite() {
    echo "==== $1 ($2)"
    case $mode in
        throughput) throughput_suite "$1" ;;
        latency) latency_suite "$1" ;;
        desktop) desktop_suite "$1" ;;
        build) build_suite "$1" ;;
        compile) compile_suite "$1" ;;
    esac
}

# process_cpu_ticks PID: the CPU time of the process, all threads, user and system, in
# USER_HZ ticks (10 ms).
process_cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }

# run_scheduler LABEL COMMAND: loads it, runs the suite under it, stops it.
run_scheduler() {
    local label=$1 cmd=$2 pid rc totals decisions cpu_ms started_us ticks ticks0 attached_ms
    # shellcheck disable=SC2086 # the command is a word list
    $cmd > "/tmp/$label.log" 2>&1 & pid=$!
    if ! wait_for 60 is_enabled; then
        echo "BENCH $label failed did not load"; tail -n 5 "/tmp/$label.log"; kill "$pid" 2>/dev/null; return
    fi
    started_us=$(now_us) ticks0=$(process_cpu_ticks "$pid")
    suite "$label" "$cmd"
    # Any scheduler's own process (upstream's too): its share of one CPU while attached, its
    # userspace threads only (BPF callbacks are charged to the tasks they run for). Not
    # on several vCPUs in the reproducible mode: there a task is charged the other vCPUs'
    # turns too, whenever its own vCPU's turn ends while it runs (a scheduler that executed
    # less read 20% of a CPU against another's 70%).
    if [ "$ncpu" -eq 1 ] || [ "$mode" = latency ] || [ "$mode" = desktop ]; then
        # Less what loading cost (BPF verification, topology): the share while attached.
        ticks=$(( $(process_cpu_ticks "$pid") - ticks0 )) attached_ms=$(( ($(now_us) - started_us) / 1000 ))
        echo "BENCH $label sched_cpu_pct $(awk -v t="$ticks" -v ms="$attached_ms" 'BEGIN { printf "%.2f", t * 1000 / ms }')"
    fi
    kill -INT "$pid"; wait "$pid"; rc=$?
    wait_for 10 is_disabled || echo "BENCH $label failed still loaded after SIGINT"
    [ "$rc" -eq 0 ] || { echo "BENCH $label failed exit status $rc"; tail -n 5 "/tmp/$label.log"; }
    # A userspace policy's cost (scxkit's framework): its CPU time per decision.
    totals=$(grep "totals:" "/tmp/$label.log" | tail -n 1)
    decisions=$(echo "$totals" | sed -n 's/.*: user \([0-9]*\) .*/\1/p')
    cpu_ms=$(echo "$totals" | sed -n 's/.* cpu \([0-9]*\) ms.*/\1/p')
    [ -n "$decisions" ] && [ -n "$cpu_ms" ] &&
        echo "BENCH $label overhead $decisions $cpu_ms $(( ($(now_us) - started_us) / 1000 ))"
    # scx_rusty's own moves to another node (the balancer's, applied; "applied NODE/DOMAIN" on
    # its totals line) per file the build mode compiled.
    case $mode in build|compile) ;; *) return 0 ;; esac
    echo "$totals" | awk -v l="$label" -v files="$(files_compiled)" '
        match($0, /applied [0-9]+\//) { moves = substr($0, RSTART + 8, RLENGTH - 9) }
        END { if (files > 0 && moves != "") printf "BENCH %s rusty_node_homes_per_file %.2f\n", l, moves / files }'
    return 0
}

# A first, unmeasured run: measured here, the first EEVDF run of a boot otherwise came out
# up to twice as slow as the last (the guest was still settling).
stress-ng --cpu "$ncpu" --timeout 3s --quiet
case $mode in build|compile) build_warm_up ;; esac
suite eevdf1 "EEVDF, first"
# The plan on descriptor 3: nothing a scheduler or workload reads from stdin eats it.
while IFS="$(printf '\t')" read -r label cmd <&3; do
    [ -n "$label" ] && run_scheduler "$label" "$cmd" < /dev/null
done 3< "$plan"
suite eevdf2 "EEVDF, last"
