#!/usr/bin/env bash
# Builds and caches the Debian root filesystem of the guest's second variant (vm/run.sh
# --rootfs debian): bookworm with systemd as PID 1, D-Bus, bash, coreutils, procps, gcc, make
# and stress-ng (bench/run.sh's build mode), from Debian's packages (mmdebstrap), as a raw
# ext4 image that the sched_ext cloud kernels mount as root over NVMe (built into them,
# unlike virtio-blk).
#
#   vm/rootfs.sh        prints the cached image's path, building it first if it is missing
#
# The image is named after a hash of this file, so a change of recipe builds a new one.
# vm/run.sh never writes to it: each boot writes to a qcow2 overlay of its own. The image
# holds one unit of scxkit's, scxkit-guest.service, which mounts the boot's payload disk and
# hands over to the runner on it (vm/guest/debian-runner.sh), so scenarios and their
# helpers change without a rebuild.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/mirror.sh"

CACHE_DIR=${SCXKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scxkit}/rootfs
SUITE=bookworm
PACKAGES=systemd,systemd-sysv,udev,dbus,bash,coreutils,procps,gcc,make,libc6-dev,util-linux,kmod,libelf1,zlib1g,stress-ng
IMAGE_SIZE=2G   # sparse: about 0.5 GB of it is used
ROOT_PARTUUID=5c8e7a1e-2c4b-4d9e-9f3a-0123456789ab   # vm/run.sh boots root=PARTUUID= this

die() { echo "vm/rootfs: $*" >&2; exit 1; }

recipe=$(sha256sum "$0" | cut -c1-12)
image="$CACHE_DIR/debian-$SUITE-$recipe.img"
if [ -f "$image" ]; then echo "$image"; exit 0; fi

command -v mmdebstrap >/dev/null || die "mmdebstrap is missing; run vm/setup-host.sh"
[ "$(id -u)" -eq 0 ] || die "building the image needs root (mmdebstrap's root mode keeps file owners)"
mkdir -p "$CACHE_DIR"
tmp=$(mktemp -d "$CACHE_DIR/.build.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
root="$tmp/root"
started_s=$SECONDS
echo "vm/rootfs: building a Debian $SUITE root filesystem with systemd (mmdebstrap)" >&2

# What the guest never needs is left out: translations and info pages. (Documentation and
# manuals stay: a scenario checks that the package installs its own, and excluding a
# directory from dpkg makes a later package's file in it fail to unpack.)
mmdebstrap --quiet --variant=minbase --include="$PACKAGES" \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
    "$SUITE" "$root" "$(mirror_uri)" >&2

echo scxkit-guest > "$root/etc/hostname"
echo "PARTUUID=$ROOT_PARTUUID / ext4 rw,errors=remount-ro 0 1" > "$root/etc/fstab"
# The journal survives a reboot (a scenario reads the journal of the boot before).
mkdir -p "$root/var/log/journal"
# Nothing but the scenario on the console; no timers waking up during measurements.
for unit in serial-getty@ttyS0.service getty@tty1.service apt-daily.timer apt-daily-upgrade.timer \
        e2scrub_all.timer fstrim.timer systemd-tmpfiles-clean.timer; do
    ln -sf /dev/null "$root/etc/systemd/system/$unit"
done

cat > "$root/usr/local/sbin/scxkit-guest" <<'SCRIPT'
#!/bin/sh
# Mounts the boot's payload disk (the scenario, its helpers, what it installs) and runs
# its runner. The disk is a namespace of the guest's NVMe controller, found by its label
# (the namespaces' names follow the order of a concurrent scan).
mkdir -p /scxkit
payload=/dev/disk/by-label/scxkit-payload
for i in $(seq 50); do [ -b "$payload" ] && break; sleep 0.2; done
mountpoint -q /scxkit || mount -o ro,noload "$payload" /scxkit \
    || { echo "FAIL scxkit-guest: cannot mount the payload disk $payload"; echo "SCXKIT_SCENARIO_EXIT=3"; poweroff -f; }
exec bash /scxkit/debian-runner.sh
SCRIPT
chmod 755 "$root/usr/local/sbin/scxkit-guest"
cat > "$root/etc/systemd/system/scxkit-guest.service" <<'UNIT'
[Unit]
Description=scxkit guest scenario
After=basic.target

[Service]
Type=exec
ExecStart=/usr/local/sbin/scxkit-guest
# Straight to the serial console, unprefixed: the host reads result lines from their start.
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
TTYReset=no
TTYVHangup=no

[Install]
WantedBy=multi-user.target
UNIT
ln -sf /etc/systemd/system/scxkit-guest.service "$root/etc/systemd/system/multi-user.target.wants/scxkit-guest.service"

# One GPT partition with a fixed id, the root file system in it: the kernel finds its root by
# that id (root=PARTUUID=, no initramfs needed), whatever name the NVMe namespace gets (they
# are scanned concurrently: nvme0n1 was the payload in some boots).
truncate -s "$IMAGE_SIZE" "$tmp/image"
truncate -s +2M "$tmp/image"
printf 'label: gpt\nstart=2048, size=%s, uuid=%s\n' "$(( $(numfmt --from=iec "$IMAGE_SIZE") / 512 ))" "$ROOT_PARTUUID" \
    | sfdisk -q "$tmp/image" >&2 || die "sfdisk failed"
mke2fs -q -t ext4 -L scxkit-root -d "$root" -E offset=$((2048 * 512)) "$tmp/image" "$IMAGE_SIZE" >&2 \
    || die "mke2fs failed"
mv "$tmp/image" "$image"
# Older recipes' images are of no more use.
find "$CACHE_DIR" -maxdepth 1 -name 'debian-*.img' ! -path "$image" -delete
echo "vm/rootfs: built $image in $((SECONDS - started_s)) s ($(du -h "$image" | cut -f1) used)" >&2
echo "$image"
