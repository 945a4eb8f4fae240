#!/usr/bin/env bash
# Validates charts/fleet-crd, charts/fleet and charts/fleet-agent with the real helm and kubectl (installed
# into .tools/bin by scripts/install-tools.sh):
#   1. helm lint the charts (charts/fleet and charts/fleet-agent with every ci/*.yaml values file; charts/fleet
#      also with its default values), and check that charts/fleet-agent refuses to render without the
#      registration values and that every value of each values.yaml is listed in the chart's README;
#   2. helm template charts/fleet with the default values and with every ci values file;
#   3. start the embedded API server (`fleet apiserver`), apply the CRDs and the rendered manifests with
#      `kubectl apply --server-side` (default values) and a plain `kubectl apply` (ci values), and check
#      that `kubectl get` returns every object with the fields the chart set;
#   4. when the `fleet controller` subcommand exists, run it with the arguments of the rendered
#      Deployment and check that it takes the leader Lease.
# Stops at the first problem with a message naming it. Environment: CARGO_TARGET_DIR (where cargo builds
# the fleet binary), CHECK_CHARTS_TIMEOUT (seconds to wait for the server and the lease, default 120).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$root/.tools/bin:$PATH"
timeout_s="${CHECK_CHARTS_TIMEOUT:-120}"
release_ns=cattle-fleet-system
ci_release_ns=fleet-ci-system

fail() {
  echo "check-charts: FAIL: $*" >&2
  exit 1
}
step() { echo "check-charts: $*" >&2; }

for tool in helm kubectl cargo; do
  command -v "$tool" >/dev/null || fail "$tool not found (run scripts/install-tools.sh first for helm and kubectl)"
done

work=$(mktemp -d)
server_pid=""
controller_pid=""
stop() { # stop <pid>: SIGTERM, then SIGKILL after 10 s (as the kubelet would after its grace period)
  local pid=$1 waited=0
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 20 ]; do
    sleep 0.5
    waited=$((waited + 1))
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "check-charts: warning: pid $pid ignored SIGTERM for 10s; killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  stop "$controller_pid"
  stop "$server_pid"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- 1. lint -------------------------------------------------------------------------------------
lint() { # lint <chart dir> [<values file>]: helm lint --strict, with the values file when given
  local what="helm lint ${1#"$root"/}${2:+ -f ${2#"$root"/}}"
  step "$what"
  helm lint --strict "$1" ${2:+-f "$2"} >"$work/lint.log" 2>&1 || { cat "$work/lint.log" >&2; fail "$what"; }
}
lint "$root/charts/fleet-crd"
lint "$root/charts/fleet"
ci_values=("$root"/charts/fleet/ci/*.yaml)
[ -e "${ci_values[0]}" ] || fail "no values files in charts/fleet/ci/"
for values in "${ci_values[@]}"; do
  lint "$root/charts/fleet" "$values"
done

agent_values=("$root"/charts/fleet-agent/ci/*.yaml)
[ -e "${agent_values[0]}" ] || fail "no values files in charts/fleet-agent/ci/"
for values in "${agent_values[@]}"; do
  lint "$root/charts/fleet-agent" "$values"
done
step "helm template charts/fleet-agent without registration values fails, naming apiServerURL"
if helm template fleet-agent "$root/charts/fleet-agent" >"$work/agent-none.yaml" 2>"$work/template.log"; then
  fail "charts/fleet-agent rendered without apiServerURL and token"
fi
grep -q apiServerURL "$work/template.log" || { cat "$work/template.log" >&2; fail "the refusal does not name apiServerURL"; }

# Every value (the dotted path of each leaf of values.yaml) appears in the chart's README, in backquotes.
check_readme_lists_values() { # <chart dir>
  local chart=$1 key missing=()
  while IFS= read -r key; do
    grep -qF "\`$key\`" "$chart/README.md" || missing+=("$key")
  done < <(awk '
    /^[[:space:]]*#/ || /^[[:space:]]*$/ || /^[[:space:]]*-/ { next }
    {
      match($0, /^ */); depth = RLENGTH / 2
      key = $0; sub(/^ */, "", key); rest = key; sub(/:.*/, "", key); sub(/^[^:]*:[[:space:]]*/, "", rest)
      path[depth] = key
      name = path[0]; for (i = 1; i <= depth; i++) name = name "." path[i]
      if (rest != "") print name
    }' "$chart/values.yaml")
  [ "${#missing[@]}" -eq 0 ] || fail "${chart#"$root"/}/README.md does not list: ${missing[*]}"
}
for chart in fleet fleet-agent; do
  step "charts/$chart/README.md lists every value"
  check_readme_lists_values "$root/charts/$chart"
