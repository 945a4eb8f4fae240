#!/usr/bin/env bash
# Lets `kubectl kustomize --enable-helm` drive the Helm 4 binary we have when scripts/kustomize-goldens.sh renders
# the helmCharts fixtures: kustomize v5.7 probes `helm version -c --short` (a Helm 3 flag) and insists on a v3
# version string, so the probe is answered here; every other command goes to Helm 4 unchanged. Test tooling only.
helm="${HELM:-$(dirname "$0")/../.tools/bin/helm}"
if [[ "${1:-}" == "version" ]]; then
  echo "v3.99.0+helm4-$("$helm" version --short)"
  exit 0
fi
exec "$helm" "$@"
