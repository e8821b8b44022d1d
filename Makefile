# kgrag: build, test, demo, bench.
#
#   make demo    the main job on the embedded default: no services, no LLM
#   make test    every test, with the real stores started by scripts/
#   make bench   benchmarks against the peers named in the issues

GO      ?= go
BIN     ?= bin/kgrag
CACHE   ?= $(HOME)/.cache/kgrag
SERVICES_ENV := .cache/services.env
DEMO    ?= .cache/demo

.PHONY: all build demo test test-unit test-fuzz services-up services-down bench vet fmt clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/kgrag

# A small synthetic GraphRAG 3.x output, made by the project itself, turned
# into Turtle and inspected.
demo: build
	$(GO) run ./internal/synth/cmd/kgrag-synth -out $(DEMO)/output -seed 1 \
		-entities 300 -relationships 900 -text-units 60 -communities 30
	$(BIN) inspect $(DEMO)/output
	$(BIN) load --input $(DEMO)/output --turtle $(DEMO)/graph.ttl --with-ontology
	@echo "demo: Turtle written to $(DEMO)/graph.ttl"

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

# Everything: vet, unit tests, the fuzz corpus, and integration tests
# against real Oxigraph, Fuseki and Virtuoso started here on 127.0.0.1.
test: vet
	bash scripts/test.sh

# Unit tests only: no services, no downloads.
test-unit:
	$(GO) test ./...

bench: build
	bash scripts/bench.sh

services-up:
	bash scripts/services.sh up

services-down:
	bash scripts/services.sh down

clean:
	rm -rf bin .cache
