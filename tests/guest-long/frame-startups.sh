# vm: --cpus 1 --nodes 1 --icount
# kernels: 7.3
# A known failure, kept as the test of its fix (issue 17: every frame delivered). A 60 Hz
# frame loop (4 ms of CPU per frame) started STARTUPS times, 1 s each, under scx_bpfland,
# then under scx_rustland, on one CPU beside four hogs and four build job streams (the
# bench's desktop1 at x4): no frame but frame 0 may be late. Frame 0 is the new process's
# first run, before any sleep, level with the build jobs forked with it. Later frames waited
# behind those jobs while the loop was still unclassed: it had run ahead of them.
# - scx_bpfland (classes it interactive at its third sleep): a late frame after frame 0 in
#   4, 2 and 5 start-ups of 6 in three runs (frame 2 mostly, 20 to 75 ms late). Since a task
#   woken by an interrupt before its first window closes comes back with a long sleeper's
#   credit: 2 and 4 of 6 (frames 1 and 2, 19 to 34 ms) in two release runs, 1 of 6 in a debug
#   one. With that credit for every wakeup: 0 of 6, but hackbench switched a fifth more often.
# - scx_rustland: 3 to 8 late frames in every start-up (20 to 100 ms late, through the first
#   half second): while unclassed the loop waited behind the build's jobs, slept less for its
#   late frames, and was classed interactive after about 500 ms (a trace of its switches).
#   Since its first period may close at two quick sleeps, and an unclassed sleeper is placed
#   at most its run since it slept behind a sleeper's credit: one late frame in 1 start-up
#   of 6 (frame 11, 39 ms; release). With interactive tasks placed so too: 2 of 6 (release),
#   3 of 6 with 1 to 3 late frames (debug), but --slice-boost 1 no longer held a heavy
#   sleeper to its share.
# Tried for scx_bpfland, not in:
# - promotion at the second sleep (a first window closing with one switch): 1 of 6 (frame 1,
#   22 ms late), but one guest run of three had a frame p99 of 12.1 ms (4.3 before);
# - half a sleeper's credit for new tasks: frame 2 late in each of four start-ups, `uname`
#   p99 at x4 25 ms against 15;
# - a task back from its first sleep taken as interactive for that one run: frames 6 and 48
#   late in 1 of 6.
# (The latency1 shell command's p50 sits on the edge of two modes, 3.7 and 7.7 ms: the same
# build gave 3.7 and 6.9 ms in two runs of one boot, so it tells these builds apart from no
# single run.) Run it with
#   tests/guest.sh tests/guest-long/frame-startups.sh
. /scxkit/lib.sh
STARTUPS=6

# startups SCHEDULER: the STARTUPS start-ups under SCHEDULER, loaded and unloaded around them.
startups() {
    local sched=$1 log=/tmp/$1-startups.log late_startups="" all_late="" i=0 report late jobs
    start_sched "$log" "$sched" --stats 5
    expect_loaded "$sched (frame loop start-ups)" "${sched#scx_}" "$log"
    start_hogs 4
    scxkit-probe build-jobs --parallel 4 --job-cpu-ms 20 --seconds $((2 + 2 * STARTUPS)) > /tmp/jobs.txt & jobs=$!
    sleep 1
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
        pass "$sched: $STARTUPS start-ups of a 60 Hz frame loop under hogs and a build on one CPU: no frame late but frame 0 (late frames:$all_late)"
    else fail "$sched: $STARTUPS start-ups of a 60 Hz frame loop under hogs and a build keep every frame after frame 0" "$late_startups"; fi
    check "$sched: build jobs completed" grep -q "^build_jobs_per_s [1-9]" /tmp/jobs.txt
    expect_clean_exit "$sched" "$log"
}

startups scx_bpfland
startups scx_rustland
finish