done

# ---- 2. template -----------------------------------------------------------------------------------
render() { # render <output> <namespace> [helm args...]
  local out=$1 ns=$2
  shift 2
  helm template fleet "$root/charts/fleet" --namespace "$ns" "$@" >"$out" 2>"$work/template.log" ||
    { cat "$work/template.log" >&2; fail "helm template charts/fleet $* failed"; }
  [ -s "$out" ] || fail "helm template charts/fleet $* rendered nothing"
}
step "helm template charts/fleet (default values)"
render "$work/default.yaml" "$release_ns"
grep -q 'fleet-controller' "$work/default.yaml" || fail "default render has no fleet-controller"
grep -q 'kind: Cluster$' "$work/default.yaml" || fail "default render has no bootstrap Cluster (bootstrap.enabled defaults to true)"
ci_renders=()
for values in "${ci_values[@]}"; do
  name=$(basename "$values" .yaml)
  step "helm template charts/fleet -f ${values#"$root"/}"
  render "$work/ci-$name.yaml" "$ci_release_ns" -f "$values"
  ci_renders+=("$work/ci-$name.yaml")
done
step "helm template charts/fleet-agent -f charts/fleet-agent/ci/registration-values.yaml"
helm template fleet-agent "$root/charts/fleet-agent" --namespace fleet-agent-check -f "${agent_values[0]}" \
  >"$work/agent.yaml" 2>"$work/template.log" || { cat "$work/template.log" >&2; fail "helm template charts/fleet-agent"; }
grep -q 'name: fleet-agent-bootstrap' "$work/agent.yaml" || fail "the fleet-agent render has no bootstrap Secret"
grep -q -- '--checkin-interval=30s' "$work/agent.yaml" || fail "the fleet-agent render ignores agentCheckinInterval"
step "helm template charts/fleet --set bootstrap.enabled=false (no Fleet objects)"
render "$work/nobootstrap.yaml" "$release_ns" --set bootstrap.enabled=false
if grep -q 'fleet.cattle.io/v1alpha1' "$work/nobootstrap.yaml"; then
  fail "bootstrap.enabled=false still renders fleet.cattle.io objects"
fi

# ---- 3. apply to the embedded API server -------------------------------------------------------------
step "building the fleet binary (cargo build -p fleet-cli)"
cargo build -q -p fleet-cli --manifest-path "$root/Cargo.toml" || fail "cargo build -p fleet-cli"
target_dir=$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
fleet="$target_dir/debug/fleet"
[ -x "$fleet" ] || fail "built binary not found at $fleet"

export KUBECONFIG="$work/kubeconfig"
step "starting the embedded API server"
"$fleet" apiserver --listen 127.0.0.1:0 --kubeconfig-out "$KUBECONFIG" >"$work/apiserver.log" 2>&1 &
server_pid=$!
deadline=$((SECONDS + timeout_s))
until [ -s "$KUBECONFIG" ] && kubectl get namespaces >/dev/null 2>&1; do
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/apiserver.log" >&2; fail "fleet apiserver exited"; }
  [ "$SECONDS" -lt "$deadline" ] || { cat "$work/apiserver.log" >&2; fail "fleet apiserver not answering after ${timeout_s}s"; }
  sleep 0.5
done

kube() { # kube <what it checks> <kubectl args...>: runs kubectl, failing with its output
  local what=$1
  shift
  if ! kubectl "$@" >"$work/kubectl.log" 2>&1; then
    cat "$work/kubectl.log" >&2
    fail "$what: kubectl $*"
  fi
}

step "kubectl apply --server-side charts/fleet-crd/templates/crds.yaml"
kube "CRDs rejected" apply --server-side -f "$root/charts/fleet-crd/templates/crds.yaml"
for crd in gitrepos bundles bundledeployments clusters clustergroups clusterregistrations \
  clusterregistrationtokens bundlenamespacemappings gitreporestrictions contents; do
  kube "CRD $crd.fleet.cattle.io not established" wait --for=condition=Established --timeout=60s \
    "crd/$crd.fleet.cattle.io"
