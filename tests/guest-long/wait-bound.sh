# vm: --cpus 1 --nodes 1 --icount
# kernels: 7.3
# The bound on a task's wait (scxkit/long_wait.bpf.h) behind a crowd: a nice-19 hog started
# after 400 shell hogs and 8 fork loops on one CPU. Not in the default suite (about 2.5 minutes
# a scheduler, most of it forking the crowd): run it with
#   tests/guest.sh tests/guest-long/wait-bound.sh
# scx_bpfland taking the first overdue task in deadline order gave the nice-19 hog 0 turns in
# 10 s here (1 in 40 s in a longer run); the longest waiting first, 7 to 10.
. /scxkit/lib.sh
for sched in scx_bpfland:bpfland scx_rustland:rustland; do
    name=${sched%%:*}
    log=/tmp/$name-crowd.log
    start_sched "$log" "$name" --stats 2
    expect_loaded "$name (crowd)" "${sched#*:}" "$log"
    expect_low_weight_turns_in_crowd "$name" 4 "$log"
    expect_clean_exit "$name (crowd)" "$log"
done
finish
