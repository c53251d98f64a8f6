# orch-hook: see README.md. Every target works on a fresh clone with only Go
# installed; e2e and plugin validation also need the claude CLI (.ci/run
# installs it).

GO       ?= go
# The plugin's version (.claude-plugin/plugin.json) is the binary's: the
# hooks run ${CLAUDE_PLUGIN_DATA}/bin/<version>/orch-hook.
VERSION  ?= $(shell sed -n 's/.*"version"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' .claude-plugin/plugin.json | head -n 1)
LDFLAGS  := -s -w -X main.version=$(VERSION)
# The flags a release binary is built with (internal/dev/release): make build
# gives the same bytes for this platform, so hooks/release.sha256 vouches
# for it too.
BUILDFLAGS := -trimpath -buildvcs=false
# urfave_cli_no_docs drops the man-page renderer (and its package init,
# ~0.4 ms on every hook call).
TAGS     := urfave_cli_no_docs
BIN      := bin/orch-hook
# Fuzz targets as package:FuzzName; make test runs each briefly.
FUZZ_TARGETS := ./hooks:FuzzDecode ./state:FuzzDecodeCheckpoint ./gates/coordinate:FuzzDecideCoord ./gates:FuzzShellScan ./gates/orchestrate:FuzzParsePlan ./gates:FuzzUnifiedDiff ./internal/app:FuzzParseConfig ./internal/app:FuzzIndexEntry ./internal/transcript:FuzzSum \
	./hooks:FuzzJSONFast ./state:FuzzJSONFast ./gates:FuzzJSONFast ./gates/orchestrate:FuzzJSONFast ./gates/coordinate:FuzzJSONFast ./internal/transcript:FuzzJSONFast ./gates/orchestrate:FuzzTaskHeader
# A count, not a duration: a time budget ending mid-input made the fuzzing
# coordinator fail now and then with "context deadline exceeded".
FUZZ_SHORT ?= 20000x
FUZZ_LONG  ?= 2m

.PHONY: all build demo generate jsongen validate release checksums release-check test test-unit test-race test-fuzz fuzz lint bench e2e ci clean

all: build

build:
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/orch-hook

# Renders commands/, agents/, hooks/hooks.json and settings.json from templates/.
generate:
	$(GO) run ./cmd/orch-hook generate

# Rewrites the generated JSON codecs (json_gen.go, internal/dev/jsongen);
# gates first, whose codecs the workflows' codecs call. If one no longer compiles,
# delete it first: without it the callers fall back to encoding/json.
JSONGEN_PKGS := ./gates ./hooks ./state ./gates/orchestrate ./gates/coordinate ./internal/transcript
jsongen:
	@for p in $(JSONGEN_PKGS); do UPDATE_JSONGEN=1 $(GO) test -count=1 -run '^TestJSONGenerated$$' $$p || exit 1; done

# claude plugin validate --strict on the repository (the plugin root). The
# claude CLI comes from PATH or .e2e/ (where .ci/run installs it).
CLAUDE ?= $(shell command -v claude 2>/dev/null || ls $(CURDIR)/.e2e/node_modules/.bin/claude 2>/dev/null)
validate:
	@if [ -z "$(CLAUDE)" ]; then \
		if [ -n "$$ORCH_HOOK_E2E_REQUIRED" ]; then echo "validate: no claude CLI, and ORCH_HOOK_E2E_REQUIRED is set"; exit 1; fi; \
		echo "validate: skipped: no claude CLI (npm i --prefix .e2e @anthropic-ai/claude-code@2.1.328)"; exit 0; \
	fi; \
	echo "$(CLAUDE) plugin validate --strict ."; \
	out=$$("$(CLAUDE)" plugin validate --strict . 2>&1); rc=$$?; echo "$$out" | tail -n 3; \
	if [ $$rc -ne 0 ]; then echo "$$out"; exit $$rc; fi

# The release (README, "Releasing"): reproducible static binaries for
# linux, darwin and windows (amd64, arm64) built with the toolchain go.mod
# pins, SHA256SUMS, the plugin archive and its marketplace entry, in
# dist/v$(VERSION)/; it also rewrites hooks/release.sha256, which the
# plugin's bootstrap verifies downloads against (commit it).
release:
	$(GO) run ./internal/dev/release -version '$(VERSION)' -out dist -pin

# Only the checksums: rebuild the binaries and rewrite hooks/release.sha256.
checksums:
	$(GO) run ./internal/dev/release -version '$(VERSION)' -checksums-only

# CI: the binaries this source builds must be the ones hooks/release.sha256
# pins (so a download the bootstrap verifies is this source, built anywhere).
release-check:
	$(GO) run ./internal/dev/release -check

# Replays a recorded Claude Code session through the real binary and prints
# every decision, then `orch-hook status`.
demo: build
	$(GO) run ./internal/dev/demo -bin $(BIN)

# Everything that needs nothing but Go: unit tests, testscript end-to-end
# scripts, the race detector on the state and hooks packages, and short
# fuzz runs.
test: test-unit test-race test-fuzz

test-unit:
	$(GO) test -count=1 $$($(GO) list ./... | grep -v /internal/dev/e2e)

test-race:
	$(GO) test -count=1 -race ./state/... ./hooks/... ./internal/app/...

test-fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "fuzz $$pkg $$fn ($(FUZZ_SHORT))"; \
		$(GO) test -run='^$$' -fuzz="^$$fn$$" -fuzztime=$(FUZZ_SHORT) $$pkg || exit 1; \
	done

fuzz:
	$(MAKE) test-fuzz FUZZ_SHORT=$(FUZZ_LONG)

lint:
	$(GO) run ./cmd/orch-hook generate --check
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null | grep -v '/testdata/')); \
	if [ -n "$$out" ]; then echo "gofmt needs to run on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags orchhook_bench ./...

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./state/... ./hooks/... ./internal/app/...
	$(GO) run ./internal/dev/procbench

# The end-to-end suite: the real Claude Code CLI (from PATH or .e2e/, where
# .ci/run installs it) against a mock of the Messages API, with the plugin
# and this binary; and the Gate 3 mutant, which the suite must catch. It
# skips without the CLI unless ORCH_HOOK_E2E_REQUIRED=1.
e2e:
	PATH="$(CURDIR)/.e2e/node_modules/.bin:$$PATH" $(GO) test -count=1 -timeout 10m ./internal/dev/e2e

# What CI runs (.ci/run).
ci: lint build release-check test validate e2e

clean:
	rm -rf bin dist
