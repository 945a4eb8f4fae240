#!/usr/bin/env bash
# Fuzzes fleet-helm's Go-template parser and evaluator (crates/fleet-helm/fuzz, target `template`) with cargo-fuzz,
# seeded with every template of the committed test charts. Needs the nightly toolchain and cargo-fuzz
# (`rustup toolchain install nightly && cargo install cargo-fuzz`). A crash or hang is written to ARTIFACTS as an
# input file that `cargo +nightly fuzz run template FILE` replays.
# Usage: scripts/helm-fuzz.sh [SECONDS] [ARTIFACTS_DIR]   (defaults: 300 s, ./fuzz-artifacts)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-300}"
artifacts="$(mkdir -p "${2:-fuzz-artifacts}" && cd "${2:-fuzz-artifacts}" && pwd)"
corpus="$(mktemp -d)"
trap 'rm -rf "$corpus"' EXIT
i=0
while IFS= read -r -d '' f; do
  i=$((i + 1))
  cp "$f" "$corpus/seed-$i-$(basename "$f")"
done < <(find "$root/testdata/helm/charts" -path '*/templates/*' -type f \( -name '*.yaml' -o -name '*.tpl' \) -print0)
cd "$root/crates/fleet-helm/fuzz"
cargo +nightly fuzz run template -O ${CARGO_TARGET_DIR:+--target-dir "$CARGO_TARGET_DIR/fuzz"} "$corpus" -- \
  -max_total_time="$seconds" -artifact_prefix="$artifacts/" -rss_limit_mb=3072 -timeout=20 -max_len=8192
