#!/usr/bin/env bash
# Installs the servers the chart source tests start themselves: Debian's docker-registry (a distribution registry
# for OCI charts). The HTTPS chart repository is scripts/chart-repo-server.py, which needs python3.
set -euo pipefail
if ! command -v docker-registry >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-registry
fi
command -v python3 >/dev/null || { echo "python3 is needed by scripts/chart-repo-server.py" >&2; exit 1; }
docker-registry --version
