#!/usr/bin/env python3
"""values.py FILE PROPERTY: parse an RDF file (Turtle or N-Triples, by
extension) with pyoxigraph and print, as JSON, {gr:id: value} for every
subject with a gr:id, its value of gr:PROPERTY as the literal's text, or
null when it has none. Exit status 1 on a parse error or a subject with two values.
"""
import json
import sys

import pyoxigraph

GR = "http://ormynet.com/ns/msft-graphrag#"


def main():
    path, prop = sys.argv[1], GR + sys.argv[2]
    fmt = pyoxigraph.RdfFormat.TURTLE if path.endswith(".ttl") else pyoxigraph.RdfFormat.N_TRIPLES
    ids, vals = {}, {}
    with open(path, "rb") as f:
        for t in pyoxigraph.parse(f, format=fmt):
            p = t.predicate.value
            if p == GR + "id":
                ids[t.subject.value] = t.object.value
            elif p == prop:
                if t.subject.value in vals:
                    sys.exit(f"values.py: {t.subject.value} has two {prop}")
                vals[t.subject.value] = t.object.value
    out = {i: vals.get(s) for s, i in ids.items()}
    json.dump(out, sys.stdout, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
