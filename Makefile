# orch-hook: see README.md. Every target works on a fresh clone with only Go
# installed; e2e and plugin validation also need the claude CLI (.ci/run
# installs it).

GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
BIN      := bin/orch-hook
# Fuzz targets as package:FuzzName; make test runs each briefly.
FUZZ_TARGETS := ./hooks:FuzzDecode ./state:FuzzDecodeCheckpoint
FUZZ_SHORT ?= 3s
FUZZ_LONG  ?= 2m

.PHONY: all build demo test test-unit test-race test-fuzz fuzz lint bench ci clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/orch-hook

# Replays a recorded Claude Code session through the real binary and prints
# every decision, then `orch-hook status`.
demo: build
	$(GO) run ./internal/demo -bin $(BIN)

# Everything that needs nothing but Go: unit tests, testscript end-to-end
# scripts, the race detector on the state package, and a short fuzz run.
test: test-unit test-race test-fuzz

test-unit:
	$(GO) test -count=1 ./...

test-race:
	$(GO) test -count=1 -race ./state/... ./hooks/...

test-fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "fuzz $$pkg $$fn ($(FUZZ_SHORT))"; \
		$(GO) test -run='^$$' -fuzz="^$$fn$$" -fuzztime=$(FUZZ_SHORT) $$pkg || exit 1; \
	done

fuzz:
	$(MAKE) test-fuzz FUZZ_SHORT=$(FUZZ_LONG)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needs to run on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags orchhook_bench ./...

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./state/... ./hooks/...
	$(GO) run ./internal/procbench

# What CI runs (.ci/run).
ci: lint build test

clean:
	rm -rf bin dist
