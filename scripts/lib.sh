# shellcheck shell=bash
# lib.sh: helpers shared by the kgrag service scripts. Source it; do not run it.
#
# Every service script keeps one instance directory holding data/, server.pid
# and server.log, binds 127.0.0.1 only, and polls until the server answers.

# shellcheck source=versions.env
. "$(dirname "${BASH_SOURCE[0]}")/versions.env"

KGRAG_CACHE=${KGRAG_CACHE:-$HOME/.cache/kgrag}
KGRAG_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KGRAG_RUN=${KGRAG_RUN:-$KGRAG_REPO/.cache/services}
KGRAG_START_TIMEOUT=${KGRAG_START_TIMEOUT:-90}

kg_log() { printf '%s: %s\n' "${KG_NAME:-kgrag}" "$*" >&2; }

kg_die() {
	kg_log "error: $*"
	exit 1
}

# kg_pid_alive PIDFILE: true when PIDFILE names a live process.
kg_pid_alive() {
	local pid
	[[ -s $1 ]] || return 1
	pid=$(<"$1")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	kill -0 "$pid" 2>/dev/null
}

# kg_port_busy PORT: true when something listens on 127.0.0.1:PORT.
kg_port_busy() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# kg_http_ok URL: true when URL answers with a 2xx status.
kg_http_ok() {
	curl -fsS -o /dev/null --max-time 5 "$1" 2>/dev/null
}

# kg_wait_ready URL PIDFILE LOGFILE: poll URL until it answers, the process
# dies or KGRAG_START_TIMEOUT seconds pass. On failure print the log tail.
kg_wait_ready() {
	local url=$1 pidfile=$2 logfile=$3 start now
	start=$(date +%s)
	while :; do
		if kg_http_ok "$url"; then
			now=$(date +%s)
			kg_log "ready at $url after $((now - start))s"
			return 0
		fi
		if ! kg_pid_alive "$pidfile"; then
			kg_log "error: server exited before it answered $url; last lines of $logfile:"
			tail -n 30 "$logfile" >&2 || true
			return 1
		fi
		now=$(date +%s)
		if ((now - start >= KGRAG_START_TIMEOUT)); then
			kg_log "error: no answer from $url within ${KGRAG_START_TIMEOUT}s; last lines of $logfile:"
			tail -n 30 "$logfile" >&2 || true
			return 1
		fi
		sleep 0.5
	done
}

# kg_spawn PIDFILE LOGFILE CMD...: start CMD in the background with its
# output in LOGFILE (emptied first) and its pid in PIDFILE, under a shell
# that waits for it and then appends to LOGFILE how it ended, its exit
# status or the signal that killed it: a crash is then plain in the log's
# tail. Returns once PIDFILE is written.
kg_spawn() {
	local pidfile=$1 logfile=$2 i
	shift 2
	: >"$logfile"
	rm -f "$pidfile"
	(
		"$@" >>"$logfile" 2>&1 &
		pid=$!
		echo "$pid" >"$pidfile"
		rc=0
		wait "$pid" || rc=$?
		if ((rc > 128)); then
			echo "kgrag ${KG_NAME:-}: $(basename "$1") (pid $pid) was killed by signal $((rc - 128)) (SIG$(kill -l $((rc - 128)) 2>/dev/null || echo '?')) at $(date -u +%FT%TZ)" >>"$logfile"
		else
			echo "kgrag ${KG_NAME:-}: $(basename "$1") (pid $pid) exited with status $rc at $(date -u +%FT%TZ)" >>"$logfile"
		fi
	) </dev/null >/dev/null 2>&1 &
	for ((i = 0; i < 200; i++)); do
		[[ -s $pidfile ]] && return 0
		sleep 0.05
	done
	kg_log "error: $1 did not start"
	return 1
}

