#!/usr/bin/env bash
# Regenerates the patch goldens with the real kubectl (a test oracle only; tests never call it).
#
# For every case directory testdata/patch/<case>/ holding object.yaml, patch.yaml and type, writes expected.json
# (the patched object as kubectl prints it) or, when kubectl refuses the patch, expected-error.txt (its message).
# Member order is not kept: kubectl prints members sorted, and so does kustomize.
# type is one of:
#   strategic | merge | json   kubectl patch --local --type <type>   (strategic works for built-in kinds only)
#   kustomize                  kubectl kustomize with patch.yaml as a `patches:` entry (strategic merge as
#                              kustomize applies it, also to custom resources)
#
# Usage: crates/fleet-yaml/scripts/patch-goldens.sh [case-name...]   (KUBECTL=/path/to/kubectl to override)
set -euo pipefail

crate_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
repo_dir=$(cd "$crate_dir/../.." && pwd)
kubectl=${KUBECTL:-$repo_dir/.tools/bin/kubectl}
if [[ ! -x $kubectl ]]; then
  echo "kubectl not found at $kubectl: run scripts/install-tools.sh first (or set KUBECTL)" >&2
  exit 1
fi
cases_dir=$crate_dir/testdata/patch
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# kubectl without any cluster: --local never contacts a server.
local_kubectl() { "$kubectl" --kubeconfig=/dev/null "$@"; }

render() {
  local dir=$1 type=$2
  case $type in
    strategic | merge | json)
      local_kubectl patch --local -f "$dir/object.yaml" --type "$type" -p "$(cat "$dir/patch.yaml")" -o json
      ;;
    kustomize)
      rm -rf "$work/k" && mkdir "$work/k"
      cp "$dir/object.yaml" "$dir/patch.yaml" "$work/k/"
      printf 'resources:\n- object.yaml\npatches:\n- path: patch.yaml\n' >"$work/k/kustomization.yaml"
      local_kubectl kustomize "$work/k" >"$work/rendered.yaml"
      # An empty merge patch turns kustomize's YAML into kubectl's JSON without changing it.
      local_kubectl patch --local -f "$work/rendered.yaml" --type merge -p '{}' -o json
      ;;
    *)
      echo "unknown patch type '$type'" >&2
      return 2
      ;;
  esac
}

if [[ $# -gt 0 ]]; then names=("$@"); else names=($(ls "$cases_dir")); fi
for name in "${names[@]}"; do
  dir=$cases_dir/$name
  type=$(tr -d '[:space:]' <"$dir/type")
  rm -f "$dir/expected.json" "$dir/expected-error.txt"
  if render "$dir" "$type" >"$work/out" 2>"$work/err"; then
    mv "$work/out" "$dir/expected.json"
    echo "ok     $name"
  else
    mv "$work/err" "$dir/expected-error.txt"
    echo "error  $name: $(head -c 150 "$dir/expected-error.txt")"
  fi
done
