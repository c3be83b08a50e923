#!/usr/bin/env bash
# Builds the Debian package with cargo-deb: the schedulers, their man pages and bash, zsh
# and fish completions (each binary writes its own from its clap definition:
# --generate-docs), scxkit.service with its launcher, /etc/default/scxkit and the README.
#
#   packaging/build-deb.sh [--profile release|dev]   prints the path of the .deb
#
# The dev profile (debug binaries, stripped, fast compression) is what the guest test
# installs; release is for users. cargo-deb is installed with cargo when missing.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
profile=release
while [ $# -gt 0 ]; do
    case $1 in
        --profile) profile=$2; shift 2 ;;
        *) echo "build-deb: unknown argument $1" >&2; exit 2 ;;
    esac
done
case $profile in
    release) out=release deb_opts=() ;;
    dev) out=debug deb_opts=(--fast) ;;
    *) echo "build-deb: --profile must be release or dev" >&2; exit 2 ;;
esac

schedulers=()
for dir in "$top"/scheds/scx_*/; do schedulers+=("$(basename "$dir")"); done
packages=(); for s in "${schedulers[@]}"; do packages+=(-p "$s"); done
cargo build --quiet --manifest-path "$top/Cargo.toml" --profile "$profile" "${packages[@]}"

docs="$top/target/scxkit-docs"
rm -rf "$docs"
for s in "${schedulers[@]}"; do "$top/target/$out/$s" --generate-docs "$docs" >/dev/null; done
gzip -9n "$docs"/man8/*

if ! command -v cargo-deb >/dev/null; then
    echo "build-deb: installing cargo-deb (cargo install)" >&2
    cargo install --quiet --locked cargo-deb --version 3.8.0
fi
cd "$top"
cargo deb --quiet -p scxkit-package --no-build --profile "$profile" "${deb_opts[@]}" --output "$top/target/debian/" \
    | tail -n 1