# kg_stop PIDFILE: stop the process named in PIDFILE (TERM, then KILL after
# 20s) and remove the file. Idempotent.
kg_stop() {
	local pidfile=$1 pid i
	if ! kg_pid_alive "$pidfile"; then
		rm -f "$pidfile"
		kg_log "not running"
		return 0
	fi
	pid=$(<"$pidfile")
	kill "$pid" 2>/dev/null || true
	for ((i = 0; i < 40; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	if kill -0 "$pid" 2>/dev/null; then
		kg_log "pid $pid ignored TERM; sending KILL"
		kill -9 "$pid" 2>/dev/null || true
		sleep 0.5
	fi
	rm -f "$pidfile"
	kg_log "stopped pid $pid"
}

# kg_clear_stale PIDFILE PORT: before a start, stop the server of PIDFILE
# that runs but does not answer, and die when another process holds PORT.
kg_clear_stale() {
	if kg_pid_alive "$1"; then
		kg_log "pid $(<"$1") is not answering; stopping it"
		kg_stop "$1"
	fi
	if kg_port_busy "$2"; then
		kg_die "port $2 is in use by another process"
	fi
}

# kg_parse_args: parse --port P, --dir D, --mem and --fresh into PORT, DIR,
# MEM and FRESH (FRESH defaults to $KGRAG_FRESH: wipe DIR/data before a start).
# Remaining arguments land in KG_ARGS.
# shellcheck disable=SC2034 # PORT, DIR, MEM and FRESH are the caller's
kg_parse_args() {
	KG_ARGS=()
	FRESH=${KGRAG_FRESH:-0}
	while (($#)); do
		case $1 in
		--port) PORT=$2; shift 2 ;;
		--port=*) PORT=${1#*=}; shift ;;
		--dir) DIR=$2; shift 2 ;;
		--dir=*) DIR=${1#*=}; shift ;;
		--mem) MEM=1; shift ;;
		--fresh) FRESH=1; shift ;;
		*) KG_ARGS+=("$1"); shift ;;
		esac
	done
	[[ $PORT =~ ^[0-9]+$ ]] || kg_die "bad port: $PORT"
}

# kg_ms_since NANOS: milliseconds elapsed since NANOS (from date +%s%N).
# kg_status PIDFILE READY_URL URL: print URL and succeed when the server
# of PIDFILE runs and answers READY_URL; else say so and exit 1.
kg_status() {
	if kg_pid_alive "$1" && kg_http_ok "$2"; then
		echo "$3"
	else
		kg_log "not running"
		exit 1
	fi
}

kg_ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# kg_fresh DIR: when FRESH=1, remove DIR/data (the server must be stopped).
kg_fresh() {
	if [[ ${FRESH:-0} == 1 && -d $1/data ]]; then
		kg_log "removing old data in $1/data (--fresh)"
		rm -rf "$1/data"
	fi
}

# kg_venv_enter ARG: the start of a script that keeps a Python venv at
# $VENV with its python at $PY, given a function `ready` that says the
# venv is installed and works. With ARG --check it prints $PY and exits 0
# if ready, else exits 1. Otherwise it takes the lock beside the venv
# (callers running at once install it once; the lock is held until the
# script exits) and, if the venv is ready, prints $PY and exits 0; if not,
# it returns, for the script to install it.
kg_venv_enter() {
	if [[ ${1:-} == --check ]]; then
		ready || exit 1
		echo "$PY"
		exit 0
	fi
	mkdir -p "$(dirname "$VENV")"
	exec 9>"$VENV.lock"
	flock 9
	if ready; then
		echo "$PY"
		exit 0
	fi
}

# kg_venv_install BASE: after kg_venv_enter, make the venv at $VENV anew
# with the interpreter BASE, pip install $PINS into it, record them in
# $STAMP, check `ready` and print $PY.
kg_venv_install() {
	local base=$1
	command -v "$base" >/dev/null || kg_die "no $base found"
	kg_log "installing ${PINS[*]} into $VENV with $("$base" --version 2>&1) (once)"
	rm -rf "$VENV"
	"$base" -m venv "$VENV" || kg_die "python venv failed in $VENV"
	"$PY" -m pip install --quiet --disable-pip-version-check "${PINS[@]}" >&2 ||
		kg_die "pip install ${PINS[*]} failed"
	echo "${PINS[*]}" >"$STAMP"
	ready || kg_die "${PINS[*]} installed, but they do not import"
	kg_log "ready"
	echo "$PY"
}
