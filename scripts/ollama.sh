#!/usr/bin/env bash
# ollama.sh: a real Ollama, kgrag's default model server, for the tests of
# what kgrag does with it: its window discovery (/api/show), num_ctx per
# request on its own /api/chat, a prompt longer than its context, JSON
# mode and embeddings. No model hub is reachable: Ollama is built from
# the Go module proxy and the models are the PyPI GGUF files
# scripts/models.sh installs, imported offline.
#
# Usage: scripts/ollama.sh install|start|stop|status|url [--port P] [--dir DIR]
#   install  build ollama $OLLAMA_VERSION with go install into
#            $KGRAG_CACHE/ollama/<hash of version and flags>/bin (about 13
#            min on 2 cores, once), for a portable x86-64 baseline
#            (Haswell's: AVX2, FMA, F16C, BMI2; never AVX-512 or AMX,
#            which the build would otherwise not use either, but a CPU
#            flag in CGO_CFLAGS could bring in). Its cgo code wants headers
#            the module zip leaves out: Debian's nlohmann-json3-dev and
#            libstb-dev (installed with apt-get when missing), and
#            miniaudio.h, taken from the PyPI sdist miniaudio.
#   start    run `ollama serve` on 127.0.0.1:P (default 11534, not Ollama's
#            11434, which a user's own may hold) with its models in
#            $KGRAG_CACHE/ollama/models, import Gemma 3 270M and
#            all-MiniLM-L6-v2 from scripts/models.sh's GGUF files (with a
#            TEMPLATE that keeps the system message, where kgrag puts the
#            data: one with FROM alone drops it), check that a chat and an
#            embedding request are answered, and write $KGRAG_OLLAMA_ENV
#            (default .cache/ollama.env):
#              KGRAG_TEST_OLLAMA_URL=http://127.0.0.1:P/v1
#              KGRAG_TEST_OLLAMA_CHAT_MODEL=gemma-3-270m-qa
#              KGRAG_TEST_OLLAMA_EMBED_MODEL=all-minilm-l6-v2
#              KGRAG_TEST_OLLAMA_LOG=DIR/server.log
#   stop     stop it and remove the env file
#   status   exit 0 when running and answering; print the base URL
#   url      print http://127.0.0.1:P/v1
#
# Environment: KGRAG_OLLAMA_PORT, KGRAG_OLLAMA_DIR (default
# $KGRAG_RUN/ollama), KGRAG_OLLAMA_ENV.
set -euo pipefail
KG_NAME=ollama
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"

OLLAMA_VERSION=v0.17.4
MINIAUDIO=miniaudio==1.71
CHAT_MODEL=gemma-3-270m-qa
EMBED_MODEL=all-minilm-l6-v2

PORT=${KGRAG_OLLAMA_PORT:-11534}
DIR=${KGRAG_OLLAMA_DIR:-$KGRAG_RUN/ollama}
ENV_FILE=${KGRAG_OLLAMA_ENV:-$KGRAG_REPO/.cache/ollama.env}
HOME_DIR=$KGRAG_CACHE/ollama
MODELS_DIR=$HOME_DIR/models

if [[ $(uname -m) == x86_64 ]]; then
	# ggml picks its SIMD kernels by the compiler's target macros
	# (__AVX2__, __FMA__, ...): without a -march the build is plain
	# x86-64 and slow; -march=native would take what this CPU has.
	ARCH_FLAGS="-march=haswell -mtune=generic"
else
	ARCH_FLAGS=""
fi
BUILD_KEY=$(printf '%s\n%s\n' "$OLLAMA_VERSION" "$ARCH_FLAGS" | sha256sum | cut -c1-16)
BIN=$HOME_DIR/$BUILD_KEY/bin/ollama

cmd=${1:-status}
shift || true
kg_parse_args "$@"
PIDFILE=$DIR/server.pid
LOGFILE=$DIR/server.log
URL=http://127.0.0.1:$PORT/v1
READY_URL=http://127.0.0.1:$PORT/api/version

