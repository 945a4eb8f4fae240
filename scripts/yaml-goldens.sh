#!/usr/bin/env bash
# Regenerates the YAML emitter goldens from the real binaries (test oracles only; tests never call them):
#   testdata/yaml/emit/helm/NAME.yaml       what Helm's `toYaml .Values` renders for values file NAME.yaml|json
#   testdata/yaml/emit/kustomize/NAME.yaml  what `kubectl kustomize` prints for NAME.yaml wrapped as a resource
#                                           (apiVersion: v1, kind: Values, metadata.name: golden, values: <input>)
#   testdata/yaml/emit/json/NAME.json       what Helm's `toJson .Values` renders (Go's encoding/json)
# Inputs named root-*.yaml render `toYaml .Values.root` instead (scalars and lists at the document root; Helm only).
# Inputs named helm-*.yaml, control-chars.yaml and *.json are Helm only.
#   testdata/yaml/stream/kustomize/NAME.yaml  what `kubectl kustomize` prints for the resource stream
#                                             testdata/yaml/stream/NAME.yaml, taken as it is
# Usage: scripts/yaml-goldens.sh   (needs .tools/bin/helm and .tools/bin/kubectl: scripts/install-tools.sh)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
helm="${HELM:-$root/.tools/bin/helm}"
kubectl="${KUBECTL:-$root/.tools/bin/kubectl}"
inputs="$root/testdata/yaml/emit"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/chart/templates" "$work/kustomize" "$inputs/helm" "$inputs/kustomize" "$inputs/json"
printf 'apiVersion: v2\nname: golden\nversion: 0.1.0\n' >"$work/chart/Chart.yaml"
# Helm only accepts mappings as rendered documents: a root value is rendered inside a block scalar, then cut out.
printf '{{ if hasKey .Values "root" }}root: |2-\n{{ toYaml .Values.root | indent 2 }}{{ else }}{{ toYaml .Values }}{{ end }}' \
  >"$work/chart/templates/values.yaml"
printf '{{ toJson .Values }}' >"$work/chart/templates/json.yaml"
printf 'resources:\n- resource.yaml\n' >"$work/kustomize/kustomization.yaml"

failed=0
for input in "$inputs"/*.yaml "$inputs"/*.json; do
  [ -e "$input" ] || continue
  file="$(basename "$input")"
  name="${file%.*}"

  # helm template prints "---", "# Source: ...", the rendered text, then a newline: keep the rendered text only.
  if "$helm" template golden "$work/chart" --values "$input" --show-only templates/json.yaml >"$work/json.out" \
    2>"$work/helm.err"; then
    tail -n +3 "$work/json.out" | head -c -1 >"$inputs/json/$name.json"
  else
    echo "helm toJson failed on $file: $(cat "$work/helm.err")" >&2
    failed=1
  fi
  if "$helm" template golden "$work/chart" --values "$input" --show-only templates/values.yaml >"$work/helm.out" \
    2>"$work/helm.err"; then
    if [ "${name#root-}" = "$name" ]; then
      tail -n +3 "$work/helm.out" | head -c -1 >"$inputs/helm/$name.yaml"
    else
      tail -n +4 "$work/helm.out" | sed 's/^  //' | head -c -1 >"$inputs/helm/$name.yaml"
    fi
  else
    echo "helm failed on $file: $(cat "$work/helm.err")" >&2
    failed=1
  fi

  # JSON, root-* and helm-* inputs are Helm-only (kustomize keeps JSON's flow style, needs objects and string
  # keys); kustomize rejects control characters.
  if [ "${file##*.}" = yaml ] && [ "$name" != control-chars ] && [ "${name#root-}" = "$name" ] \
    && [ "${name#helm-}" = "$name" ]; then
    {
      printf 'apiVersion: v1\nkind: Values\nmetadata:\n  name: golden\nvalues:\n'
      sed 's/^./  &/' "$input"
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
streams="$root/testdata/yaml/stream"
mkdir -p "$streams/kustomize"
for input in "$streams"/*.yaml; do
  [ -e "$input" ] || continue
  cp "$input" "$work/kustomize/resource.yaml"
  if ! "$kubectl" kustomize "$work/kustomize" >"$streams/kustomize/$(basename "$input")" 2>"$work/kustomize.err"; then
    echo "kubectl kustomize failed on $input: $(cat "$work/kustomize.err")" >&2
    failed=1
  fi
done
echo "goldens written under $inputs/{helm,kustomize,json} and $streams/kustomize" >&2
exit "$failed"
