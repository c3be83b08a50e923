# vm: --cpus 4 --nodes 2 --icount
# kernels: 7.3
# scx_rustland on four CPUs in the reproducible mode: CPU hogs beside a stream of short forks
# (run by tests/guest.sh; one kernel: the policy's order is the same on every series).
. /scxkit/lib.sh
LOG=/tmp/scx_rustland-4cpu.log
# Six hogs beside 32 `while :; do ( : ); done` loops for 6 s. Granted wakeups (the shells)
# and new tasks (their subshells) queue behind the policy's clock, and only a task ahead of
# it moved it: each hog, charged for its start-up, waited 23 to 27 s for the clock and got
# 320 to 400 ms of CPU. With the clock stepping on after 100 ms standing still while tasks
# wait: 950 to 1150 ms each, waits of at most 1.1 s (EEVDF, same boot: 650 to 700 ms, waits
# up to 1.4 s).
HOG_CPU_MIN_MS=300
HOG_WAIT_MAX_MS=3000
start_sched "$LOG" scx_rustland --stats 1
expect_loaded scx_rustland rustland "$LOG"
loops=""
for n in $(seq 32); do sh -c 'while :; do ( : ); done' & loops="$loops $!"; done
sleep 1
hogs=""
for n in 1 2 3 4 5 6; do scxkit-probe hog --seconds 6 > "/tmp/fork-hog$n.txt" & hogs="$hogs $!"; done
wait $hogs
kill $loops 2>/dev/null; wait $loops 2>/dev/null
cpus=$(sed -n 's/^hog_cpu_ms //p' /tmp/fork-hog*.txt | sort -n | tr '\n' ' ')
waits=$(sed -n 's/^hog_longest_wait_ms //p' /tmp/fork-hog*.txt | sort -n | tr '\n' ' ')
least=${cpus%% *} worst=$(echo "$waits" | tr ' ' '\n' | grep . | tail -n 1)
check "six hogs beside 32 fork loops on four CPUs each get at least $HOG_CPU_MIN_MS ms of CPU in 6 s (got: ${cpus:-none}ms)" \
    [ "$(echo "$cpus" | wc -w)" -eq 6 -a "${least:-0}" -ge "$HOG_CPU_MIN_MS" ]
check "and each waits at most $HOG_WAIT_MAX_MS ms at a time (longest waits: ${waits:-none}ms)" \
    [ "${worst:-99999}" -le "$HOG_WAIT_MAX_MS" ]
expect_clean_exit scx_rustland "$LOG"
steps=$(grep "totals:" "$LOG" | tail -n 1 | sed -n 's/.*clock steps \([0-9]*\).*/\1/p')
check "the clock stepped on while it stood still ($steps steps)" [ "${steps:-0}" -gt 0 ]
finish
