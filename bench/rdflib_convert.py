#!/usr/bin/env python3
"""The peer kgrag's converter is measured against: GraphRAG 3.x parquet to
Turtle the way a Python loader does it, with pyarrow reading the tables and
rdflib building an in-memory Graph that is then serialised.

It writes the same gr: classes and properties as kgrag (documents, chunks,
entities with communities, relationships with the direct edge, communities
with reports and findings, covariates), so the two do comparable work.

usage: rdflib_convert.py INPUT_DIR OUTPUT.ttl [BASE_IRI]
Prints one line of JSON: triples, seconds, bytes written.
"""
import json
import sys
import time
from urllib.parse import quote

import pyarrow.parquet as pq
from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.namespace import RDF, RDFS, XSD

GR = Namespace("http://ormynet.com/ns/msft-graphrag#")


def rows(path, columns=None):
    table = pq.read_table(path, columns=columns)
    return table.to_pylist()


def main():
    src, out = sys.argv[1], sys.argv[2]
    base = sys.argv[3] if len(sys.argv) > 3 else "http://example.org/graphrag/"
    start = time.time()

    def iri(kind, ident):
        return URIRef(base + kind + "/" + quote(str(ident), safe=""))

    g = Graph()
    g.bind("gr", GR)

    for d in rows(f"{src}/documents.parquet"):
        s = iri("document", d["id"])
        g.add((s, RDF.type, GR.Document))
        g.add((s, GR.id, Literal(d["id"])))
        g.add((s, GR.human_readable_id, Literal(d["human_readable_id"], datatype=XSD.integer)))
        g.add((s, GR.title, Literal(d["title"])))
        g.add((s, RDFS.label, Literal(d["title"])))
        g.add((s, GR.text, Literal(d["text"])))

    for t in rows(f"{src}/text_units.parquet"):
        s = iri("chunk", t["id"])
        g.add((s, RDF.type, GR.Chunk))
        g.add((s, GR.id, Literal(t["id"])))
        g.add((s, GR.human_readable_id, Literal(t["human_readable_id"], datatype=XSD.integer)))
        g.add((s, GR.text, Literal(t["text"])))
        g.add((s, GR.n_tokens, Literal(t["n_tokens"], datatype=XSD.integer)))
        g.add((s, GR.part_of, iri("document", t["document_id"])))
        for e in t["entity_ids"] or []:
            g.add((s, GR.has_entity, iri("entity", e)))
        for r in t["relationship_ids"] or []:
            g.add((s, GR.has_relationship, iri("relationship", r)))

    communities = rows(f"{src}/communities.parquet")
    member = {}
    for c in communities:
        for e in c["entity_ids"] or []:
            member.setdefault(e, []).append(c["community"])

    by_title = {}
    for e in rows(f"{src}/entities.parquet"):
        s = iri("entity", e["id"])
        by_title[e["title"]] = s
        g.add((s, RDF.type, GR.Entity))
        g.add((s, GR.id, Literal(e["id"])))
        g.add((s, GR.human_readable_id, Literal(e["human_readable_id"], datatype=XSD.integer)))
        for p in (GR.title, GR.name, RDFS.label):
            g.add((s, p, Literal(e["title"])))
        g.add((s, GR.type, Literal(e["type"])))
        g.add((s, GR.description, Literal(e["description"])))
        g.add((s, GR.degree, Literal(e["degree"], datatype=XSD.integer)))
        g.add((s, GR.frequency, Literal(e["frequency"], datatype=XSD.integer)))
        for c in member.get(e["id"], []):
            g.add((s, GR.in_community, iri("community", c)))

    for r in rows(f"{src}/relationships.parquet"):
        s = iri("relationship", r["id"])
        src_e = by_title.get(r["source"]) or iri("entity", "title:" + r["source"])
        dst_e = by_title.get(r["target"]) or iri("entity", "title:" + r["target"])
        g.add((src_e, s, dst_e))
        g.add((s, RDF.type, GR.related_to))
        g.add((s, GR.id, Literal(r["id"])))
        g.add((s, GR.human_readable_id, Literal(r["human_readable_id"], datatype=XSD.integer)))
        g.add((s, RDFS.label, Literal(r["source"] + " -> " + r["target"])))
        g.add((s, GR.source, src_e))
        g.add((s, GR.target, dst_e))
        g.add((s, GR.description, Literal(r["description"])))
        g.add((s, GR.weight, Literal(r["weight"], datatype=XSD.double)))
        g.add((s, GR.rank, Literal(r["combined_degree"], datatype=XSD.integer)))

    reports = {r["community"]: r for r in rows(f"{src}/community_reports.parquet")}
    for c in communities:
        s = iri("community", c["community"])
        g.add((s, RDF.type, GR.Community))
        g.add((s, GR.id, Literal(c["id"])))
        g.add((s, GR.community, Literal(c["community"], datatype=XSD.integer)))
        g.add((s, GR.level, Literal(c["level"], datatype=XSD.integer)))
        if c["parent"] is not None and c["parent"] >= 0:
            g.add((s, GR.parent, iri("community", c["parent"])))
        g.add((s, GR.weight, Literal(0.5, datatype=XSD.double)))
        rep = reports.get(c["community"])
        if rep:
            g.add((s, GR.title, Literal(rep["title"])))
            g.add((s, RDFS.label, Literal(rep["title"])))
            g.add((s, GR.summary, Literal(rep["summary"])))
            g.add((s, GR.full_content, Literal(rep["full_content"])))
            g.add((s, GR.rank, Literal(rep["rank"], datatype=XSD.double)))
            g.add((s, GR.rank_explanation, Literal(rep["rating_explanation"])))
            for i, f in enumerate(rep["findings"] or []):
                fi = URIRef(str(s) + "/finding/" + str(i))
                g.add((s, GR.has_finding, fi))
                g.add((fi, RDF.type, GR.Finding))
                g.add((fi, GR["index"], Literal(i, datatype=XSD.integer)))
                g.add((fi, GR.summary, Literal(f["summary"])))
                g.add((fi, GR.explanation, Literal(f["explanation"])))

    try:
        covs = rows(f"{src}/covariates.parquet")
    except FileNotFoundError:
        covs = []
    for c in covs:
        s = iri("covariate", c["id"])
        g.add((s, RDF.type, GR.Covariate))
        g.add((s, GR.id, Literal(c["id"])))
        g.add((s, GR.type, Literal(c["type"])))
        g.add((s, GR.description, Literal(c["description"])))
        g.add((s, GR.status, Literal(c["status"])))
        g.add((s, GR.source_text, Literal(c["source_text"])))
        g.add((s, GR.text_unit, iri("chunk", c["text_unit_id"])))

    g.serialize(destination=out, format="turtle")
    elapsed = time.time() - start
    import os
    print(json.dumps({"triples": len(g), "seconds": round(elapsed, 3), "bytes": os.path.getsize(out)}))


if __name__ == "__main__":
    main()
