#!/usr/bin/env bash
# Regenerates the kustomize goldens under testdata/kustomize/<case>/ with the real `kubectl kustomize`
# (kustomize v5 built into kubectl; installed by scripts/install-tools.sh), with helmCharts rendered by the real helm
# through scripts/kustomize-helm-shim.sh. Test oracles only: the product never
# calls kubectl.
#
# Each case holds `input/` (the file tree), `build-dir` (the directory to build, relative to input/) and gets
#   expected.yaml  — kubectl's output when the build succeeds, or
#   expected.err   — kubectl's error message when it fails (our build must fail too).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
kubectl="${KUBECTL:-$root/.tools/bin/kubectl}"
if [[ ! -x "$kubectl" ]]; then
  echo "kubectl not found at $kubectl; run scripts/install-tools.sh or set KUBECTL" >&2
  exit 1
fi
"$kubectl" version --client | sed 's/^/# /'
ok=0; failed=0
for case_dir in "$root"/testdata/kustomize/*/; do
  case_dir="${case_dir%/}"
  name="$(basename "$case_dir")"
  build_dir="$(head -n1 "$case_dir/build-dir" 2>/dev/null || echo .)"
  rm -f "$case_dir/expected.yaml" "$case_dir/expected.err"
  if out="$(cd "$case_dir/input" && "$kubectl" kustomize --enable-helm --helm-command "$root/scripts/kustomize-helm-shim.sh" "$build_dir" 2>"$case_dir/.stderr")"; then
    printf '%s\n' "$out" > "$case_dir/expected.yaml"
    ok=$((ok + 1))
  else
    # Keep the message, without the absolute paths of this machine.
    sed -E "s#$case_dir/input/##g; s#$case_dir/input##g; s#0x[0-9a-f]+#0x…#g" "$case_dir/.stderr" > "$case_dir/expected.err"
    failed=$((failed + 1))
  fi
  rm -f "$case_dir/.stderr"
done
echo "goldens: $ok successful builds, $failed expected failures"
