#!/usr/bin/env bash
# Builds a gzip initramfs: busybox, the given binaries with the shared libraries ldd names,
# the guest helpers (vm/guest), a scenario script and, when given, the kernel config.
#
#   vm/initramfs.sh OUTPUT KERNEL_DIR SCENARIO [BINARY|SRC:DST ...]
# A BINARY lands in /usr/bin; SRC:DST copies a file to an absolute guest path.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

die() { echo "vm/initramfs: $*" >&2; exit 1; }

# Workloads every scenario may use; absent ones are simply left out.
STANDARD_TOOLS=(stress-ng cyclictest hackbench)

copy_with_libs() {
    local bin=$1 dest=$2 lib
    install -D -m 755 "$bin" "$root$dest"
    for lib in $(ldd "$bin" 2>/dev/null | grep -oE '/[^ ]+' | sort -u); do
        [ -e "$root$lib" ] || install -D -m 755 "$lib" "$root$lib"
    done
}

[ $# -ge 3 ] || die "usage: initramfs.sh OUTPUT KERNEL_DIR SCENARIO [BINARY|SRC:DST ...]"
output=$1 kdir=$2 scenario=$3; shift 3
root=$(mktemp -d); chmod 755 "$root"; trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,boot,etc,root,lib64,scxkit}
busybox=$(command -v busybox) || die "busybox not found; run vm/setup-host.sh"
ldd "$busybox" >/dev/null 2>&1 && die "$busybox is dynamic; install busybox-static"
install -m 755 "$busybox" "$root/bin/busybox"
for tool in "${STANDARD_TOOLS[@]}"; do
    path=$(command -v "$tool" 2>/dev/null) && copy_with_libs "$path" "/usr/bin/$tool"
done
for item in "$@"; do
    case $item in
        *:/*) copy_with_libs "${item%%:*}" "${item#*:}" ;;
        *) [ -f "$item" ] || die "no such binary: $item"; copy_with_libs "$item" "/usr/bin/$(basename "$item")" ;;
    esac
done
[ -f "$kdir/config" ] && cp "$kdir/config" "$root/boot/config-$(cat "$kdir/release")"
cp "$here"/guest/*.sh "$root/scxkit/"
install -m 755 "$scenario" "$root/scxkit/scenario.sh"
install -m 755 "$here/guest/init" "$root/init"
# nobody: for checks that a command needs no root (the monitor).
printf '%s\n' "root:x:0:0:root:/root:/bin/sh" "nobody:x:65534:65534:nobody:/:/bin/sh" > "$root/etc/passwd"
printf '%s\n' "root:x:0:" "nogroup:x:65534:" > "$root/etc/group"
( cd "$root" && find . | cpio -o -H newc --quiet | gzip -1 ) > "$output"
