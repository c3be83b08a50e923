#!/usr/bin/env bash
# Boots a sched_ext kernel under QEMU (TCG) and runs a scenario script in it as /init's child.
#
#   vm/run.sh [options] SCENARIO [-- ARGS...]
#     --kernel SERIES|VERSION   guest kernel (default: $SCXKIT_KERNEL or 7.3)
#     --rootfs initramfs|debian the guest's userspace: busybox in an initramfs, /init running
#                               the scenario (default); or Debian with systemd as PID 1
#                               (vm/rootfs.sh), a unit running the scenario once systemd
#                               is up. There a scenario may reboot the guest (reboot_guest
#                               in vm/guest/lib.sh) and runs again after, in the same run.
#     --cpus N --nodes N --threads N   topology: N CPUs over NODES sockets = NUMA nodes,
#                               THREADS SMT siblings per core (default 4, 2, 1)
#     --mem MB                  guest memory (default 2048)
#     --timeout SECONDS         hard limit for the whole boot (default 600)
#     --add BINARY|SRC:DST      put a file in the guest (repeatable): a BINARY in /usr/bin
#                               (under Debian in /scxkit/bin, last on the PATH, so that
#                               what a package installs comes first), SRC at the guest
#                               path DST
#     --log FILE                also write the console to FILE
#     --tcg-threads single|multi  one host thread for all vCPUs, or one each (default:
#                               $SCXKIT_TCG_THREADS or multi; see the note below)
#     --icount                  reproducible mode: the guest clock counts executed
#                               instructions (4 ns each), not host time; implies
#                               single-threaded TCG, overriding --tcg-threads
# Streams the console, returns the scenario's exit status (124 on timeout, or when systemd
# did not come up in time, 125 when the guest ended without reporting one) and leaves no
# QEMU running.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

die() { echo "vm/run: $*" >&2; exit 2; }

# Multi-threaded TCG runs each vCPU on a host thread of its own. It races when the guest
# kernel patches its own code while another vCPU runs it: seen here in up to one boot in
# five, "Oops: int3" as sched_ext flips static keys on load and unload (tests/guest.sh runs
# such a boot again). Single-threaded TCG has no such race, but one host thread then runs
# every vCPU, and the overflow of four hogs onto the last free CPU was seen to fail there.
tcg_threads=${SCXKIT_TCG_THREADS:-multi}

# With --icount the guest's clock follows the instructions it executes, not the host's
# clock, so the host's load no longer leaks into guest timings: two boots of one workload
# agreed within about 4% here (without it, throughput drifted 25% within one boot). QEMU
# counts instructions on single-threaded TCG only, where the vCPUs take turns: with several
# vCPUs, wakeup latencies are the emulator's; with one they are meaningful. Throughput
# compares with any number.
ICOUNT_SHIFT=2   # each guest instruction counts 2^2 ns
icount=0

# How long systemd may take to start the scenario's unit in the Debian guest, from the
# start of a boot (8 to 15 s were seen in TCG); past that the boot is called stuck.
SYSTEMD_UP_LIMIT_S=240

kernel=${SCXKIT_KERNEL:-7.3} rootfs=initramfs cpus=4 nodes=2 threads=1 mem_mb=2048 timeout_s=600 log="" adds=()
while [ $# -gt 0 ]; do
    case $1 in
        --kernel) kernel=$2; shift 2 ;;
        --rootfs) rootfs=$2; shift 2 ;;
        --cpus) cpus=$2; shift 2 ;;
        --nodes) nodes=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --mem) mem_mb=$2; shift 2 ;;
        --timeout) timeout_s=$2; shift 2 ;;
        --add) adds+=("$2"); shift 2 ;;
        --log) log=$2; shift 2 ;;
        --tcg-threads) tcg_threads=$2; shift 2 ;;
        --icount) icount=1; shift ;;
        -*) die "unknown option $1" ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || die "usage: vm/run.sh [options] SCENARIO [-- ARGS...]"
