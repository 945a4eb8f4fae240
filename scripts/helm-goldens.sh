#!/usr/bin/env bash
# Render every chart/values combination of a Helm chart corpus with the real `helm` binary (test oracle only) into
# golden files: OUT/<chart>/<values-set>.yaml (stdout) or .err (stderr, when helm fails). Each render is run twice;
# when the two runs differ (random or time-based values), the second is kept as <values-set>.alt.yaml so that
# comparisons can treat the lines that differ as wildcards.
# Usage: scripts/helm-goldens.sh CORPUS_DIR OUT_DIR [CHART...]
set -euo pipefail
corpus=${1:?corpus dir}
out=${2:?output dir}
shift 2
helm=${HELM:-$(dirname "$0")/../.tools/bin/helm}
if [[ ! -x $helm ]]; then echo "helm not found at $helm (run scripts/install-tools.sh)" >&2; exit 2; fi
charts=("$@")
if [[ ${#charts[@]} -eq 0 ]]; then
  for d in "$corpus"/*/; do d=${d%/}; [[ -f $d/Chart.yaml ]] && charts+=("$(basename "$d")"); done
fi
export HELM_CACHE_HOME=$(mktemp -d) HELM_CONFIG_HOME=$(mktemp -d) HELM_DATA_HOME=$(mktemp -d)
for chart in "${charts[@]}"; do
  mkdir -p "$out/$chart"
  sets=(default)
  if [[ -d $corpus/$chart.values ]]; then
    for f in "$corpus/$chart.values"/*.yaml; do sets+=("$(basename "$f" .yaml)"); done
  fi
  for set in "${sets[@]}"; do
    args=(template rel "$corpus/$chart" --namespace default --kube-version v1.33.0)
    [[ $set != default ]] && args+=(-f "$corpus/$chart.values/$set.yaml")
    if "$helm" "${args[@]}" >"$out/$chart/$set.yaml" 2>"$out/$chart/$set.err"; then
      rm -f "$out/$chart/$set.err"
      "$helm" "${args[@]}" >"$out/$chart/$set.alt.yaml" 2>/dev/null || true
      if cmp -s "$out/$chart/$set.yaml" "$out/$chart/$set.alt.yaml"; then rm -f "$out/$chart/$set.alt.yaml"; fi
    else
      rm -f "$out/$chart/$set.yaml"
    fi
  done
done
