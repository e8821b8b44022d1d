#!/usr/bin/env python3
"""rdf2json.py FILE: parse an RDF file with pyoxigraph and print its triples
as a JSON array, in document order, one object per triple:

  {"s": TERM, "p": TERM, "o": TERM}
  TERM = {"kind": "iri"|"blank"|"literal", "value": str,
          "datatype": str (literals), "lang": str (literals, may be "")}

The syntax comes from the extension (.ttl, .nt, .nq, .trig). Oxigraph
reports language tags in lower case. Exit status 1 on a parse error.
Used by the loader package's TestExternalParsers.
"""
import json
import sys

import pyoxigraph

FORMATS = {
    "ttl": pyoxigraph.RdfFormat.TURTLE,
    "nt": pyoxigraph.RdfFormat.N_TRIPLES,
    "nq": pyoxigraph.RdfFormat.N_QUADS,
    "trig": pyoxigraph.RdfFormat.TRIG,
}


def term(t):
    if isinstance(t, pyoxigraph.NamedNode):
        return {"kind": "iri", "value": t.value}
    if isinstance(t, pyoxigraph.BlankNode):
        return {"kind": "blank", "value": t.value}
    if isinstance(t, pyoxigraph.Literal):
        return {"kind": "literal", "value": t.value,
                "datatype": t.datatype.value, "lang": t.language or ""}
    raise TypeError(f"unexpected term {t!r}")


def main():
    if len(sys.argv) != 2:
        print("usage: rdf2json.py FILE", file=sys.stderr)
        return 2
    path = sys.argv[1]
    fmt = FORMATS.get(path.rsplit(".", 1)[-1])
    if fmt is None:
        print(f"rdf2json.py: {path}: unknown extension", file=sys.stderr)
        return 2
    out = []
    try:
        for q in pyoxigraph.parse(path=path, format=fmt):
            out.append({"s": term(q.subject), "p": term(q.predicate), "o": term(q.object)})
    except (SyntaxError, ValueError, OSError) as e:
        print(f"rdf2json.py: {path}: {e}", file=sys.stderr)
        return 1
    json.dump(out, sys.stdout, ensure_ascii=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
