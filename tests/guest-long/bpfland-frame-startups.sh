# vm: --cpus 1 --nodes 1 --icount
# kernels: 7.3
# A known failure, kept as the test of its fix (issue 17: every frame delivered). A 60 Hz
# frame loop (4 ms of CPU per frame) started STARTUPS times, 1 s each, under scx_bpfland on
# one CPU beside four hogs and four build job streams (the bench's desktop1 at x4): no frame
# but frame 0 may be late. Frame 0 is the new process's first run, before any sleep, level
# with the build jobs forked with it. Later frames wait behind those jobs while the loop is
# still a regular task: it is classed interactive at its third sleep. On 2026-12-07: a late
# frame after frame 0 in 4 start-ups of 6 (frame 2 in three, 25 to 49 ms late), then in 2 of
# 6 (frames 2 and 1) in a second run, and in 5 of 6 loops at x2 and x4 in the bench's
# desktop1 over three boots. Tried, not in:
# - promotion at the second sleep (a first window closing with one switch): 1 of 6 (frame 1,
#   22 ms late); in one bench boot desktop1 x4 dropped none (0.42% before) with a frame p99
#   of 4.2 ms (8.1), hackbench 0.64x (0.63x), but the latency1 shell command's p50 went from
#   3.75 to 6.85 ms (p90, p99 level), unexplained; one guest run of three had a frame p99 of
#   12.1 ms (4.3 before);
# - half a sleeper's credit for new tasks: frame 2 late in each of four start-ups, `uname`
#   p99 at x4 25 ms against 15;
# - a task back from its first sleep taken as interactive for that one run: frames 6 and 48
#   late in 1 of 6. Run it with
#   tests/guest.sh tests/guest-long/bpfland-frame-startups.sh
. /scxkit/lib.sh
STARTUPS=6
LOG=/tmp/scx_bpfland-startups.log
start_sched "$LOG" scx_bpfland --stats 5
expect_loaded "scx_bpfland (frame loop start-ups)" bpfland "$LOG"
start_hogs 4
scxkit-probe build-jobs --parallel 4 --job-cpu-ms 20 --seconds $((2 + 2 * STARTUPS)) > /tmp/jobs.txt & jobs=$!
sleep 1
late_startups="" all_late="" i=0
while [ "$i" -lt "$STARTUPS" ]; do
    i=$((i + 1))
    scxkit-probe frames --work-us 4000 --seconds 1 > "/tmp/frames-$i.txt"
    report=$(sed -n 's/^frames_late //p' "/tmp/frames-$i.txt")
    all_late="$all_late ${report:-no report}"
    late=$(frames_late_from "/tmp/frames-$i.txt" 1)
    [ -n "$report" ] || late="no report"
    [ -z "$late" ] || late_startups="$late_startups start-up $i: $late;"
    sleep 1
done
wait "$jobs"; stop_hogs
if [ -z "$late_startups" ]; then
    pass "$STARTUPS start-ups of a 60 Hz frame loop under hogs and a build on one CPU: no frame late but frame 0 (late frames:$all_late)"
else fail "$STARTUPS start-ups of a 60 Hz frame loop under hogs and a build keep every frame after frame 0" "$late_startups"; fi
check "build jobs completed" grep -q "^build_jobs_per_s [1-9]" /tmp/jobs.txt
expect_clean_exit scx_bpfland "$LOG"
