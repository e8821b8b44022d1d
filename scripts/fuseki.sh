#!/usr/bin/env bash
# fuseki.sh: an Apache Jena Fuseki 5 server for kgrag tests and benchmarks.
#
# Usage: scripts/fuseki.sh install|start|stop|status|url|tdbloader [--port P] [--dir DIR] [--mem] [--fresh]
#   install    download org.apache.jena:jena-fuseki-server:$FUSEKI_VERSION from
#              Maven Central into $KGRAG_CACHE/maven and check its .sha1
#   start      run the server on 127.0.0.1:P with dataset /ds (TDB2 in
#              DIR/data, or in memory with --mem), updates enabled, and wait
#              until /ds/query answers
#   stop       stop it (TERM, then KILL)
#   status     exit 0 when running and answering; print the dataset URL
#   url        print http://127.0.0.1:P/ds
#   tdbloader  run the TDB2 bulk loader (tdb2.tdbloader, same jar) on DIR/data
#              with the remaining arguments (e.g. --graph IRI file.nt); the
#              server must be stopped first
#
# --fresh (or KGRAG_FRESH=1) removes DIR/data before a start, for throwaway
# test data; a running server is left as it is.
# Environment: KGRAG_FUSEKI_PORT (default 3030), KGRAG_FUSEKI_DIR (default
# $KGRAG_RUN/fuseki), KGRAG_FUSEKI_MEM=1 for an in-memory dataset, JAVA (default
# java, 17 or newer), KGRAG_FUSEKI_HEAP (default 1g), KGRAG_START_TIMEOUT.
set -euo pipefail
KG_NAME=fuseki
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

PORT=${KGRAG_FUSEKI_PORT:-3030}
DIR=${KGRAG_FUSEKI_DIR:-$KGRAG_RUN/fuseki}
MEM=${KGRAG_FUSEKI_MEM:-0}
JAVA=${JAVA:-java}
HEAP=${KGRAG_FUSEKI_HEAP:-1g}
cmd=${1:-status}
shift || true
kg_parse_args "$@"
PIDFILE=$DIR/server.pid
LOGFILE=$DIR/server.log
URL=http://127.0.0.1:$PORT/ds
READY_URL="$URL/query?query=ASK%7B%7D"
JAR=$KGRAG_CACHE/maven/jena-fuseki-server-$FUSEKI_VERSION.jar
JAR_URL=https://repo1.maven.org/maven2/org/apache/jena/jena-fuseki-server/$FUSEKI_VERSION/jena-fuseki-server-$FUSEKI_VERSION.jar

check_java() {
	command -v "$JAVA" >/dev/null 2>&1 || kg_die "java not found: install a JDK 17 (apt-get install -y openjdk-17-jre-headless)"
	local v
	v=$("$JAVA" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1)
	[[ -n $v && $v -ge 17 ]] || kg_die "Fuseki $FUSEKI_VERSION needs Java 17 or newer; $JAVA is version ${v:-unknown}"
}

do_install() {
	[[ -s $JAR ]] && return 0
	mkdir -p "$(dirname "$JAR")"
	local start tmp want got
	start=$(date +%s)
	tmp=$(mktemp "$JAR.XXXXXX")
	kg_log "downloading $JAR_URL"
	curl -fsSL --retry 3 -o "$tmp" "$JAR_URL" || { rm -f "$tmp"; kg_die "download of $JAR_URL failed"; }
	want=$(curl -fsSL --retry 3 "$JAR_URL.sha1" | cut -c1-40) || { rm -f "$tmp"; kg_die "download of $JAR_URL.sha1 failed"; }
	got=$(sha1sum "$tmp" | cut -c1-40)
	if [[ $want != "$got" ]]; then
		rm -f "$tmp"
		kg_die "checksum mismatch for $JAR_URL: want $want, got $got"
	fi
	chmod 644 "$tmp"
	mv "$tmp" "$JAR"
	kg_log "installed $JAR in $(($(date +%s) - start))s"
}

do_start() {
	if kg_pid_alive "$PIDFILE" && kg_http_ok "$READY_URL"; then
		kg_log "already running at $URL"
		echo "$URL"
		return 0
	fi
	check_java
	do_install
	if kg_pid_alive "$PIDFILE"; then
		kg_log "pid $(<"$PIDFILE") is not answering; stopping it"
		kg_stop "$PIDFILE"
	fi
	kg_port_busy "$PORT" && kg_die "port $PORT is in use by another process"
	mkdir -p "$DIR"
	kg_fresh "$DIR"
	local store=(--loc "$DIR/data")
	if [[ $MEM == 1 ]]; then
		store=(--mem)
	else
		mkdir -p "$DIR/data"
	fi
	local t0
	t0=$(date +%s%N)
	"$JAVA" -Xmx"$HEAP" -cp "$JAR" org.apache.jena.fuseki.main.cmds.FusekiMainCmd \
		--localhost --port "$PORT" "${store[@]}" --update --ping /ds >"$LOGFILE" 2>&1 &
	echo $! >"$PIDFILE"
	kg_log "started pid $(<"$PIDFILE") on 127.0.0.1:$PORT (${store[*]})"
	if ! kg_wait_ready "$READY_URL" "$PIDFILE" "$LOGFILE"; then
		kg_stop "$PIDFILE" || true
		kg_die "fuseki did not start"
	fi
	kg_log "start-up took $(kg_ms_since "$t0") ms"
	echo "$URL"
}

do_tdbloader() {
	check_java
	do_install
	kg_pid_alive "$PIDFILE" && kg_die "stop the server first: TDB2 allows one process per database"
	mkdir -p "$DIR/data"
	"$JAVA" -Xmx"$HEAP" -cp "$JAR" tdb2.tdbloader --loc "$DIR/data" "${KG_ARGS[@]}"
}

case $cmd in
install) check_java; do_install ;;
start) do_start ;;
stop) kg_stop "$PIDFILE" ;;
status) kg_status "$PIDFILE" "$READY_URL" "$URL" ;;
url) echo "$URL" ;;
tdbloader) do_tdbloader ;;
*) kg_die "usage: $0 install|start|stop|status|url|tdbloader [--port P] [--dir DIR] [--mem] [--fresh]" ;;
esac
