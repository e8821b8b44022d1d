#!/usr/bin/env bash
# fuseki-replicas.sh: two Apache Jena Fuseki servers on 127.0.0.1, each
# with its own persistent TDB2 dataset, from the same jar as
# scripts/fuseki.sh: the copies of one store that kgrag loads in turn
# (--store A,B --replicated-by kgrag) and reads from whichever answers,
# for the tests that kill a copy under a load or under questions.
#
# Usage: scripts/fuseki-replicas.sh start|stop|status|urls
#        scripts/fuseki-replicas.sh kill N      SIGKILL copy N's JVM (1..2)
#        scripts/fuseki-replicas.sh restart N   start copy N again on its
#                                               data and wait until it answers
#
# Copy N listens on KGRAG_FUSEKI_REPLICAS_PORT+N-1 (default 3131, 3132),
# keeps its data in KGRAG_FUSEKI_REPLICAS_DIR/copyN (default
# $KGRAG_RUN/fuseki-replicas/copyN), heap KGRAG_FUSEKI_HEAP (default here
# 768m). start wipes the data of stopped copies (KGRAG_FRESH=0 keeps it);
# urls prints the dataset URLs, comma-separated, as --store takes them.
#
# This is not RDF Delta: the copies do not know of each other, and kgrag
# is what keeps them alike (see docs/deploy/replicas.md). RDF Delta's patch
# log server and its Fuseki module are not served by the Maven repository
# this project builds from.
set -euo pipefail
KG_NAME=fuseki-replicas
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

BASE=${KGRAG_FUSEKI_REPLICAS_PORT:-3131}
ROOT=${KGRAG_FUSEKI_REPLICAS_DIR:-$KGRAG_RUN/fuseki-replicas}
export KGRAG_FUSEKI_HEAP=${KGRAG_FUSEKI_HEAP:-768m}
N=2

port() { echo $((BASE + $1 - 1)); }
urls() {
	local i out=""
	for ((i = 1; i <= N; i++)); do
		out+=${out:+,}http://127.0.0.1:$(port "$i")/ds
	done
	echo "$out"
}
check_n() { [[ ${1:-} =~ ^[1-2]$ ]] || kg_die "copy number 1..2, got '${1:-}'"; }
start_copy() { "$here/fuseki.sh" start --port "$(port "$1")" --dir "$ROOT/copy$1" >/dev/null; }

case ${1:-status} in
start)
	t0=$(date +%s%N)
	for ((i = 1; i <= N; i++)); do
		if [[ ${KGRAG_FRESH:-1} == 1 ]] && ! kg_pid_alive "$ROOT/copy$i/server.pid"; then
			rm -rf "$ROOT/copy$i"
		fi
		start_copy "$i"
	done
	kg_log "$N copies up in $(kg_ms_since "$t0") ms"
	urls
	;;
stop)
	for ((i = 1; i <= N; i++)); do
		kg_stop "$ROOT/copy$i/server.pid" || true
	done
	;;
status)
	for ((i = 1; i <= N; i++)); do
		kg_http_ok "http://127.0.0.1:$(port "$i")/ds/query?query=ASK%7B%7D" || {
			kg_log "copy $i is not answering"
			exit 1
		}
	done
	urls
	;;
urls) urls ;;
kill)
	check_n "${2:-}"
	pidf=$ROOT/copy$2/server.pid
	[[ -s $pidf ]] || kg_die "copy $2 has no $pidf"
	kill -KILL "$(<"$pidf")" 2>/dev/null || true
	for _ in $(seq 50); do
		kg_pid_alive "$pidf" || break
		sleep 0.1
	done
	kg_log "killed copy $2"
	;;
restart)
	check_n "${2:-}"
	kg_pid_alive "$ROOT/copy$2/server.pid" && kg_die "copy $2 is running"
	KGRAG_FRESH=0 start_copy "$2"
	kg_log "copy $2 answers again"
	;;
*) kg_die "usage: $0 start|stop|status|urls|kill N|restart N" ;;
esac
