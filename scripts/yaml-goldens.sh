#!/usr/bin/env bash
# Regenerates the YAML emitter goldens from the real binaries (test oracles only; tests never call them):
#   testdata/yaml/emit/helm/NAME.yaml       what Helm's `toYaml .Values` renders for values file NAME.yaml|json
#   testdata/yaml/emit/kustomize/NAME.yaml  what `kubectl kustomize` prints for NAME.yaml wrapped as a resource
#                                           (apiVersion: v1, kind: Values, metadata.name: golden, values: <input>)
# Usage: scripts/yaml-goldens.sh   (needs .tools/bin/helm and .tools/bin/kubectl: scripts/install-tools.sh)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
helm="${HELM:-$root/.tools/bin/helm}"
kubectl="${KUBECTL:-$root/.tools/bin/kubectl}"
inputs="$root/testdata/yaml/emit"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/chart/templates" "$work/kustomize" "$inputs/helm" "$inputs/kustomize"
printf 'apiVersion: v2\nname: golden\nversion: 0.1.0\n' >"$work/chart/Chart.yaml"
printf '{{ toYaml .Values }}' >"$work/chart/templates/values.yaml"
printf 'resources:\n- resource.yaml\n' >"$work/kustomize/kustomization.yaml"

failed=0
for input in "$inputs"/*.yaml "$inputs"/*.json; do
  [ -e "$input" ] || continue
  file="$(basename "$input")"
  name="${file%.*}"

  # helm template prints "---", "# Source: ...", the rendered text, then a newline: keep the rendered text only.
  if "$helm" template golden "$work/chart" --values "$input" >"$work/helm.out" 2>"$work/helm.err"; then
    tail -n +3 "$work/helm.out" | head -c -1 >"$inputs/helm/$name.yaml"
  else
    echo "helm failed on $file: $(cat "$work/helm.err")" >&2
    failed=1
  fi

  # JSON inputs are Helm-only (kustomize keeps their flow style); kustomize rejects control characters.
  if [ "${file##*.}" = yaml ] && [ "$name" != control-chars ]; then
    {
      printf 'apiVersion: v1\nkind: Values\nmetadata:\n  name: golden\nvalues:\n'
      sed 's/^/  /' "$input"
    } >"$work/kustomize/resource.yaml"
    if "$kubectl" kustomize "$work/kustomize" >"$inputs/kustomize/$name.yaml" 2>"$work/kustomize.err"; then
      :
    else
      echo "kubectl kustomize failed on $file: $(cat "$work/kustomize.err")" >&2
      rm -f "$inputs/kustomize/$name.yaml"
      failed=1
    fi
  fi
done
echo "goldens written under $inputs/{helm,kustomize}" >&2
exit "$failed"
