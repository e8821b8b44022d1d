#!/usr/bin/env bash
# jena.sh runs a command-line tool from Apache Jena (riot by default).
#
# Usage: scripts/jena.sh [TOOL] ARGS...     e.g. scripts/jena.sh riot --validate x.ttl
#        scripts/jena.sh --install          only download and unpack, print JENA_HOME
#
# The first run downloads the apache-jena binary distribution from Maven
# Central with curl, checks it against the .sha512 (or, where Maven Central has none,
# the .sha1) published next to it, and
# unpacks it under ${KGRAG_CACHE:-$HOME/.cache/kgrag}/apache-jena-VERSION.
# Later runs reuse that copy. Needs curl, unzip (or python3) and Java 17+.
#
# Environment: JENA_VERSION (default FUSEKI_VERSION of versions.env), KGRAG_CACHE, JAVA (java binary).
#
# EXIT STATUS: the tool's own exit status; 2 on usage errors; 3 when Jena
# cannot be downloaded or verified.
set -euo pipefail

# shellcheck source=versions.env
. "$(dirname "${BASH_SOURCE[0]}")/versions.env"
JENA_VERSION="${JENA_VERSION:-$FUSEKI_VERSION}"
cache="${KGRAG_CACHE:-$HOME/.cache/kgrag}"
home="$cache/apache-jena-$JENA_VERSION"
base="https://repo1.maven.org/maven2/org/apache/jena/apache-jena/$JENA_VERSION"
zip="apache-jena-$JENA_VERSION.zip"

install_jena() {
	[[ -x "$home/bin/riot" ]] && return 0
	command -v curl >/dev/null || { echo "jena.sh: curl not found" >&2; return 3; }
	mkdir -p "$cache"
	local tmp
	tmp="$(mktemp -d "$cache/.jena.XXXXXX")"
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" RETURN
	echo "jena.sh: downloading $base/$zip" >&2
	curl -fsSL --retry 3 -o "$tmp/$zip" "$base/$zip" ||
		{ echo "jena.sh: download of $zip failed" >&2; return 3; }
	# Maven Central always publishes .sha1 (and .md5); .sha512 only for some
	# artifacts. Prefer the stronger one when it exists.
	local algo="" want="" got
	for a in sha512 sha1; do
		if curl -fsSL --retry 3 -o "$tmp/$zip.$a" "$base/$zip.$a" 2>/dev/null; then
			algo="$a"
			want="$(awk '{print $1; exit}' "$tmp/$zip.$a" | tr -d '\r' | tr 'A-F' 'a-f')"
			break
		fi
	done
	if [[ -z "$algo" || -z "$want" ]]; then
		echo "jena.sh: no .sha512 or .sha1 checksum for $zip at $base" >&2
		return 3
	fi
	got="$("${algo}sum" "$tmp/$zip" | cut -d' ' -f1)"
	if [[ "$want" != "$got" ]]; then
		echo "jena.sh: $algo mismatch for $zip: want $want, got $got" >&2
		return 3
	fi
	if command -v unzip >/dev/null; then
		unzip -q "$tmp/$zip" -d "$tmp/x"
	else
		python3 -m zipfile -e "$tmp/$zip" "$tmp/x"
	fi
	chmod +x "$tmp/x/apache-jena-$JENA_VERSION/bin/"*
	# Rename into place last so a half-unpacked tree is never used.
	mv "$tmp/x/apache-jena-$JENA_VERSION" "$home" 2>/dev/null || [[ -x "$home/bin/riot" ]]
}

if [[ "${1:-}" == "--install" ]]; then
	install_jena
	echo "$home"
	exit 0
fi
install_jena || exit 3

tool="riot"
if [[ $# -gt 0 && -x "$home/bin/$1" && "$1" != -* ]]; then
	tool="$1"
	shift
fi
export JENA_HOME="$home"
[[ -n "${JAVA:-}" ]] && export JAVA
exec "$home/bin/$tool" "$@"
