#!/usr/bin/env bash
# Renders the whole Helm chart corpus with fleet's engine and compares every chart/values combination with the real
# `helm template` (a test oracle only), printing one line per combination and the match rate.
# Usage: scripts/helm-corpus.sh [CORPUS_DIR] [MIN_RATE]
#   CORPUS_DIR defaults to ../shared/charts; goldens are made at run time into a temporary directory.
#   MIN_RATE (percent) makes the run fail below it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
corpus=$(cd "${1:-$root/../shared/charts}" && pwd)
goldens=$(mktemp -d)
trap 'rm -rf "$goldens"' EXIT
"$root/scripts/helm-goldens.sh" "$corpus" "$goldens"
cd "$root"
FLEET_HELM_CORPUS="$corpus" FLEET_HELM_GOLDENS="$goldens" FLEET_HELM_MIN_RATE="${2:-0}" \
  cargo test -q -p fleet-helm --test corpus -- --nocapture
