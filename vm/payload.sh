#!/usr/bin/env bash
# Builds the payload disk of the Debian guest (vm/run.sh --rootfs debian): an ext4 image
# that the image's scxkit-guest unit mounts at /scxkit, the same directory the initramfs
# has, holding the guest helpers (vm/guest), the scenario, its arguments and, when given,
# the kernel config.
#
#   vm/payload.sh OUTPUT KERNEL_DIR SCENARIO ARGS [BINARY|SRC:DST ...]
# A BINARY lands in /scxkit/bin (on the guest's PATH, after the system's own directories:
# what a package installs comes first); SRC in /scxkit/files/DST, which the runner copies
# to DST. The guest's Debian provides the shared libraries.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

die() { echo "vm/payload: $*" >&2; exit 1; }

[ $# -ge 4 ] || die "usage: payload.sh OUTPUT KERNEL_DIR SCENARIO ARGS [BINARY|SRC:DST ...]"
output=$1 kdir=$2 scenario=$3 args=$4; shift 4
root=$(mktemp -d); chmod 755 "$root"; trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/files" "$root/boot"
for item in "$@"; do
    case $item in
        *:/*) src=${item%%:*} mode=644
              if [ -x "$src" ]; then mode=755; fi
              install -D -m "$mode" "$src" "$root/files${item#*:}" ;;
        *) [ -f "$item" ] || die "no such binary: $item"; install -m 755 "$item" "$root/bin/" ;;
    esac
done
[ -f "$kdir/config" ] && cp "$kdir/config" "$root/boot/config-$(cat "$kdir/release")"
cp "$here"/guest/*.sh "$root/"
install -m 755 "$scenario" "$root/scenario.sh"
printf '%s\n' "$args" > "$root/args"
# Room for what is there and the file system's own needs; the image is sparse.
size_mb=$(( $(du -sm "$root" | cut -f1) * 5 / 4 + 32 ))
mke2fs -q -t ext4 -L scxkit-payload -d "$root" "$output" "${size_mb}M" >/dev/null || die "mke2fs failed"
