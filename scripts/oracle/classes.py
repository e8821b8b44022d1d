#!/usr/bin/env python3
"""classes.py FILE: parse an RDF file (Turtle or N-Triples, by extension)
with pyoxigraph and print, as JSON, how many distinct subjects it types with
each gr: class, under the keys scripts/oracle/counts.py uses: "Entity"
counts the entities without gr:unresolved true, "UnresolvedEntity" those
with it. The outside check of what kgrag load wrote. Exit status 1 on a
parse error.
"""
import json
import sys

import pyoxigraph

GR = "http://ormynet.com/ns/msft-graphrag#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def main():
    path = sys.argv[1]
    fmt = pyoxigraph.RdfFormat.TURTLE if path.endswith(".ttl") else pyoxigraph.RdfFormat.N_TRIPLES
    types, unresolved = {}, set()
    with open(path, "rb") as f:
        for t in pyoxigraph.parse(f, format=fmt):
            p = t.predicate.value
            if p == RDF_TYPE and t.object.value.startswith(GR):
                types.setdefault(t.object.value[len(GR):], set()).add(t.subject.value)
            elif p == GR + "unresolved" and t.object.value == "true":
                unresolved.add(t.subject.value)
    out = {c: len(s) for c, s in types.items()}
    ents = types.get("Entity", set())
    out["Entity"] = len(ents - unresolved)
    out["UnresolvedEntity"] = len(ents & unresolved)
    json.dump(out, sys.stdout, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
