#!/usr/bin/env bash
# Regenerates the kustomize goldens under testdata/kustomize/<case>/ with the real `kubectl kustomize`
# (kustomize v5 built into kubectl; installed by scripts/install-tools.sh), with helmCharts rendered by the real helm
# through scripts/kustomize-helm-shim.sh. Test oracles only: the product never
# calls kubectl.
#
# Each case holds `input/` (the file tree), `build-dir` (the directory to build, relative to input/) and gets
#   expected.yaml  — kubectl's output when the build succeeds, or
#   expected.err   — kubectl's error message when it fails (our build must fail too).
# A case with a `helm-chart` file (the chart directory, relative to input/) is Fleet's helm-kustomize layout: the
# chart is rendered first by the real `helm template rel CHART --namespace default --kube-version v1.33.0`, its output
# written as `<build-dir>/fleet-manifests.yaml` and put first in that kustomization's `resources` (as Fleet's
# post-renderer does), and then `kubectl kustomize` builds a copy of the tree.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
kubectl="${KUBECTL:-$root/.tools/bin/kubectl}"
if [[ ! -x "$kubectl" ]]; then
  echo "kubectl not found at $kubectl; run scripts/install-tools.sh or set KUBECTL" >&2
  exit 1
fi
"$kubectl" version --client | sed 's/^/# /'
helm="${HELM:-$root/.tools/bin/helm}"

# Fleet's post-render step on a copy of a helm-kustomize case; prints the directory to build kubectl in.
helm_post_render_tree() {
  local case_dir=$1 build_dir=$2 chart tmp kfile
  chart="$(head -n1 "$case_dir/helm-chart")"
  tmp="$(mktemp -d)"
  cp -R "$case_dir/input/." "$tmp/"
  "$helm" template rel "$tmp/$chart" --namespace default --kube-version v1.33.0 > "$tmp/$build_dir/fleet-manifests.yaml"
  kfile="$tmp/$build_dir/kustomization.yaml"
  if grep -q '^resources: *[^ ]' "$kfile"; then
    echo "$kfile: write resources as a block list for the goldens script" >&2
    exit 1
  elif grep -q '^resources:' "$kfile"; then
    sed -i 's/^resources:.*/resources:\n- fleet-manifests.yaml/' "$kfile"
  else
    printf 'resources:\n- fleet-manifests.yaml\n' >> "$kfile"
  fi
  echo "$tmp"
}
ok=0; failed=0
for case_dir in "$root"/testdata/kustomize/*/; do
  case_dir="${case_dir%/}"
  name="$(basename "$case_dir")"
  build_dir="$(head -n1 "$case_dir/build-dir" 2>/dev/null || echo .)"
  rm -f "$case_dir/expected.yaml" "$case_dir/expected.err"
  tree="$case_dir/input"
  [[ -f "$case_dir/helm-chart" ]] && tree="$(helm_post_render_tree "$case_dir" "$build_dir")"
  if out="$(cd "$tree" && "$kubectl" kustomize --enable-helm --helm-command "$root/scripts/kustomize-helm-shim.sh" "$build_dir" 2>"$case_dir/.stderr")"; then
    printf '%s\n' "$out" > "$case_dir/expected.yaml"
    ok=$((ok + 1))
  else
    # Keep the message, without the absolute paths of this machine.
    sed -E "s#$case_dir/input/##g; s#$case_dir/input##g; s#0x[0-9a-f]+#0x…#g" "$case_dir/.stderr" > "$case_dir/expected.err"
    failed=$((failed + 1))
  fi
  rm -f "$case_dir/.stderr"
  [[ "$tree" != "$case_dir/input" ]] && rm -rf "$tree"
done
echo "goldens: $ok successful builds, $failed expected failures"
