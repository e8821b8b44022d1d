#!/usr/bin/env bash
# es-cluster.sh: a three-node Elasticsearch cluster on 127.0.0.1, from the
# same distribution as scripts/elasticsearch.sh, for the tests of kgrag's
# vector index on a cluster (a replica taking over from a lost node).
#
# Usage: scripts/es-cluster.sh start|stop|status|urls
#        scripts/es-cluster.sh kill N      SIGKILL node N's server JVM (1..3)
#        scripts/es-cluster.sh restart N   start node N again and wait until
#                                          it has joined the cluster
#
# Node N listens for HTTP on KGRAG_ES_CLUSTER_PORT+N-1 (default 9211..9213)
# and for transport on KGRAG_ES_CLUSTER_TRANSPORT+N-1 (9311..9313), keeps
# its data in KGRAG_ES_CLUSTER_DIR/nodeN (default
# $KGRAG_RUN/es-cluster/nodeN), heap KGRAG_ES_HEAP (default here 384m).
# All three are master-eligible data nodes: two form a quorum, so the
# cluster lives on with one node lost and stops electing with two.
# start wipes the data of a stopped cluster (KGRAG_FRESH=0 keeps it) and
# waits until all three have joined; urls prints the HTTP URLs,
# comma-separated, as kgrag's --index-url takes them.
set -euo pipefail
KG_NAME=es-cluster
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

BASE=${KGRAG_ES_CLUSTER_PORT:-9211}
TBASE=${KGRAG_ES_CLUSTER_TRANSPORT:-9311}
ROOT=${KGRAG_ES_CLUSTER_DIR:-$KGRAG_RUN/es-cluster}
export KGRAG_ES_HEAP=${KGRAG_ES_HEAP:-384m}
TIMEOUT=${KGRAG_START_TIMEOUT:-240}
N=3

port() { echo $((BASE + $1 - 1)); }
node_args() {
	local i=$1 seeds="" masters="" j
	for ((j = 1; j <= N; j++)); do
		seeds+=${seeds:+,}127.0.0.1:$((TBASE + j - 1))
		masters+=${masters:+,}kgrag-$j
	done
	echo --port "$(port "$i")" --dir "$ROOT/node$i" --node "kgrag-$i" \
		--transport-port $((TBASE + i - 1)) --seed-hosts "$seeds" --masters "$masters"
}
urls() {
	local i out=""
	for ((i = 1; i <= N; i++)); do
		out+=${out:+,}http://127.0.0.1:$(port "$i")
	done
	echo "$out"
}
check_n() { [[ ${1:-} =~ ^[1-3]$ ]] || kg_die "node number 1..3, got '${1:-}'"; }

# wait_nodes PORT COUNT: wait until the node at PORT sees COUNT nodes.
wait_nodes() {
	local t0=$SECONDS
	until kg_http_ok "http://127.0.0.1:$1/_cluster/health?wait_for_nodes=$2&timeout=2s"; do
		((SECONDS - t0 < TIMEOUT)) || kg_die "the cluster did not reach $2 nodes in ${TIMEOUT}s (logs: $ROOT/node*/server.log)"
		sleep 1
	done
}

start_node() {
	local i=$1 args
	read -r -a args <<<"$(node_args "$i")"
	"$here/elasticsearch.sh" start --no-wait "${args[@]}" >/dev/null
}

case ${1:-status} in
start)
	t0=$(date +%s%N)
	if [[ ${KGRAG_FRESH:-1} == 1 ]] && ! kg_pid_alive "$ROOT/node1/server.pid"; then
		rm -rf "$ROOT"
	fi
	for ((i = 1; i <= N; i++)); do
		start_node "$i"
	done
	wait_nodes "$(port 1)" $N
	kg_log "3 nodes joined in $(kg_ms_since "$t0") ms"
	urls
	;;
stop)
	for ((i = 1; i <= N; i++)); do
		kg_stop "$ROOT/node$i/server.pid" || true
	done
	;;
status)
	kg_http_ok "http://127.0.0.1:$(port 1)/_cluster/health?wait_for_nodes=$N&timeout=1s" || {
		kg_log "not running with $N nodes"
		exit 1
	}
	urls
	;;
urls) urls ;;
kill)
	check_n "${2:-}"
	pidf=$ROOT/node$2/tmp/es.pid
	[[ -s $pidf ]] || kg_die "node $2 has no $pidf"
	kill -KILL "$(<"$pidf")"
	# The launcher exits once its server JVM is gone.
	for _ in $(seq 50); do
		kg_pid_alive "$ROOT/node$2/server.pid" || break
		sleep 0.2
	done
	kg_log "killed node $2"
	;;
restart)
	check_n "${2:-}"
	kg_pid_alive "$ROOT/node$2/server.pid" && kg_die "node $2 is running"
	KGRAG_FRESH=0 start_node "$2"
	# Joined: the node sees every node that is running, itself included.
	alive=0
	for ((i = 1; i <= N; i++)); do
		kg_pid_alive "$ROOT/node$i/server.pid" && alive=$((alive + 1))
	done
	wait_nodes "$(port "$2")" "$alive"
	kg_log "node $2 joined again"
	;;
*) kg_die "usage: $0 start|stop|status|urls|kill N|restart N" ;;
esac