done

# Helm creates the release namespace (helm install --create-namespace); the chart does not.
kube "creating the release namespace" create namespace "$release_ns"
kube "creating the ci release namespace" create namespace "$ci_release_ns"

count_objects() { grep -c '^kind: ' "$1"; }

check_listed() { # check_listed <rendered file>: kubectl get returns every rendered object
  local file=$1 want got
  want=$(count_objects "$file")
  kube "kubectl get on the applied objects of ${file##*/}" get -f "$file" -o name
  got=$(grep -c . "$work/kubectl.log" || true)
  [ "$got" = "$want" ] || { cat "$work/kubectl.log" >&2; fail "${file##*/}: kubectl get lists $got objects, the chart rendered $want"; }
}

jsonpath() { # jsonpath <kubectl get args...> -- prints the value
  kubectl get "$@" 2>&1 || fail "kubectl get $*"
}

expect() { # expect <description> <actual> <expected substring>
  case "$2" in
    *"$3"*) ;;
    *) fail "$1: expected to contain '$3', got '$2'" ;;
  esac
}

step "kubectl apply --server-side (default values)"
kube "default render rejected" apply --server-side -f "$work/default.yaml"
check_listed "$work/default.yaml"
step "kubectl apply charts/fleet-agent (registration values)"
kube "creating the agent's namespace" create namespace fleet-agent-check
kube "fleet-agent render rejected" apply --server-side -f "$work/agent.yaml"
check_listed "$work/agent.yaml"
step "kubectl apply --server-side again (default values, no change expected)"
kube "re-applying the default render" apply --server-side -f "$work/default.yaml"

args=$(jsonpath -n "$release_ns" deployment/fleet-controller -o 'jsonpath={.spec.template.spec.containers[0].args}')
expect "controller args" "$args" '"controller"'
ro=$(jsonpath -n "$release_ns" deployment/fleet-controller -o 'jsonpath={.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem}')
expect "controller readOnlyRootFilesystem" "$ro" true
nonroot=$(jsonpath -n "$release_ns" deployment/fleet-controller -o 'jsonpath={.spec.template.spec.securityContext.runAsNonRoot}')
expect "controller runAsNonRoot" "$nonroot" true
labels=$(jsonpath -n fleet-local clusters.fleet.cattle.io/local -o 'jsonpath={.metadata.labels}')
expect "Cluster local labels" "$labels" '"name":"local"'
agent_ns=$(jsonpath -n fleet-local clusters.fleet.cattle.io/local -o 'jsonpath={.spec.agentNamespace}')
expect "Cluster local agentNamespace" "$agent_ns" cattle-fleet-local-system
agent_args=$(jsonpath -n cattle-fleet-local-system deployment/fleet-agent -o 'jsonpath={.spec.template.spec.containers[0].args}')
expect "local agent args" "$agent_args" '--cluster-namespace=cluster-fleet-local-local-1a3d67d0a899'
kube "Services" get -n "$release_ns" service/fleet-controller-metrics service/gitjob
kube "Lease RBAC" get -n "$release_ns" role/fleet-controller rolebinding/fleet-controller

# The release's own identity can do what the controller needs (RBAC from the chart is in force). Checked
# before the ci render is applied: its cluster-scoped binding (same name, one Fleet per cluster) moves the
# subject to the ci release namespace.
sa="system:serviceaccount:$release_ns:fleet-controller"
for check in "create leases.coordination.k8s.io -n $release_ns" "list gitrepos.fleet.cattle.io -A" \
  "patch bundles.fleet.cattle.io/status -n fleet-local" "create namespaces" "create secrets -n fleet-local" \
  "create rolebindings.rbac.authorization.k8s.io -n fleet-local" "create events.events.k8s.io -n fleet-local" \
  "create serviceaccounts/token -n fleet-default" "get configmaps/fleet-controller -n $release_ns"; do
  # shellcheck disable=SC2086
  answer=$(kubectl auth can-i $check --as "$sa" 2>/dev/null || true)
  [ "$answer" = yes ] || fail "the chart's RBAC does not let $sa '$check' (kubectl auth can-i said: $answer)"
done

