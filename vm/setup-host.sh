#!/usr/bin/env bash
# Installs what scxkit needs on a Debian bookworm host. Idempotent: does nothing when all is present.
# Adds Debian's trixie-backports suite (only to download guest kernels, pinned low so nothing
# on the host is ever upgraded from it), reusing the mirror already configured on this machine.
set -euo pipefail

PACKAGES=(clang-19 llvm-19 libclang-19-dev libelf-dev zlib1g-dev pkg-config make
          qemu-system-x86 busybox-static bpftool stress-ng rt-tests cpio gzip
          prometheus gnuplot-nox mmdebstrap qemu-utils fdisk)
SOURCES_FILE=/etc/apt/sources.list.d/scxkit-trixie-backports.sources
PIN_FILE=/etc/apt/preferences.d/scxkit-trixie-backports

sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

. "$(dirname "$0")/lib/mirror.sh"

add_trixie_backports() {
    [ -f "$SOURCES_FILE" ] && return 0
    local uri; uri=$(mirror_uri) || exit 1
    sudo_if_needed tee "$SOURCES_FILE" >/dev/null <<SRC
Types: deb
URIs: $uri
Suites: trixie-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    sudo_if_needed tee "$PIN_FILE" >/dev/null <<PIN
Package: *
Pin: release n=trixie-backports
Pin-Priority: 1
PIN
    NEED_UPDATE=1
}

missing_packages() {
    local p
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
    done
}

NEED_UPDATE=0
add_trixie_backports
mapfile -t MISSING < <(missing_packages)
if [ "${#MISSING[@]}" -gt 0 ] || [ "$NEED_UPDATE" -eq 1 ]; then
    sudo_if_needed apt-get update -qq
fi
if [ "${#MISSING[@]}" -gt 0 ]; then
    echo "setup: installing ${MISSING[*]}"
    sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${MISSING[@]}" >/dev/null
fi
command -v cargo >/dev/null || { echo "setup: cargo is missing; install Rust (rustup) first" >&2; exit 1; }