# deb_headers: the Debian packages whose headers the build includes.
deb_headers() {
	local missing=() p
	for p in nlohmann-json3-dev libstb-dev; do
		dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
	done
	((${#missing[@]} == 0)) && return 0
	kg_log "installing ${missing[*]} (headers the ollama build includes)"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2; then
		apt-get update -q >&2 || true
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2 ||
			kg_die "apt-get install ${missing[*]} failed"
	fi
}

# miniaudio_include: a folder holding miniaudio/miniaudio.h (as llama.cpp's
# mtmd includes it), from the PyPI sdist.
miniaudio_include() {
	local inc=$HOME_DIR/include tmp h
	if [[ -s $inc/miniaudio/miniaudio.h ]]; then
		echo "$inc"
		return 0
	fi
	tmp=$(mktemp -d)
	python3 -m pip download --quiet --no-deps --no-binary :all: --dest "$tmp" "$MINIAUDIO" >&2 ||
		kg_die "pip download $MINIAUDIO failed"
	tar -xzf "$tmp"/miniaudio-*.tar.gz -C "$tmp" || kg_die "unpacking the $MINIAUDIO sdist failed"
	h=$(find "$tmp" -name miniaudio.h | head -n 1)
	[[ -n $h ]] || kg_die "the $MINIAUDIO sdist holds no miniaudio.h"
	mkdir -p "$inc/miniaudio"
	cp "$h" "$inc/miniaudio/miniaudio.h"
	rm -rf "$tmp"
	echo "$inc"
}

# check_isa FILE: fail when the C and C++ code in FILE (ggml, llama.cpp)
# holds AVX-512 or AMX instructions. Go's own runtime has AVX-512 paths
# that it takes only on CPUs that report AVX-512: functions with Go names
# (a package path: runtime.asyncPreempt, hash/crc32.ieeeCLMUL) and its
# assembly named for the instructions (expandAVX512_24) are not checked;
# C names (ggml_vec_dot_q4_0_q8_0, _ZN..., with GCC's .part.0 or .cold
# suffixes) are.
check_isa() {
	local hits
	command -v objdump >/dev/null || kg_die "objdump (binutils) is needed to check the ollama build"
	hits=$(objdump -d --no-show-raw-insn "$1" | awk '
		/^[0-9a-f]+ <.*>:$/ {
			sym = substr($2, 2, length($2) - 3)
			c = (sym ~ /^[A-Za-z_][A-Za-z0-9_]*(\.(part|cold|isra|constprop|lto_priv|localalias)(\.[0-9]+)?)*$/) && sym !~ /AVX512/
			next
		}
		c && /[[:space:]](ldtilecfg|sttilecfg|tileloadd|tileloaddt1|tilestored|tilezero|tilerelease|tdp[a-z0-9]+)[[:space:]]|%zmm[0-9]|%tmm[0-7]|\{%k[1-7]\}/ {
			print sym ": " $0
			if (++n == 5) exit
		}')
	if [[ -n $hits ]]; then
		kg_log "error: $1 holds C or C++ code outside the portable baseline (AMX or AVX-512):"
		printf '%s\n' "$hits" >&2
		return 1
	fi
	kg_log "checked the C and C++ code of $1: no AMX or AVX-512 instructions"
}

do_install() {
	[[ -x $BIN ]] && return 0
	mkdir -p "$HOME_DIR"
	exec 8>"$HOME_DIR/install.lock"
	flock 8
	[[ -x $BIN ]] && return 0
	deb_headers
	local inc t0 tmp
	inc=$(miniaudio_include)
	t0=$(date +%s)
	tmp=$(mktemp -d "$HOME_DIR/.build.XXXXXX")
	kg_log "building ollama $OLLAMA_VERSION with go install (once: about 13 min on 2 cores; flags: ${ARCH_FLAGS:-none})"
	if ! CGO_ENABLED=1 GOBIN=$tmp/bin GOFLAGS=-mod=mod \
		CGO_CFLAGS="-O3 $ARCH_FLAGS -I$inc" CGO_CXXFLAGS="-O3 $ARCH_FLAGS -I$inc" \
		go install "github.com/ollama/ollama@$OLLAMA_VERSION" >&2; then
		rm -rf "$tmp"
		kg_die "go install github.com/ollama/ollama@$OLLAMA_VERSION failed"
	fi
	if ! check_isa "$tmp/bin/ollama"; then
		rm -rf "$tmp"
		kg_die "the ollama build is not portable; it was not kept"
	fi
	rm -rf "${HOME_DIR:?}/${BUILD_KEY:?}"
	mv "$tmp" "$HOME_DIR/$BUILD_KEY"
	kg_log "built in $(($(date +%s) - t0))s: $BIN"
}

# The GGUF files of scripts/models.sh (its install makes them).
gguf_paths() {
	"$here/models.sh" install >&2 || kg_die "scripts/models.sh install failed"
	CHAT_GGUF=$KGRAG_CACHE/models/gemma-3-270m-q4_k_m-qa.gguf
	EMBED_GGUF=$KGRAG_CACHE/models/all-MiniLM-L6-v2-f32.gguf
	[[ -s $CHAT_GGUF && -s $EMBED_GGUF ]] || kg_die "scripts/models.sh did not leave $CHAT_GGUF and $EMBED_GGUF"
}

# The packaged Gemma 3 270M is the pretrained model, not the instruction
# one, with no chat template of Ollama's: the template gives it the
# question-and-answer frame scripts/models.sh gives llama.cpp, the system
# message first (a Modelfile with FROM alone gets {{ .Prompt }}, which
# drops it), and "Question" ends an answer.
read -r -d '' CHAT_MODELFILE_TAIL <<'EOF' || true
TEMPLATE """{{- range .Messages }}{{- if eq .Role "system" }}{{ .Content }}

{{ else if eq .Role "user" }}Question: {{ .Content }}
{{ else if eq .Role "assistant" }}Answer: {{ .Content }}
{{ end }}{{- end }}Answer:"""
PARAMETER stop Question
PARAMETER stop <eos>
EOF

import_models() {
	local list mf
	list=$(OLLAMA_HOST=127.0.0.1:$PORT "$BIN" list 2>/dev/null || true)
	mf=$(mktemp)
	if ! grep -q "^$CHAT_MODEL:" <<<"$list"; then
		printf 'FROM %s\n%s\n' "$CHAT_GGUF" "$CHAT_MODELFILE_TAIL" >"$mf"
		OLLAMA_HOST=127.0.0.1:$PORT "$BIN" create "$CHAT_MODEL" -f "$mf" >&2 || kg_die "ollama create $CHAT_MODEL failed"
	fi
	if ! grep -q "^$EMBED_MODEL:" <<<"$list"; then
		printf 'FROM %s\n' "$EMBED_GGUF" >"$mf"
		OLLAMA_HOST=127.0.0.1:$PORT "$BIN" create "$EMBED_MODEL" -f "$mf" >&2 || kg_die "ollama create $EMBED_MODEL failed"
	fi
	rm -f "$mf"
}

write_env() {
	mkdir -p "$(dirname "$ENV_FILE")"
	cat >"$ENV_FILE" <<-EOF
		KGRAG_TEST_OLLAMA_URL=$URL
		KGRAG_TEST_OLLAMA_CHAT_MODEL=$CHAT_MODEL
		KGRAG_TEST_OLLAMA_EMBED_MODEL=$EMBED_MODEL
		KGRAG_TEST_OLLAMA_LOG=$LOGFILE
	EOF
}

# smoke_test: one chat and one embedding request through the OpenAI API.
smoke_test() {
	local body out
	body='{"model":"'$CHAT_MODEL'","messages":[{"role":"user","content":"Say yes."}],"max_tokens":2,"temperature":0}'
	out=$(curl -sS --max-time 300 -H 'Content-Type: application/json' -d "$body" "$URL/chat/completions" 2>&1) &&
		grep -q '"choices"' <<<"$out" || { kg_log "error: the chat request failed: ${out:0:300}"; return 1; }
	body='{"model":"'$EMBED_MODEL'","input":"a test sentence"}'
	out=$(curl -sS --max-time 300 -H 'Content-Type: application/json' -d "$body" "$URL/embeddings" 2>&1) &&
		grep -q '"embedding"' <<<"$out" || { kg_log "error: the embedding request failed: ${out:0:300}"; return 1; }
	kg_log "chat and embedding requests answered"
}

do_start() {
	if kg_pid_alive "$PIDFILE" && kg_http_ok "$READY_URL"; then
		kg_log "already running at $URL"
		write_env
		echo "$URL"
		return 0
	fi
	do_install
	gguf_paths
	kg_clear_stale "$PIDFILE" "$PORT"
	mkdir -p "$DIR" "$MODELS_DIR"
	local t0
	t0=$(date +%s%N)
	# One model loaded at a time, one request at a time: the tests' 2
	# cores. No update checks or cloud: nothing leaves the machine.
	OLLAMA_HOST=127.0.0.1:$PORT OLLAMA_MODELS=$MODELS_DIR OLLAMA_MAX_LOADED_MODELS=2 OLLAMA_NUM_PARALLEL=1 \
		OLLAMA_NOPRUNE=1 OLLAMA_KEEP_ALIVE=30m HOME=$HOME_DIR \
		kg_spawn "$PIDFILE" "$LOGFILE" "$BIN" serve || kg_die "ollama serve did not start"
	kg_log "started pid $(<"$PIDFILE") on 127.0.0.1:$PORT"
	if ! kg_wait_ready "$READY_URL" "$PIDFILE" "$LOGFILE"; then
		kg_stop "$PIDFILE" || true
		kg_die "ollama serve did not start"
	fi
	import_models
	if ! smoke_test; then
		tail -n 30 "$LOGFILE" >&2 || true
		kg_stop "$PIDFILE" >/dev/null 2>&1 || true
		kg_die "ollama started but cannot answer (see $LOGFILE)"
	fi
	kg_log "start-up took $(kg_ms_since "$t0") ms"
	write_env
	echo "$URL"
}

case $cmd in
install) do_install ;;
start) do_start ;;
stop)
	kg_stop "$PIDFILE"
	rm -f "$ENV_FILE"
	;;
status) kg_status "$PIDFILE" "$READY_URL" "$URL" ;;
url) echo "$URL" ;;
*) kg_die "usage: $0 install|start|stop|status|url [--port P] [--dir DIR]" ;;
esac
