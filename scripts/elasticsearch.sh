#!/usr/bin/env bash
# elasticsearch.sh: an Elasticsearch 8 node for the kgrag vector index tests
# (dense_vector + top-level knn search).
#
# Usage: scripts/elasticsearch.sh install|start|stop|status|url [--port P] [--dir DIR] [--fresh]
#            [--node NAME --transport-port T --seed-hosts H:T,... --masters NAME,...] [--no-wait]
#   install  download the integ-test-zip distribution of Elasticsearch
#            $ES_VERSION from Maven Central into $KGRAG_CACHE, check its
#            checksum and unpack it (no JDK inside; a system Java is used)
#   start    run a single-node, security-off node on 127.0.0.1:P with data,
#            logs, config and tmp in DIR, and wait until /_cluster/health
#            answers (yellow or better)
#   stop     stop it (TERM, then KILL)
#   status   exit 0 when running and answering; print the URL
#   url      print http://127.0.0.1:P
#
# --fresh (or KGRAG_FRESH=1) removes DIR/data before a start, for throwaway
# test data; a running node is left as it is.
#
# A node of a cluster (scripts/es-cluster.sh starts three): --node names
# it, --transport-port is its transport port, --seed-hosts the other nodes'
# transport addresses and --masters the master-eligible node names the
# cluster first forms from; cluster.name is then kgrag-cluster. --no-wait
# returns once the process runs (a lone node of three cannot form a
# cluster). DIR/tmp/es.pid holds the server JVM's pid, which a test sends
# SIGKILL to.
#
# Notes on this distribution (the minimal one Elastic publishes to Maven):
#   - modules are only transport-netty4, x-pack-core, x-pack-security and apm;
#     dense_vector, knn (top-level and query), match/bool/term queries, _bulk,
#     _search, _cluster/health, index CRUD work (they are in the server jar);
#   - missing: analysis-common (no "english" etc. analyzers; use "standard"),
#     the rrf retriever, painless, reindex, ingest, mapper-extras, and GET /
#     (answers 405), so readiness is polled on /_cluster/health;
#   - create test indices with "number_of_replicas": 0 to stay green.
# Elasticsearch refuses to run as root: under root the node runs as
# $KGRAG_ES_USER (default nobody) via setpriv, and DIR is chowned to it.
# Elasticsearch 8.15 needs Java 17..23 (it uses the SecurityManager, which
# Java 24 removed).
#
# Environment: KGRAG_ES_PORT (default 9200), KGRAG_ES_DIR (default
# $KGRAG_RUN/elasticsearch), KGRAG_ES_HEAP (default 512m), ES_JAVA_HOME (a
# JDK/JRE 17..23; default: the first one found in $JAVA_HOME, /usr/lib/jvm),
# ES_HOME (an unpacked distribution to use instead of the cached one),
# KGRAG_ES_USER, KGRAG_START_TIMEOUT.
set -euo pipefail
KG_NAME=elasticsearch
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

ES_URL=https://repo1.maven.org/maven2/org/elasticsearch/distribution/integ-test-zip/elasticsearch/$ES_VERSION/elasticsearch-$ES_VERSION.zip
PORT=${KGRAG_ES_PORT:-9200}
DIR=${KGRAG_ES_DIR:-$KGRAG_RUN/elasticsearch}
HEAP=${KGRAG_ES_HEAP:-512m}
ES_USER=${KGRAG_ES_USER:-nobody}
cmd=${1:-status}
shift || true
kg_parse_args "$@"
NODE="" TRANSPORT="" SEEDS="" MASTERS="" WAIT=1
set -- ${KG_ARGS[@]+"${KG_ARGS[@]}"}
while (($#)); do
	case $1 in
	--node) NODE=$2; shift 2 ;;
	--transport-port) TRANSPORT=$2; shift 2 ;;
	--seed-hosts) SEEDS=$2; shift 2 ;;
	--masters) MASTERS=$2; shift 2 ;;
	--no-wait) WAIT=0; shift ;;
	*) kg_die "unknown option $1" ;;
	esac
done
if [[ -n $SEEDS$MASTERS$TRANSPORT$NODE ]]; then
	[[ -n $NODE && $TRANSPORT =~ ^[0-9]+$ && -n $SEEDS && -n $MASTERS ]] ||
		kg_die "a cluster node needs --node, --transport-port, --seed-hosts and --masters"
