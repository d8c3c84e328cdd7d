#!/usr/bin/env bash
# Checks the Kubernetes launch without a cluster (none runs here): the manifest validated against
# Kubernetes' own schemas by `kubernetes-validate` (a PyPI package, installed into a temporary
# virtual environment; strict: unknown fields refused), a copy with one misspelled field refused
# by the same validator (so the check can fail), every option the containers pass present in the
# binary's `--help` for that command, and the Dockerfile's Rust image at least the workspace's
# rust-version. Output in results/launch.md.
#
#   scripts/launch/test-k8s.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
manifest=scripts/k8s/cubefarm.yaml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q kubernetes-validate==1.37.0
validate() { "$work/venv/bin/kubernetes-validate" --strict "$@"; }

echo "== the manifest against the Kubernetes 1.37 schemas (strict)"
validate "$manifest"
echo "== a copy with a misspelled field must be refused"
sed 's/containerPort:/containerPorts:/' "$manifest" > "$work/broken.yaml"
if validate --quiet "$work/broken.yaml" > "$work/broken.log" 2>&1; then
    echo "error: the validator accepted a misspelled field" >&2
    exit 1
fi
grep -m1 ERROR "$work/broken.log" || true
echo "refused, as it must be"

echo "== the containers' options against the binaries' --help"
cargo build --release --locked -q -p coordinator -p worker
"$work/venv/bin/python" - "$manifest" <<'PY'
import subprocess, sys, yaml
bad = 0
for doc in yaml.safe_load_all(open(sys.argv[1])):
    for c in (doc or {}).get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
        args = c.get("args", [])
        binary, rest = args[0], args[1:]
        # The coordinator's options belong to its command (the first argument).
        command = [rest[0]] if binary == "coordinator" else []
        help_text = subprocess.run([f"target/release/{binary}", *command, "--help"],
                                   capture_output=True, text=True, check=True).stdout
        for a in rest:
            if a.startswith("--"):
                ok = f"{a} " in help_text or f"{a}\n" in help_text or f"{a} <" in help_text
                print(f"{'ok  ' if ok else 'FAIL'} {binary} {' '.join(command)} {a}")
                bad += not ok
sys.exit(1 if bad else 0)
PY

echo "== the Dockerfile's Rust image against the workspace's rust-version"
need=$(sed -n 's/^rust-version *= *"\(.*\)"/\1/p' Cargo.toml)
have=$(sed -n 's/^FROM rust:\([0-9.]*\)-.*/\1/p' Dockerfile)
if [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n 1)" != "$need" ]; then
    echo "error: the Dockerfile builds with Rust $have, the workspace needs $need" >&2
    exit 1
fi
echo "ok   rust:$have >= rust-version $need"
