#!/usr/bin/env python3
"""The documents each entity of a GraphRAG 2.x/3.x output came from,
computed from the parquet files with pyarrow alone: the outside check for
the provenance kgrag's mapping writes (prov:wasDerivedFrom, gr:source_path,
gr:sha256).

usage: provenance.py DIR   prints JSON {entity id: [[title, sha256], ...]}

An entity comes from the documents of its text units (text_unit_ids ->
text_units.document_id, or document_ids before 3.x); a document's path is
its title, its hash the SHA-256 of its text as UTF-8.
"""
import hashlib
import json
import os
import sys

import pyarrow.parquet as pq


def rows(d, name):
    return pq.read_table(os.path.join(d, name + ".parquet")).to_pylist()


def main():
    d = sys.argv[1]
    docs = {}
    for r in rows(d, "documents"):
        text = r.get("text") or ""
        docs[r["id"]] = [r["title"], hashlib.sha256(text.encode("utf-8")).hexdigest()]
    tu_docs = {}
    for r in rows(d, "text_units"):
        ids = r.get("document_ids")
        if ids is None:
            ids = [r["document_id"]] if r.get("document_id") else []
        tu_docs[r["id"]] = list(ids)
    out = {}
    for r in rows(d, "entities"):
        seen = []
        for tu in r.get("text_unit_ids") or []:
            for doc in tu_docs.get(tu, []):
                if doc in docs and docs[doc] not in seen:
                    seen.append(docs[doc])
        out[r["id"]] = sorted(seen)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
