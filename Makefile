# Developer entry points. `make test` is the README's test command and what CI runs.
CARGO ?= cargo
EXAMPLE ?= examples/gitrepos/multi-cluster
DEV_ARGS ?=

.PHONY: build run test lint fmt crds crds-check snapshots tools helm-corpus kustomize-goldens bench ci

build:
	$(CARGO) build --workspace

## The main job on the embedded default: dev mode (hub, controller, local agent, 3 simulated clusters) deploying
## an example folder, with a live view until Ctrl-C. `make run DEV_ARGS=--exit-when-ready` exits once Ready.
run:
	$(CARGO) run -q -p fleet-cli -- dev --clusters 3 --repo $(EXAMPLE) $(DEV_ARGS)

## Every test in the workspace (unit, snapshot, CLI, compatibility goldens). Installs the real kubectl first:
## the API server's tests drive it as a client. Runs every test binary even when one fails, so a failure report
## is complete.
test: tools
	$(CARGO) test --workspace --no-fail-fast

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

## Regenerate charts/fleet-crd/templates/crds.yaml from the Rust types.
crds:
	UPDATE_CRDS=1 $(CARGO) test -p fleet-api --test crds

## Fails when the committed CRDs differ from what the types generate.
crds-check:
	$(CARGO) test -p fleet-api --test crds

## Review and accept insta snapshots after an intended output change.
snapshots:
	INSTA_UPDATE=always $(CARGO) test --workspace
	@git status --short -- '*.snap'

## The test oracles (real helm and kubectl), for goldens and compatibility runs. Never used by the product.
tools:
	scripts/install-tools.sh

## Renders the whole Helm corpus (../shared/charts) with our engine and with the real helm; fails below 95%.
helm-corpus: tools
	PATH="$(CURDIR)/.tools/bin:$$PATH" scripts/helm-corpus.sh ../shared/charts 95

## Regenerates the kustomize goldens with the real `kubectl kustomize`.
kustomize-goldens: tools
	scripts/kustomize-goldens.sh

bench:
	$(CARGO) bench --workspace

ci:
	bash .ci/run
