#!/usr/bin/env bash
# Resolves, downloads and caches a sched_ext guest kernel from Debian's trixie-backports,
# without installing anything on the host (apt-get download + dpkg-deb -x).
#
#   vm/kernel.sh SERIES|VERSION   prints the cache directory holding bzImage, config, version
#   vm/kernel.sh --list           prints the series this mirror offers
#
# SERIES is e.g. 6.19 or 7.3 (the newest version of it is taken); VERSION is e.g. 7.2.12.
set -euo pipefail

CACHE_DIR=${SCXKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scxkit}/kernels
FLAVOUR=cloud-amd64

die() { echo "vm/kernel: $*" >&2; exit 1; }

# All versions offered, e.g. "7.2.12+deb13", one a line, signed and unsigned builds alike.
available_versions() {
    apt-cache search --names-only "^linux-binary-(unsigned-)?[0-9].*-$FLAVOUR\$" \
        | awk '{print $1}' | sed -E "s/^linux-binary-(unsigned-)?//; s/-$FLAVOUR\$//" | sort -uV
}

list_series() { available_versions | sed -E 's/^([0-9]+\.[0-9]+)\..*/\1/' | sort -uV; }

# Newest version whose number starts with the request ("7.2" or "7.2.12").
resolve_version() {
    local want=$1 v
    v=$(available_versions | awk -v w="$want" 'index($0, w ".") == 1 || index($0, w "+") == 1' | tail -n1)
    [ -n "$v" ] || die "no kernel matches '$want'; series offered: $(list_series | tr '\n' ' ')"
    echo "$v"
}

download_package() {
    local name=$1 dest=$2
    ( cd "$dest" && apt-get download -qq "$name" >/dev/null 2>&1 ) || return 1
}

# Binary package name for a version: the signed build where one exists, else the unsigned one.
binary_package_for() {
    local v=$1
    for name in "linux-binary-$v-$FLAVOUR" "linux-binary-unsigned-$v-$FLAVOUR"; do
        apt-cache show "$name" >/dev/null 2>&1 && { echo "$name"; return; }
    done
    die "no binary package for $v"
}

# Checks the unpacked kernel has sched_ext; with no config shipped, trusts the BTF check at boot.
check_config() {
    local config=$1
    [ -f "$config" ] || return 0
    grep -q '^CONFIG_SCHED_CLASS_EXT=y' "$config" || die "$config lacks CONFIG_SCHED_CLASS_EXT=y"
    grep -q '^CONFIG_DEBUG_INFO_BTF=y' "$config" || die "$config lacks CONFIG_DEBUG_INFO_BTF=y"
}

fetch() {
    local version=$1 dir="$CACHE_DIR/$1"
    if [ -f "$dir/bzImage" ]; then echo "$dir"; return; fi
    local tmp; tmp=$(mktemp -d "$CACHE_DIR/.fetch.XXXXXX"); chmod 755 "$tmp"
    trap "rm -rf '$tmp'" EXIT
    local bin; bin=$(binary_package_for "$version")
    echo "vm/kernel: downloading $bin" >&2
    download_package "$bin" "$tmp" || die "apt-get download $bin failed"
    download_package "linux-base-$version-$FLAVOUR" "$tmp" || true
    mkdir -p "$tmp/root"
    for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/root"; done
    local kver=${version%%+*}
    local image
    image=$(find "$tmp/root" -type f -name "vmlinuz*" | head -n1)
    [ -n "$image" ] || die "no vmlinuz inside $bin"
    local config; config=$(find "$tmp/root" -type f \( -name "config-*" -o -path "*/modules/*/config" \) | head -n1)
    mkdir -p "$tmp/out"
    cp "$image" "$tmp/out/bzImage"
    if [ -n "$config" ]; then cp "$config" "$tmp/out/config"; check_config "$tmp/out/config"; fi
    # The release string the guest's uname -r will print (names /boot/config-<release>).
    local release; release=$(find "$tmp/root" -maxdepth 4 -type d -path '*lib/modules/*' | sed 's#.*/modules/##' | head -n1)
    [ -n "$release" ] || release=$(basename "$image" | sed 's/^vmlinuz-//')
    echo "$release" > "$tmp/out/release"
    echo "$kver" > "$tmp/out/version"
    rm -rf "$dir"; mv "$tmp/out" "$dir"; rm -rf "$tmp"
    echo "$dir"
}

main() {
    [ $# -eq 1 ] || die "usage: vm/kernel.sh SERIES|VERSION|--list"
    mkdir -p "$CACHE_DIR"
    case $1 in
        --list) list_series ;;
        *) fetch "$(resolve_version "$1")" ;;
    esac
}
main "$@"