fi
PIDFILE=$DIR/server.pid
LOGFILE=$DIR/server.log
URL=http://127.0.0.1:$PORT
READY_URL="$URL/_cluster/health?wait_for_status=yellow&timeout=1s"
ZIP=$KGRAG_CACHE/elasticsearch-$ES_VERSION.zip

# AS_USER: the prefix that runs a command as the node's user (ES_USER under
# root; Elasticsearch refuses root). as_user CMD...: run CMD so.
AS_USER=()
if [[ $(id -u) == 0 ]]; then
	ES_GROUP=$(id -gn "$ES_USER" 2>/dev/null) || kg_die "no user $ES_USER (set KGRAG_ES_USER)"
	AS_USER=(setpriv --reuid="$ES_USER" --regid="$ES_GROUP" --clear-groups)
fi
as_user() { "${AS_USER[@]}" "$@"; }

# java_major JAVA_HOME: print the major version of that Java.
java_major() {
	local v
	v=$("$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p' | head -n1)
	v=${v#1.}
	[[ $v =~ ^[0-9]+$ ]] && echo "$v"
}

find_java() {
	local c m
	if [[ -n ${ES_JAVA_HOME:-} ]]; then
		if ! m=$(java_major "$ES_JAVA_HOME"); then
			kg_log "ES_JAVA_HOME=$ES_JAVA_HOME has no working bin/java"
			return 1
		fi
		if ((m < 17 || m > 23)); then
			kg_log "ES_JAVA_HOME=$ES_JAVA_HOME is Java $m; Elasticsearch $ES_VERSION needs 17..23"
			return 1
		fi
		echo "$ES_JAVA_HOME"
		return 0
	fi
	for c in ${JAVA_HOME:+"$JAVA_HOME"} /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/java-21-openjdk-amd64 /usr/lib/jvm/*; do
		[[ -x $c/bin/java ]] || continue
		m=$(java_major "$c") || continue
		if ((m >= 17 && m <= 23)); then
			echo "$c"
			return 0
		fi
	done
	return 1
}

# es_home: print the unpacked distribution to run.
es_home() {
	if [[ -n ${ES_HOME:-} ]]; then
		echo "$ES_HOME"
	else
		echo "$KGRAG_CACHE/elasticsearch-$ES_VERSION"
	fi
}

check_zip() {
	[[ -s $1 ]] || return 1
	echo "$ES_SHA1  $1" | sha1sum -c --quiet - >/dev/null 2>&1 &&
		echo "$ES_SHA256  $1" | sha256sum -c --quiet - >/dev/null 2>&1
}

unpack() {
	local zip=$1 dest=$2 tmp
	tmp=$(mktemp -d "$(dirname "$dest")/.es-unpack.XXXXXX")
	if command -v unzip >/dev/null 2>&1; then
		unzip -q "$zip" -d "$tmp" || kg_die "unzip $zip failed"
	else
		python3 -m zipfile -e "$zip" "$tmp" || kg_die "unpacking $zip failed"
		chmod +x "$tmp/elasticsearch-$ES_VERSION"/bin/*
	fi
	chmod -R a+rX "$tmp"
	rm -rf "$dest"
	mv "$tmp/elasticsearch-$ES_VERSION" "$dest"
	rmdir "$tmp"
}

do_install() {
	local home
	home=$(es_home)
	[[ -x $home/bin/elasticsearch ]] && return 0
	[[ -n ${ES_HOME:-} ]] && kg_die "ES_HOME=$ES_HOME has no bin/elasticsearch"
	mkdir -p "$KGRAG_CACHE"
	if ! check_zip "$ZIP"; then
		local start
		start=$(date +%s)
		kg_log "downloading $ES_URL"
		curl -fsSL --retry 3 -o "$ZIP.part" "$ES_URL" || kg_die "download of $ES_URL failed"
		check_zip "$ZIP.part" || {
			rm -f "$ZIP.part"
			kg_die "checksum mismatch for $ES_URL"
		}
		mv "$ZIP.part" "$ZIP"
		kg_log "downloaded in $(($(date +%s) - start))s"
	fi
	unpack "$ZIP" "$home"
	kg_log "unpacked to $home"
}

# runnable_home: print a distribution the node's user can read; under root
# with a cache it cannot reach (e.g. in /root), unpack a copy next to DIR.
runnable_home() {
	local home
	home=$(es_home)
	if as_user test -r "$home/lib/elasticsearch-$ES_VERSION.jar" 2>/dev/null; then
		echo "$home"
		return 0
	fi
	[[ -n ${ES_HOME:-} ]] && kg_die "user $ES_USER cannot read ES_HOME=$ES_HOME"
	home=$(dirname "$DIR")/elasticsearch-$ES_VERSION-home
	if ! as_user test -r "$home/lib/elasticsearch-$ES_VERSION.jar" 2>/dev/null; then
		kg_log "user $ES_USER cannot read $(es_home); unpacking a copy to $home"
		unpack "$ZIP" "$home"
		as_user test -r "$home/lib/elasticsearch-$ES_VERSION.jar" ||
			kg_die "user $ES_USER cannot read $home either; set ES_HOME or KGRAG_RUN to a readable place"
	fi
	echo "$home"
}

do_start() {
	if kg_pid_alive "$PIDFILE" && kg_http_ok "$READY_URL"; then
		kg_log "already running at $URL"
		echo "$URL"
		return 0
	fi
	do_install
	local home java
	java=$(find_java) || kg_die "no Java 17..23 found; set ES_JAVA_HOME"
	if kg_pid_alive "$PIDFILE"; then
		kg_log "pid $(<"$PIDFILE") is not answering; stopping it"
		kg_stop "$PIDFILE"
	fi
	kg_port_busy "$PORT" && kg_die "port $PORT is in use by another process"
	mkdir -p "$DIR"
	DIR=$(cd "$DIR" && pwd)
	PIDFILE=$DIR/server.pid
	LOGFILE=$DIR/server.log
	home=$(runnable_home)
	kg_fresh "$DIR"
	# A private config dir: the node writes its keystore there, and the stock
	# jvm.options has paths relative to the distribution (gc logging dropped).
	rm -rf "$DIR/config"
	cp -r "$home/config" "$DIR/config"
	sed -i -e "s#^-XX:HeapDumpPath=.*#-XX:HeapDumpPath=$DIR/logs#" \
		-e "s#^-XX:ErrorFile=.*#-XX:ErrorFile=$DIR/logs/hs_err_pid%p.log#" \
		-e '/^-Xlog:gc/d' "$DIR/config/jvm.options"
	mkdir -p "$DIR/data" "$DIR/logs" "$DIR/tmp"
	: >"$LOGFILE"
	if [[ $(id -u) == 0 ]]; then
		chown -R "$ES_USER:$ES_GROUP" "$DIR/config" "$DIR/data" "$DIR/logs" "$DIR/tmp"
		as_user test -w "$DIR/data" || kg_die "user $ES_USER cannot write $DIR/data (a parent directory is closed?)"
	fi
	local t0 discovery
	t0=$(date +%s%N)
	discovery=(-Ecluster.name=kgrag -Enode.name=kgrag -Ediscovery.type=single-node)
	if [[ -n $NODE ]]; then
		discovery=(-Ecluster.name=kgrag-cluster -Enode.name="$NODE" -Etransport.port="$TRANSPORT"
			-Ediscovery.seed_hosts="$SEEDS" -Ecluster.initial_master_nodes="$MASTERS")
	fi
	rm -f "$DIR/tmp/es.pid"
	# exec chain setpriv -> env -> bin/elasticsearch -> the CLI launcher JVM,
	# so the pid is the launcher's; TERM on it stops the server JVM too.
	"${AS_USER[@]}" env -u JAVA_HOME HOME="$DIR/tmp" ES_JAVA_HOME="$java" ES_PATH_CONF="$DIR/config" \
		ES_TMPDIR="$DIR/tmp" ES_JAVA_OPTS="-Xms$HEAP -Xmx$HEAP ${ES_JAVA_OPTS:-}" \
		"$home/bin/elasticsearch" -p "$DIR/tmp/es.pid" \
		"${discovery[@]}" \
		-Enetwork.host=127.0.0.1 -Ehttp.port="$PORT" \
		-Expack.security.enabled=false \
		-Ecluster.routing.allocation.disk.threshold_enabled=false \
		-Epath.data="$DIR/data" -Epath.logs="$DIR/logs" \
		</dev/null >>"$LOGFILE" 2>&1 &
	echo $! >"$PIDFILE"
	kg_log "started pid $(<"$PIDFILE") on 127.0.0.1:$PORT (Java $(java_major "$java"), heap $HEAP)"
	if ((!WAIT)); then
		echo "$URL"
		return 0
	fi
	if ! kg_wait_ready "$READY_URL" "$PIDFILE" "$LOGFILE"; then
		kg_stop "$PIDFILE" || true
		kg_die "elasticsearch did not start"
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
*) kg_die "usage: $0 install|start|stop|status|url [--port P] [--dir DIR] [--fresh]" ;;
esac
