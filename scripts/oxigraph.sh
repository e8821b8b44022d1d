#!/usr/bin/env bash
# oxigraph.sh: an Oxigraph server for kgrag tests and benchmarks.
#
# Usage: scripts/oxigraph.sh install|start|stop|status|url [--port P] [--dir DIR] [--mem] [--fresh]
#   install  pip install oxigraph==$OXIGRAPH_VERSION when the oxigraph CLI is missing
#   start    run `oxigraph serve` on 127.0.0.1:P storing in DIR/data (or in
#            memory with --mem) and wait until /query answers
#   stop     stop it (TERM, then KILL)
#   status   exit 0 when running and answering; print the URL
#   url      print http://127.0.0.1:P
#
# --fresh (or KGRAG_FRESH=1) removes DIR/data before a start, for throwaway
# test data; a running server is left as it is.
# Environment: KGRAG_OXIGRAPH_PORT (default 7878), KGRAG_OXIGRAPH_DIR (default
# $KGRAG_RUN/oxigraph), KGRAG_OXIGRAPH_MEM=1, OXIGRAPH (the CLI, default
# oxigraph on PATH), PYTHON (for pip, default python3), KGRAG_START_TIMEOUT.
set -euo pipefail
KG_NAME=oxigraph
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

PORT=${KGRAG_OXIGRAPH_PORT:-7878}
DIR=${KGRAG_OXIGRAPH_DIR:-$KGRAG_RUN/oxigraph}
MEM=${KGRAG_OXIGRAPH_MEM:-0}
PYTHON=${PYTHON:-python3}
cmd=${1:-status}
shift || true
kg_parse_args "$@"
PIDFILE=$DIR/server.pid
LOGFILE=$DIR/server.log
URL=http://127.0.0.1:$PORT
READY_URL="$URL/query?query=ASK%7B%7D"

find_cli() {
	if [[ -n ${OXIGRAPH:-} ]]; then
		echo "$OXIGRAPH"
		return 0
	fi
	if command -v oxigraph >/dev/null 2>&1; then
		command -v oxigraph
		return 0
	fi
	local b
	for b in "$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_path("scripts"))' 2>/dev/null)/oxigraph" \
		"$("$PYTHON" -m site --user-base 2>/dev/null)/bin/oxigraph"; do
		if [[ -x $b ]]; then
			echo "$b"
			return 0
		fi
	done
	return 1
}

do_install() {
	find_cli >/dev/null && return 0
	local start
	start=$(date +%s)
	kg_log "installing oxigraph==$OXIGRAPH_VERSION with pip"
	"$PYTHON" -m pip install --quiet "oxigraph==$OXIGRAPH_VERSION" >&2 ||
		kg_die "pip install oxigraph==$OXIGRAPH_VERSION failed"
	hash -r
	find_cli >/dev/null || kg_die "oxigraph CLI not on PATH after pip install"
	kg_log "installed in $(($(date +%s) - start))s"
}

do_start() {
	if kg_pid_alive "$PIDFILE" && kg_http_ok "$READY_URL"; then
		kg_log "already running at $URL"
		echo "$URL"
		return 0
	fi
	do_install
	local cli
	cli=$(find_cli)
	if kg_pid_alive "$PIDFILE"; then
		kg_log "pid $(<"$PIDFILE") is not answering; stopping it"
		kg_stop "$PIDFILE"
	fi
	kg_port_busy "$PORT" && kg_die "port $PORT is in use by another process"
	mkdir -p "$DIR"
	kg_fresh "$DIR"
	local store=(--location "$DIR/data")
	if [[ $MEM == 1 ]]; then
		store=()
	else
		mkdir -p "$DIR/data"
	fi
	local t0
	t0=$(date +%s%N)
	"$cli" serve "${store[@]}" --bind "127.0.0.1:$PORT" >"$LOGFILE" 2>&1 &
	echo $! >"$PIDFILE"
	kg_log "started pid $(<"$PIDFILE") on 127.0.0.1:$PORT"
	if ! kg_wait_ready "$READY_URL" "$PIDFILE" "$LOGFILE"; then
		kg_stop "$PIDFILE" || true
		kg_die "oxigraph did not start"
	fi
	kg_log "start-up took $(kg_ms_since "$t0") ms"
	echo "$URL"
}

case $cmd in
install) do_install ;;
start) do_start ;;
stop) kg_stop "$PIDFILE" ;;
status) kg_status "$PIDFILE" "$READY_URL" "$URL" ;;
url) echo "$URL" ;;
*) kg_die "usage: $0 install|start|stop|status|url [--port P] [--dir DIR] [--mem] [--fresh]" ;;
esac
