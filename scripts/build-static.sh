#!/usr/bin/env bash
# Static binaries for cluster nodes whose C library is older than this machine's (the default
# build needs glibc 2.34 or later: RHEL 8 and Ubuntu 20.04 have less): `worker` and
# `coordinator` for x86_64-unknown-linux-musl, linked statically, runnable on any x86-64 Linux.
# Installs what it needs: the Rust target (rustup) and musl-gcc (musl-tools, for the zstd C
# library; apt-get on Debian and Ubuntu).
#
#   scripts/build-static.sh        # -> target/x86_64-unknown-linux-musl/release/{worker,coordinator}
#                                    (under $CARGO_TARGET_DIR when set)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
target=x86_64-unknown-linux-musl
if ! rustup target list --installed | grep -qx "$target"; then
    rustup target add "$target"
fi
if ! command -v musl-gcc > /dev/null; then
    command -v apt-get > /dev/null || { echo "error: musl-gcc is missing (install musl-tools)" >&2; exit 1; }
    sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq && $sudo apt-get install -y -qq musl-tools
fi
cargo build --release --locked --target "$target" -p worker -p coordinator
out=${CARGO_TARGET_DIR:-target}/$target/release
for bin in worker coordinator; do
    # ldd names the libraries a dynamic executable loads ("=>"); a static one has none.
    if ldd "$out/$bin" 2> /dev/null | grep -q "=>"; then
        echo "error: $out/$bin is not statically linked" >&2
        exit 1
    fi
done
echo "static binaries: $out/worker, $out/coordinator"
