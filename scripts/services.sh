#!/usr/bin/env bash
# services.sh: start or stop the real stores that kgrag's integration tests use.
#
# Usage: scripts/services.sh up|down|status [oxigraph] [fuseki] [virtuoso] [elasticsearch]
#   up      start the named services (default: all four), each on its own
#           port under $KGRAG_RUN, and write $KGRAG_SERVICES_ENV (default
#           .cache/services.env in the repo) with the test variables:
#             KGRAG_TEST_OXIGRAPH=http://127.0.0.1:PORT
#             KGRAG_TEST_FUSEKI=http://127.0.0.1:PORT/ds
#             KGRAG_TEST_VIRTUOSO=http://127.0.0.1:PORT
#             KGRAG_TEST_ELASTICSEARCH=http://127.0.0.1:PORT
#           Source it (set -a; . .cache/services.env; set +a) before go test.
#   down    stop them (default: all) and remove the env file when all are down
#   status  print what runs
#
# Ports come from KGRAG_OXIGRAPH_PORT (7878), KGRAG_FUSEKI_PORT (3030) and
# KGRAG_VIRTUOSO_PORT (8890), KGRAG_ES_PORT (9200). A service that fails to start fails `up`.
# KGRAG_FRESH=1 starts stopped services on empty data dirs.
set -euo pipefail
KG_NAME=services
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"
ENV_FILE=${KGRAG_SERVICES_ENV:-$KGRAG_REPO/.cache/services.env}

cmd=${1:-status}
shift || true
names=("$@")
((${#names[@]})) || names=(oxigraph fuseki virtuoso elasticsearch)
for n in "${names[@]}"; do
	case $n in
	oxigraph | fuseki | virtuoso | elasticsearch) ;;
	*) kg_die "unknown service $n (want oxigraph, fuseki, virtuoso or elasticsearch)" ;;
	esac
done

var_of() {
	case $1 in
	oxigraph) echo KGRAG_TEST_OXIGRAPH ;;
	fuseki) echo KGRAG_TEST_FUSEKI ;;
	virtuoso) echo KGRAG_TEST_VIRTUOSO ;;
	elasticsearch) echo KGRAG_TEST_ELASTICSEARCH ;;
	esac
}

set_env() { # NAME VALUE: replace the line for NAME in the env file
	mkdir -p "$(dirname "$ENV_FILE")"
	touch "$ENV_FILE"
	grep -v "^$1=" "$ENV_FILE" >"$ENV_FILE.tmp" || true
	[[ -n $2 ]] && echo "$1=$2" >>"$ENV_FILE.tmp"
	mv "$ENV_FILE.tmp" "$ENV_FILE"
}

case $cmd in
up)
	failed=()
	for n in "${names[@]}"; do
		if url=$("$here/$n.sh" start); then
			set_env "$(var_of "$n")" "$url"
		else
			failed+=("$n")
			set_env "$(var_of "$n")" ""
		fi
	done
	kg_log "wrote $ENV_FILE"
	cat "$ENV_FILE"
	((${#failed[@]} == 0)) || kg_die "could not start: ${failed[*]}"
	;;
down)
	for n in "${names[@]}"; do
		"$here/$n.sh" stop || true
		[[ -f $ENV_FILE ]] && set_env "$(var_of "$n")" ""
	done
	if [[ -f $ENV_FILE && ! -s $ENV_FILE ]]; then
		rm -f "$ENV_FILE"
	fi
	;;
status)
	rc=0
	for n in "${names[@]}"; do
		if url=$("$here/$n.sh" status 2>/dev/null); then
			echo "$n $url"
		else
			echo "$n down"
			rc=1
		fi
	done
	exit $rc
	;;
*) kg_die "usage: $0 up|down|status [oxigraph] [fuseki] [virtuoso] [elasticsearch]" ;;
esac
