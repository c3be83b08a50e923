#!/usr/bin/env bash
# Benchmarks schedulers side by side against EEVDF, in repeated guest boots.
#   bench/run.sh [--kernel SERIES] [--boots N] [--modes LIST] [--seconds N] [--cpus N]
#                [--nodes N] [--debug]
#                SCHEDULER...
# SCHEDULER: one of scxkit's by name (scx_bpfland) or any sched_ext binary by path
# (/usr/bin/scx_lavd), with its options in the same argument ("scx_bpfland --slice-us 5000").
# Each boot runs EEVDF first and last (drift check) and every scheduler in between, in an
# order rotated from boot to boot. Modes (each its own boots):
#   throughput  reproducible icount mode on --cpus vCPUs: hackbench over pipes, stress-ng
#               CPU and matrix, a fork/exec burst
#   throughput1 reproducible icount mode on one vCPU: the same (every wakeup lands on a
#               busy CPU: the rule for when a wakeup preempts decides hackbench)
#   latency1    reproducible icount mode on one vCPU: cyclictest under two hogs, a shell
#               command under hogs and a fork storm, request/response wakeups
#   latency     real-time multi-threaded TCG on --cpus vCPUs: the same latency workloads,
#               placement across CPUs included (noisier: use more boots)
#   desktop1    reproducible icount mode on one vCPU: a 60 Hz frame loop, `uname` and `ps`
#               under build jobs and CPU hogs, at three background loads (x1, x2, x4)
#   desktop     real-time multi-threaded TCG on --cpus vCPUs: the same desktop
#   build       reproducible icount mode on --cpus vCPUs, in the Debian guest (vm/rootfs.sh):
#               a real `make -j` compile beside CPU hogs, real `uname -r` and `ps axuw`
#               timed meanwhile; --nodes N splits the vCPUs into N NUMA nodes (scx_rusty's
#               machines)
#   compile     the build mode's compile alone, without the hogs (the seed's make -j on a
#               server: placement and balancing, not a trade between the compile and hogs),
#               timed over whole builds with nothing else running; `uname -r` and `ps axuw`
#               are timed after, beside more builds
# Defaults: kernel 7.3, 3 boots, the three throughput and latency modes, 10 s per workload, as many vCPUs as host
# cores, release builds. Writes the table to the terminal, and the JSON record, the PNG and
# the boots' consoles to ~/.cache/scxkit/bench/run-DATE-XXXX (SCXKIT_CACHE moves it).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/lib/panic.sh"
# How much longer than its guest time a reproducible-mode boot may take on a loaded host.
ICOUNT_WALL_FACTOR=3
kernel=${SCXKIT_KERNEL:-7.3} boots=3 modes="throughput latency1 latency" secs=10 cpus=$(nproc) nodes=1 profile=release
die() { echo "bench: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
        --kernel) kernel=$2; shift 2 ;;
        --boots) boots=$2; shift 2 ;;
        --modes) modes=${2//,/ }; shift 2 ;;
        --seconds) secs=$2; shift 2 ;;
        --cpus) cpus=$2; shift 2 ;;
        --nodes) nodes=$2; shift 2 ;;
        --debug) profile=debug; shift ;;
        -*) die "unknown option '$1'" ;;
        *) break ;;
    esac
done
[ $# -gt 0 ] || die "name at least one scheduler (e.g. bench/run.sh scx_simple scx_bpfland)"
[[ $boots =~ ^[1-9][0-9]*$ ]] || die "--boots must be a positive number, not '$boots'"
[[ $secs =~ ^[1-9][0-9]*$ ]] || die "--seconds must be a positive number, not '$secs'"
[[ $nodes =~ ^[1-9][0-9]*$ ]] || die "--nodes must be a positive number, not '$nodes'"
for mode in $modes; do
    case $mode in throughput|throughput1|latency1|latency|desktop1|desktop|build|compile) ;; *) die "unknown mode '$mode' (throughput, throughput1, latency1, latency, desktop1, desktop, build, compile)" ;; esac
done

"$top/vm/setup-host.sh"
build=(--manifest-path "$top/Cargo.toml" --workspace --bins)
[ "$profile" = release ] && build+=(--release)
cargo build --quiet "${build[@]}"
bin_dir=$top/target/$profile

