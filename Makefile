# kgrag: build, test, demo, bench.
#
#   make demo    the main job on the embedded default: no services, no LLM
#   make test    every test, with the real stores started by scripts/
#   make test-clients  the tests with clients of large installs (Open WebUI)
#   make bench   benchmarks against the peers named in the issues

GO      ?= go
BIN     ?= bin/kgrag
CACHE   ?= $(HOME)/.cache/kgrag
SERVICES_ENV := .cache/services.env
DEMO    ?= .cache/demo

.PHONY: all build demo test test-clients test-unit test-fuzz services-up services-down bench vet fmt clean shellcheck

all: build

build:
	$(GO) build -o $(BIN) ./cmd/kgrag

# Macbeth (demo/text/macbeth.txt, public domain) indexed with GraphRAG's fast
# method and no reports: noun phrases for entities, co-occurrence for
# relationships, Leiden communities, no model at all; then inspected,
# turned into Turtle, its entities embedded and a question's context
# retrieved in memory (kgrag ask --context-only). The embedder is
# kgrag-llmtest, the project's deterministic OpenAI-compatible test server,
# started on a free 127.0.0.1 port and stopped at the end: no model, no
# services.
demo: build
	$(BIN) index --input demo/text --output $(DEMO)/output --method fast --reports none
	$(BIN) inspect $(DEMO)/output
	$(BIN) load --input $(DEMO)/output --turtle $(DEMO)/graph.ttl --with-ontology
	@echo "demo: Turtle written to $(DEMO)/graph.ttl"
	$(GO) build -o bin/kgrag-llmtest ./cmd/kgrag-llmtest
	@bash -c "$$demo_ask"

# demo_ask runs in bash (for /dev/tcp): pick a free port, start the test
# embedder, wait for it, embed, ask, and stop the embedder however it ends.
define demo_ask
set -euo pipefail
port=""
for p in $$(seq 11435 11535); do
	if ! (exec 3<>/dev/tcp/127.0.0.1/$$p) 2>/dev/null; then port=$$p; break; fi
done
[[ -n $$port ]] || { echo "demo: no free port in 11435-11535" >&2; exit 1; }
bin/kgrag-llmtest -addr 127.0.0.1:$$port -dim 64 2>$(DEMO)/llmtest.log &
pid=$$!
trap 'kill $$pid 2>/dev/null; wait $$pid 2>/dev/null || true' EXIT
for _ in $$(seq 100); do
	(exec 3<>/dev/tcp/127.0.0.1/$$port) 2>/dev/null && break
	kill -0 $$pid 2>/dev/null || { cat $(DEMO)/llmtest.log >&2; exit 1; }
	sleep 0.1
done
export KGRAG_LLM_URL=http://127.0.0.1:$$port/v1 KGRAG_EMBED_MODEL=demo-embed
set -x
$(BIN) embed --input $(DEMO)/output --tables entities,text_units
$(BIN) ask --input $(DEMO)/output --context-only --top-k-entities 3 --max-context-tokens 3000 "What does Lady Macbeth urge Macbeth to do to King Duncan?"
{ set +x; } 2>/dev/null
echo "demo: that is the context kgrag ask would send to a chat model (see docs/ask.md)"
set -x
$(BIN) eval --input $(DEMO)/output --questions demo/eval/macbeth.jsonl
{ set +x; } 2>/dev/null
echo "demo: how much of each question's gold evidence each mode's context holds (see docs/eval.md)"
endef
export demo_ask

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

# ShellCheck on scripts/ (installed from PyPI into .cache once).
shellcheck:
	bash scripts/shellcheck.sh

# Everything: vet, ShellCheck, unit tests, the fuzz corpus, and
# integration tests against real Oxigraph, Fuseki and Virtuoso started
# here on 127.0.0.1.
# scripts/test.sh runs `make vet` itself, once the model server's build
# (minutes on a fresh machine) has started in the background.
test:
	bash scripts/test.sh

# The clients with large installs (Open WebUI); CI runs it after test.
test-clients:
	bash scripts/test-clients.sh

# Unit tests only: no services, no downloads.
test-unit:
	$(GO) test ./...

# Every step of the benchmark harness (bench/run; figures in
# .cache/bench/report.md and one .cache/bench/STEP.json per step). One step
# alone: make bench STEPS=leiden (or go run ./bench/run -steps leiden);
# steps and the BENCH_* variables: go run ./bench/run -help.
STEPS ?=
bench: build
	$(GO) run ./bench/run$(if $(STEPS), -steps '$(STEPS)')

services-up:
	bash scripts/services.sh up

services-down:
	bash scripts/services.sh down

clean:
	rm -rf bin .cache