check_nondefault() { # the fields ci/nondefault-values.yaml sets reached the API server
  image=$(jsonpath -n "$ci_release_ns" deployment/fleet-controller -o 'jsonpath={.spec.template.spec.containers[0].image}')
  expect "ci controller image" "$image" "mirror.example.com/registry.example.com/fleet/fleet:v9.9.9"
  replicas=$(jsonpath -n "$ci_release_ns" deployment/fleet-controller -o 'jsonpath={.spec.replicas}')
  expect "ci controller replicas" "$replicas" 3
  paths=$(jsonpath -n fleet-home gitrepos.fleet.cattle.io/bootstrap -o 'jsonpath={.spec.paths}')
  expect "ci bootstrap GitRepo paths" "$paths" '["clusters/local","shared"]'
  agent_args=$(jsonpath -n cattle-fleet-system deployment/fleet-agent -o 'jsonpath={.spec.template.spec.containers[0].args}')
  case "$agent_args" in *--scope*) fail "ci local agent in cattle-fleet-system has a scope: $agent_args" ;; esac
  expect "ci local agent cluster namespace" "$agent_args" '--cluster-namespace=cluster-fleet-home-local-aaf7c26e0a9a'
  controller_args=$(jsonpath -n "$ci_release_ns" deployment/fleet-controller -o 'jsonpath={.spec.template.spec.containers[0].args}')
  expect "ci controller skips host key checks" "$controller_args" '--insecure-skip-host-key-checks'
  known_hosts=$(jsonpath -n "$ci_release_ns" configmap/known-hosts -o 'jsonpath={.data.known_hosts}')
  expect "ci known-hosts ConfigMap" "$known_hosts" '[git.example.com]:2222 ssh-ed25519'
}

for rendered in "${ci_renders[@]}"; do
  step "kubectl apply (client-side) ${rendered##*/}"
  kube "${rendered##*/} rejected" apply -f "$rendered"
  check_listed "$rendered"
  if [ "${rendered##*/}" = ci-nondefault-values.yaml ]; then check_nondefault; fi
done

# ---- 4. the controller from the rendered arguments becomes leader -----------------------------------------
if "$fleet" controller --help >/dev/null 2>&1; then
  step "running fleet controller with the rendered Deployment's arguments"
  mapfile -t controller_args < <(kubectl get -n "$release_ns" deployment/fleet-controller \
    -o 'jsonpath={range .spec.template.spec.containers[0].args[*]}{@}{"\n"}{end}')
  resolved=()
  for arg in "${controller_args[@]}"; do
    arg=${arg//\$(NAMESPACE)/$release_ns}
    arg=${arg//\$(POD_NAME)/fleet-controller-check}
    # Listen on free loopback ports instead of the pod's fixed ports.
    arg=$(printf '%s' "$arg" | sed -E 's/0\.0\.0\.0:[0-9]+/127.0.0.1:0/')
    arg=${arg//\/var\/cache\/fleet/$work/cache}
    resolved+=("$arg")
  done
  [ "${resolved[0]}" = controller ] || fail "the rendered Deployment's first argument is '${resolved[0]}', not 'controller'"
  # The kubelet sets HOSTNAME to the pod name; the controller's Lease identity starts with it.
  HOSTNAME=fleet-controller-check NAMESPACE="$release_ns" POD_NAME=fleet-controller-check \
    "$fleet" "${resolved[@]}" >"$work/controller.log" 2>&1 &
  controller_pid=$!
  deadline=$((SECONDS + timeout_s))
  until holder=$(kubectl get -n "$release_ns" lease/fleet-controller -o 'jsonpath={.spec.holderIdentity}' 2>/dev/null) &&
    [ "${holder#fleet-controller-check}" != "$holder" ]; do
    kill -0 "$controller_pid" 2>/dev/null || { cat "$work/controller.log" >&2; fail "fleet ${resolved[*]} exited"; }
    [ "$SECONDS" -lt "$deadline" ] || { cat "$work/controller.log" >&2; fail "fleet controller did not take Lease $release_ns/fleet-controller within ${timeout_s}s (holder: '${holder:-}')"; }
    sleep 0.5
  done
  step "the controller holds the lease (holder: $holder)"
else
  fail "the fleet binary has no 'controller' subcommand: the chart's Deployment cannot run"
fi

step "OK: both charts lint, render, apply and list; the controller becomes leader"