scenario=$1; shift
[ "${1:-}" = "--" ] && shift
[ -f "$scenario" ] || die "no such scenario: $scenario"
(( cpus % (nodes * threads) == 0 )) || die "--cpus $cpus is not a multiple of nodes*threads ($nodes*$threads)"
case $tcg_threads in single|multi) ;; *) die "--tcg-threads must be single or multi, not '$tcg_threads'" ;; esac
case $rootfs in initramfs|debian) ;; *) die "--rootfs must be initramfs or debian, not '$rootfs'" ;; esac
(( mem_mb % nodes == 0 )) || die "--mem $mem_mb is not divisible by --nodes $nodes"

kdir=$("$here/kernel.sh" "$kernel")
work=$(mktemp -d); trap 'kill "$(cat "$work/qemu.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$work"' EXIT
# What the kernel boots: an initramfs holding everything, or the Debian image (never written:
# the guest writes to an overlay of this boot) and a payload disk with the scenario.
append="console=ttyS0 panic=-1 quiet loglevel=4 mitigations=off sysctl.kernel.hung_task_timeout_secs=45"
if [ "$rootfs" = initramfs ]; then
    "$here/initramfs.sh" "$work/initrd.gz" "$kdir" "$scenario" "${adds[@]}"
    boot=(-kernel "$kdir/bzImage" -initrd "$work/initrd.gz" -append "$append -- $*" -no-reboot)
else
    image=$("$here/rootfs.sh")
    qemu-img create -q -f qcow2 -b "$image" -F raw "$work/root.qcow2"
    "$here/payload.sh" "$work/payload.img" "$kdir" "$scenario" "$*" "${adds[@]}"
    # One NVMe controller, two namespaces, scanned concurrently (either may be nvme0n1): the
    # root is found by its partition's id (vm/rootfs.sh), once probed (rootwait).
    boot=(-kernel "$kdir/bzImage" -append "$append root=PARTUUID=5c8e7a1e-2c4b-4d9e-9f3a-0123456789ab rootwait rw systemd.show_status=auto"
          -drive "file=$work/root.qcow2,if=none,id=root,format=qcow2"
          -drive "file=$work/payload.img,if=none,id=payload,format=raw,readonly=on"
          -device nvme,id=nvme0,serial=scxkit -device nvme-ns,drive=root,bus=nvme0,nsid=1
          -device nvme-ns,drive=payload,bus=nvme0,nsid=2)
fi

cores=$(( cpus / nodes / threads ))
numa=()
per_node_cpus=$(( cpus / nodes ))
for ((n = 0; n < nodes; n++)); do
    first=$(( n * per_node_cpus )); last=$(( first + per_node_cpus - 1 ))
    numa+=(-object "memory-backend-ram,id=mem$n,size=$(( mem_mb / nodes ))M"
           -numa "node,nodeid=$n,cpus=$first-$last,memdev=mem$n")
done

if [ "$icount" -eq 1 ]; then
    accel=(-accel tcg,thread=single -icount "shift=$ICOUNT_SHIFT,sleep=off")
else
    accel=(-accel "tcg,thread=$tcg_threads")
