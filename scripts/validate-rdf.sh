#!/usr/bin/env bash
# validate-rdf.sh checks RDF files with two independent parsers: Apache Jena
# riot (through scripts/jena.sh) and Oxigraph (the pyoxigraph Python
# package). A file passes only if both parse it with no error AND no
# warning: riot's --validate (which is --sink --check --strict) already
# exits non-zero on a warning, and any WARN or ERROR line it prints is
# treated as a failure too, in case a version does not.
#
# Usage: scripts/validate-rdf.sh FILE...
#   The syntax comes from the extension: .ttl (Turtle), .nt (N-Triples),
#   .nq (N-Quads), .trig (TriG).
#
# pyoxigraph (pinned 0.5.13) is pip-installed for python3 when missing;
# set KGRAG_NO_PIP=1 to forbid that. Jena is downloaded once by jena.sh.
#
# EXIT STATUS: 0 all files valid; 1 some file failed (the parser's message
# is printed to stderr); 2 usage error; 3 a parser could not be set up.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"
PYOXIGRAPH_VERSION=$OXIGRAPH_VERSION

if [[ $# -eq 0 ]]; then
	echo "usage: validate-rdf.sh FILE..." >&2
	exit 2
fi

python="${PYTHON:-python3}"
if ! "$python" -c 'import pyoxigraph' 2>/dev/null; then
	if [[ "${KGRAG_NO_PIP:-}" == 1 ]]; then
		echo "validate-rdf.sh: pyoxigraph is not installed for $python" >&2
		exit 3
	fi
	echo "validate-rdf.sh: installing pyoxigraph==$PYOXIGRAPH_VERSION" >&2
	"$python" -m pip install --quiet "pyoxigraph==$PYOXIGRAPH_VERSION" >&2 ||
		{ echo "validate-rdf.sh: pip install pyoxigraph==$PYOXIGRAPH_VERSION failed" >&2; exit 3; }
fi
"$here/jena.sh" --install >/dev/null || exit 3

status=0
for f in "$@"; do
	case "$f" in
	*.ttl) jsyntax=Turtle oformat=TURTLE ;;
	*.nt) jsyntax=N-Triples oformat=N_TRIPLES ;;
	*.nq) jsyntax=N-Quads oformat=N_QUADS ;;
	*.trig) jsyntax=TriG oformat=TRIG ;;
	*)
		echo "validate-rdf.sh: $f: unknown extension (want .ttl, .nt, .nq or .trig)" >&2
		exit 2
		;;
	esac
	if [[ ! -r "$f" ]]; then
		echo "validate-rdf.sh: $f: cannot read" >&2
		status=1
		continue
	fi

	out="$("$here/jena.sh" riot --validate --syntax="$jsyntax" "$f" 2>&1)"
	rc=$?
	if [[ $rc -ne 0 ]] || grep -qE 'WARN|ERROR' <<<"$out"; then
		echo "validate-rdf.sh: $f: riot (exit $rc):" >&2
		printf '%s\n' "$out" | head -n 50 >&2
		status=1
	fi

	if ! out="$("$python" - "$f" "$oformat" 2>&1 <<'PY'
import sys, pyoxigraph
path, fmt = sys.argv[1], getattr(pyoxigraph.RdfFormat, sys.argv[2])
n = 0
try:
    for _ in pyoxigraph.parse(path=path, format=fmt):
        n += 1
except (SyntaxError, ValueError, OSError) as e:
    print(f"{type(e).__name__}: {e}")
    sys.exit(1)
PY
	)"; then
		echo "validate-rdf.sh: $f: oxigraph:" >&2
		printf '%s\n' "$out" | head -n 50 >&2
		status=1
	fi
done
exit $status
