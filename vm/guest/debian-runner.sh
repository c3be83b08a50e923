#!/bin/bash
# The Debian guest's counterpart of /init (vm/run.sh --rootfs debian): started by the
# image's scxkit-guest unit from the payload disk mounted at /scxkit, at every boot. Waits
# (bounded) until systemd has started the system, puts the payload's files in place, runs
# /scxkit/scenario.sh and prints its exit status, then powers off; unless the scenario asked
# for a reboot (reboot_guest in lib.sh), after which it runs again with SCXKIT_BOOT one higher.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/scxkit/bin HOME=/root
. /scxkit/lib.sh

# How long systemd's start-up may take before the guest is called stuck, in seconds.
STARTUP_LIMIT_S=180

mkdir -p "$GUEST_STATE"
boot=$(( $(cat "$GUEST_STATE/boots" 2>/dev/null || echo 0) + 1 ))
echo "$boot" > "$GUEST_STATE/boots"
state=$(timeout "$STARTUP_LIMIT_S" systemctl is-system-running --wait 2>/dev/null)
case $state in
    running|degraded) ;;
    *)
        echo "HANG systemd's start-up has not finished within $STARTUP_LIMIT_S s (state '$state'); its jobs:"
        systemctl list-jobs --no-pager
        dump_state
        echo "SCXKIT_SCENARIO_EXIT=3"
        poweroff -f ;;
esac
echo "scxkit-guest: systemd is up (boot $boot, system $state), Linux $(uname -r), $(nproc) CPUs, running scenario $(cat /scxkit/args)"
[ "$state" = running ] || systemctl --failed --no-legend --no-pager | sed 's/^/scxkit-guest: failed unit: /'
# libbpf reads the kernel's config from /boot (these kernels have no /proc/config.gz).
cp /scxkit/boot/config-* /boot/ 2>/dev/null
if [ "$boot" -eq 1 ]; then
    cp -a /scxkit/files/. /
fi
ulimit -l unlimited
cd /tmp
bash -c '. /scxkit/lib.sh; watch_kernel_stalls' &
# shellcheck disable=SC2046 # the arguments are words
SCXKIT_BOOT=$boot bash /scxkit/scenario.sh $(cat /scxkit/args)
rc=$?
[ -e "$REBOOT_FLAG" ] && exit 0
echo "SCXKIT_SCENARIO_EXIT=$rc"
poweroff -f