fi
banner="vm/run: Linux $(cat "$kdir/release") on $rootfs, $cpus CPUs ($nodes nodes x $cores cores x $threads threads), ${accel[*]}, timeout ${timeout_s}s"
echo "$banner" >&2
# The log starts with it too: whether TCG was multi-threaded decides what an int3 oops means.
[ -z "$log" ] || echo "$banner" >> "$log"
console="$work/console.log"
: > "$console"
# The guest powers itself off once the scenario reports; a guest whose hotplug is stuck
# cannot (power-off takes the hotplug lock), so it gets this long after its report.
POWEROFF_GRACE_S=20
# A guest that shows a stall (its own HANG line, or the kernel's hung-task or RCU stall
# report) explains itself and powers off (vm/guest/lib.sh: watch_kernel_stalls). One whose
# explanation does not end, or whose watcher does not get to run, is stopped this long after
# the first sign, not at the boot's timeout.
HANG_REPORT_LIMIT_S=${SCXKIT_HANG_REPORT_LIMIT_S:-150}
KERNEL_STALL_ERE=$(sed -n "s/^KERNEL_STALL_ERE='\(.*\)'\$/\1/p" "$here/guest/lib.sh")
[ -n "$KERNEL_STALL_ERE" ] || die "no KERNEL_STALL_ERE in vm/guest/lib.sh"
(
    set +e
    timeout -k 10 "$timeout_s" qemu-system-x86_64 \
        "${accel[@]}" -cpu max -m "${mem_mb}M" \
        -smp "cpus=$cpus,sockets=$nodes,cores=$cores,threads=$threads" "${numa[@]}" \
        "${boot[@]}" -nographic -serial mon:stdio -nic none -pidfile "$work/qemu.pid" </dev/null 2>&1 \
        | stdbuf -oL tr -d '\r' | sed -u 's/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\x1bc//g' | tee -a "$console" ${log:+"$log"}
    echo "${PIPESTATUS[0]}" > "$work/qemu.rc"
) &
guest=$!
reported_at="" stall_seen_at=""
# The Debian guest: when the current boot began (the start, or the scenario's last reboot),
# empty once systemd has started the scenario's unit in it.
booting_since=$SECONDS
stop_guest() { kill "$(cat "$work/qemu.pid" 2>/dev/null)" 2>/dev/null; }
while kill -0 "$guest" 2>/dev/null; do
    sleep 1
    # A panicking kernel reboots (panic=-1), which the Debian guest allows: end it instead.
    if grep -aq 'end Kernel panic' "$console"; then
        echo "vm/run: the guest kernel panicked; stopping it" >&2
        sleep 1; stop_guest; break
    fi
    if [ "$rootfs" = debian ]; then
        ups=$(grep -ac '^scxkit-guest: systemd is up' "$console" || true)
        reboots=$(grep -ac '^scxkit-guest: rebooting' "$console" || true)
        if [ "$ups" -gt "$reboots" ]; then booting_since=""
        elif [ -z "$booting_since" ]; then booting_since=$SECONDS
        elif [ $((SECONDS - booting_since)) -ge "$SYSTEMD_UP_LIMIT_S" ]; then
            why="HANG systemd did not start the scenario's unit within ${SYSTEMD_UP_LIMIT_S} s of boot $((reboots + 1)) (no 'scxkit-guest: systemd is up' line); the console's end above says what it was waiting for"
            tail -n 25 "$console" >&2
            echo "vm/run: $why" >&2
            [ -z "$log" ] || echo "$why" >> "$log"
            stop_guest; wait "$guest"; exit 124
        fi
    fi
    [ -n "$reported_at" ] || ! grep -aq 'SCXKIT_SCENARIO_EXIT=' "$console" || reported_at=$SECONDS
    [ -n "$stall_seen_at" ] || ! grep -aqE "^HANG |$KERNEL_STALL_ERE" "$console" || stall_seen_at=$SECONDS
    if [ -n "$stall_seen_at" ] && [ -z "$reported_at" ] && [ $((SECONDS - stall_seen_at)) -ge "$HANG_REPORT_LIMIT_S" ]; then
        why="HANG the guest showed a stall ($(grep -aE -m 1 "^HANG |$KERNEL_STALL_ERE" "$console" | cut -c 1-200)) and has not reported within ${HANG_REPORT_LIMIT_S} s; stopped"
        echo "vm/run: $why" >&2
        [ -z "$log" ] || echo "$why" >> "$log"
        stop_guest; wait "$guest"; exit 3
    fi
    if [ -n "$reported_at" ] && [ $((SECONDS - reported_at)) -ge "$POWEROFF_GRACE_S" ]; then
        echo "vm/run: the guest reported but did not power off within ${POWEROFF_GRACE_S}s; stopping it" >&2
        stop_guest
        break
    fi
done
wait "$guest"
qemu_rc=$(cat "$work/qemu.rc" 2>/dev/null || echo 1)
[ "$qemu_rc" -eq 124 ] && { echo "vm/run: TIMEOUT after ${timeout_s}s" >&2; exit 124; }
rc=$(grep -a -o 'SCXKIT_SCENARIO_EXIT=[0-9]*' "$console" | tail -n1 | cut -d= -f2)
[ -n "$rc" ] || { echo "vm/run: the guest ended without reporting the scenario's status" >&2; exit 125; }
# A hang is a failure even if the stuck write returned later and the scenario went on.
grep -aq '^HANG ' "$console" && [ "$rc" -eq 0 ] && rc=3
exit "$rc"
