# Kassa's front door. `make` alone lists the targets.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO           ?= go
TEST_TIMEOUT ?= 30m
# golangci-lint at a pinned version, built by `go run` (not a dependency of go.mod). Go keeps
# the built binary in its build cache: the first run on a cold cache compiles it (about 3
# CPU-minutes with the modules downloaded), later runs start in about 2 s, so a bin/ copy would
# save nothing on a clean CI machine; a CI that keeps GOCACHE between runs skips the compile.
GOLANGCI_LINT ?= $(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
# Database URL for run/test: $KASSA_DATABASE_URL when reachable, else the local server, else a
# private throwaway cluster (see .ci/postgres.sh).
PG_URL        = $$(.ci/postgres.sh)

.PHONY: help run test generate check-generated lint lint-openapi lint-dashboard dashboard-tools arch bench conformance build db db-stop

help: ## Show this list of targets
	@echo "Kassa, a self-hosted payment platform. Usage: make <target>"
	@echo
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

run: ## Run kassa locally on its own database `kassa` (created when missing on the server .ci/postgres.sh finds), migrations applied, demo merchant
	@url="$$(.ci/postgres.sh database kassa)"; KASSA_DATABASE_URL="$$url" $(GO) run ./cmd/kassa serve --migrate --dev --demo

test: ## Run every test with -race, conformance and browser suites included, against Postgres
	@url="$(PG_URL)"; export KASSA_DATABASE_URL="$$url"; \
	export KASSA_CHROMIUM="$$(.ci/chromium.sh)" KASSA_REQUIRE_BROWSER=1; \
	rm -rf out/conformance-summary.txt out/screenshots; \
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...; \
	if [ -f out/conformance-summary.txt ]; then sed -n '/^conformance summary:/,$$p' out/conformance-summary.txt; fi

generate: dashboard-tools ## Regenerate code from the OpenAPI specs (go generate ./openapi/, then the dashboard's TypeScript types)
	$(GO) generate ./openapi/
	@tools/dashboard-types/node_modules/.bin/openapi-typescript openapi/gen/dashboard.json \
		-o openapi/gen/dashboard.d.ts

# The dashboard's type tools: openapi-typescript, TypeScript and the vendored libraries' types,
# pinned in tools/dashboard-types (package-lock.json), installed there by `npm ci` when missing
# or out of date; the checked files and the compiler options are tools/dashboard-types/tsconfig.json.
dashboard-tools:
	@if ! (cd tools/dashboard-types && npm ls --silent >/dev/null 2>&1); then \
		(cd tools/dashboard-types && npm ci --no-audit --no-fund --loglevel=error); fi

check-generated: generate ## Fail when committed generated code differs from `make generate`
	@if ! git diff --quiet --exit-code -- openapi/; then \
		echo "Generated code under openapi/ is stale: run 'make generate' and commit the result." >&2; \
		git diff --stat -- openapi/ >&2; exit 1; \
	fi
	@if [ -n "$${CI:-}" ] && [ -n "$$(git ls-files --others --exclude-standard -- openapi/)" ]; then \
		echo "'make generate' created files under openapi/ that are not committed:" >&2; \
		git ls-files --others --exclude-standard -- openapi/ >&2; exit 1; \
	fi

lint: ## Conflict markers, gofmt, go vet, golangci-lint (.golangci.yml) and the architecture rule (modules/arch_test.go)
	@if git grep -InE '^(<<<<<<<|>>>>>>>|\|\|\|\|\|\|\|)( |$$)' -- . ; then \
		echo "unresolved merge-conflict markers in the tracked files above" >&2; exit 1; fi
	@unformatted="$$(gofmt -l $$(find . \( -path ./.git -o -path ./.pgdata -o -path ./bin \) -prune -o -name '*.go' -print))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:" >&2; echo "$$unformatted" >&2; exit 1; fi
	$(GO) vet ./...
	$(GOLANGCI_LINT) run --allow-serial-runners ./...
	$(GO) test -count=1 -run '^TestArchitecture' ./modules/

# The OpenAPI linter: Redocly CLI pinned in tools/openapi-lint (package-lock.json), installed
# there by `npm ci` when missing; the rule set and its reasons are tools/openapi-lint/redocly.yaml.
OPENAPI_SPECS = openapi/merchant.yaml openapi/operator.yaml openapi/checkout.yaml openapi/dashboard.yaml openapi/app.yaml
lint: lint-openapi lint-dashboard

lint-openapi: ## Lint the OpenAPI specs with the written rule set (tools/openapi-lint/redocly.yaml)
	@if ! (cd tools/openapi-lint && npm ls --silent >/dev/null 2>&1); then \
		(cd tools/openapi-lint && npm ci --no-audit --no-fund --loglevel=error); fi
	@REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
		tools/openapi-lint/node_modules/.bin/redocly lint --config tools/openapi-lint/redocly.yaml \
		--format=codeframe $(OPENAPI_SPECS) 2>&1 | { grep -v '[║╔╚]' || true; }

lint-dashboard: dashboard-tools ## Type-check the dashboard's scripts against openapi/dashboard.yaml (tsc --noEmit)
	tools/dashboard-types/node_modules/.bin/tsc --noEmit -p tools/dashboard-types/tsconfig.json

arch: ## Only the architecture rule: core, ports and modules free of adapters; module→module and adapter→adapter edges allow-listed
	$(GO) test -count=1 -run '^TestArchitecture' -v ./modules/

bench: ## Run the load benchmark, table on stdout and out/bench.json (BENCH=name runs only matching scenarios)
	$(GO) run ./conformance/bench $(if $(BENCH),-only '$(BENCH)')

conformance: ## Run the conformance suite (set KASSA_BASE_URL, KASSA_OPERATOR_TOKEN to target a server)
	$(if $(KASSA_BASE_URL),KASSA_BASE_URL='$(KASSA_BASE_URL)') \
	$(if $(KASSA_OPERATOR_TOKEN),KASSA_OPERATOR_TOKEN='$(KASSA_OPERATOR_TOKEN)') \
	$(GO) test -count=1 ./conformance/ -run . -v

build: ## Build bin/kassa
	$(GO) build -o bin/kassa ./cmd/kassa

db: ## Print the URL of a usable Postgres (starting a private one if needed)
	@.ci/postgres.sh

db-stop: ## Stop the private Postgres cluster started by .ci/postgres.sh
	@.ci/postgres.sh stop