# Each scheduler: its label in the guest (s1, s2, ...), the binary to put there, the
# command to run, the name shown.
# A directory of its own even for runs started in the same second (icount runs may share
# the machine).
runs=${SCXKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scxkit}/bench
mkdir -p "$runs"
out=$(mktemp -d "$runs/run-$(date +%Y%m%d-%H%M%S)-XXXX")
printf "kernel %s, %s vCPUs (one in throughput1, latency1 and desktop1), %s s per run, %s build\n" "$kernel" "$cpus" "$secs" "$profile" > "$out/settings.txt"
[ "$nodes" -eq 1 ] || printf "%s NUMA nodes in the build and compile modes\n" "$nodes" >> "$out/settings.txt"
adds=(--add "$bin_dir/scxkit-probe") labels=() commands=() i=0
for spec in "$@"; do
    read -r prog args <<< "$spec"
    i=$((i + 1))
    if [[ $prog == */* ]]; then
        [ -x "$prog" ] && [ -f "$prog" ] || die "no executable at '$prog'"
        adds+=(--add "$prog")
        cmd="$(basename "$prog") ${args:-}"
    else
        [ -x "$bin_dir/$prog" ] || die "'$prog' is not one of scxkit's schedulers ($(cd "$bin_dir" && ls scx_* | tr '\n' ' ')); give another by path"
        adds+=(--add "$bin_dir/$prog")
        # scxkit's schedulers print their totals at exit: the userspace policy's cost.
        cmd="$prog ${args:-} --stats 60"
    fi
    labels+=("s$i") commands+=("$cmd")
    printf 's%s\t%s\n' "$i" "$spec" >> "$out/names.tsv"
done

# plan_for BOOT: the schedulers, rotated by one more place each boot.
plan_for() {
    local boot=$1 n=${#labels[@]} k j
    for ((k = 0; k < n; k++)); do
        j=$(( (k + boot - 1) % n ))
        printf '%s\t%s\n' "${labels[j]}" "${commands[j]}"
    done
}

for mode in $modes; do
    case $mode in
        throughput) vm=(--cpus "$cpus" --nodes 1 --icount) guest_mode=throughput ;;
        throughput1) vm=(--cpus 1 --nodes 1 --icount) guest_mode=throughput ;;
        latency1) vm=(--cpus 1 --nodes 1 --icount) guest_mode=latency ;;
        latency) vm=(--cpus "$cpus" --nodes 1 --tcg-threads multi) guest_mode=latency ;;
        desktop1) vm=(--cpus 1 --nodes 1 --icount) guest_mode=desktop ;;
        desktop) vm=(--cpus "$cpus" --nodes 1 --tcg-threads multi) guest_mode=desktop ;;
        build) vm=(--rootfs debian --cpus "$cpus" --nodes "$nodes" --icount) guest_mode=build ;;
        compile) vm=(--rootfs debian --cpus "$cpus" --nodes "$nodes" --icount) guest_mode=compile ;;
    esac
    # The guest time one scheduler's suite may take: the desktop runs three loads.
    per_sched_s=$((secs * 6 + 120)); [ "$guest_mode" = desktop ] && per_sched_s=$((secs * 12 + 180))
    # In the reproducible mode the guest's clock counts instructions, so the host's load
    # stretches the boot's wall time instead (desktop1 took 2.2 times its guest time beside
    # a test suite and another guest): the timeout, in wall time, allows for that.
    [[ " ${vm[*]} " == *" --icount "* ]] && per_sched_s=$((per_sched_s * ICOUNT_WALL_FACTOR))
    for ((boot = 1; boot <= boots; boot++)); do
        plan_for "$boot" > "$out/plan-$mode-$boot.tsv"
        echo "==== $mode, boot $boot of $boots: EEVDF, $(cut -f2 "$out/plan-$mode-$boot.tsv" | cut -d' ' -f1 | tr '\n' ' ')EEVDF"
        log=$out/$mode-boot$boot.log
        # The emulator's int3 oops (multi-threaded TCG) ends a boot early: that boot is run
        # again once, its console kept apart. Any other failure (a timeout) is not: its
        # console holds the figures of the schedulers that finished.
        for attempt in 1 2; do
            rc=0
            "$top/vm/run.sh" --kernel "$kernel" "${vm[@]}" --timeout $(( (${#labels[@]} + 2) * per_sched_s + 300 )) \
                "${adds[@]}" --add "$out/plan-$mode-$boot.tsv:/bench-plan" --log "$log" \
                "$top/bench/scenario.sh" -- "$guest_mode" "$secs" /bench-plan >/dev/null || rc=$?
            [ "$rc" -eq 0 ] && break
            echo "bench: boot failed (status $rc): $(grep -aE 'Oops|panic|BENCH .* failed' "$log" | head -n 2)"
            [ "$attempt" -eq 1 ] && [ "$(panic_verdict "$log")" = emulator-int3 ] || break
            mv "$log" "$log.int3-oops"
        done
    done
done
release=$(grep -aoh 'scxkit-guest: [^,]*' "$out"/*.log | head -n1 | cut -d' ' -f2)
python3 "$top/bench/report.py" "$out" "${release:-$kernel}"
