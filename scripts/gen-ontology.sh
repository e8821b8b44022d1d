#!/usr/bin/env bash
# gen-ontology.sh IN.ttl OUT.nt: the ontology as N-Triples, parsed by
# Oxigraph (not by kgrag), in document order with blank nodes numbered in
# order of appearance, so the output is deterministic.
set -euo pipefail
in=$1 out=$2
python3 -c 'import pyoxigraph' 2>/dev/null || pip install -q pyoxigraph==0.5.13
python3 - "$in" "$out" <<'PY'
import sys
import pyoxigraph as ox

src, dst = sys.argv[1], sys.argv[2]
labels = {}

def term(t):
    if isinstance(t, ox.BlankNode):
        if t.value not in labels:
            labels[t.value] = "b%d" % len(labels)
        return "_:" + labels[t.value]
    return str(t)

with open(src, "rb") as f:
    triples = list(ox.parse(f, format=ox.RdfFormat.TURTLE))
with open(dst + ".tmp", "w", encoding="utf-8") as out:
    out.write("# Generated from gr.ttl by scripts/gen-ontology.sh; do not edit.\n")
    for t in triples:
        out.write("%s %s %s .\n" % (term(t.subject), term(t.predicate), term(t.object)))
import os
os.replace(dst + ".tmp", dst)
PY
