#!/usr/bin/env python3
"""Expected answers of sparqlq's retrieval templates (entities,
relationships, text_units, communities, community_reports), computed from
the parquet files of a GraphRAG 1.x+ output with pyarrow alone.

usage: retrieval.py DIR ID...   prints JSON for the selected entity ids:

  entities       [[id, human_readable_id, title, type, degree]] by id
  inside         [[id, source_id, target_id, rank, weight]] of the
                 relationships with both ends selected, ordered by rank and
                 weight (descending), then id
  outside        the same for relationships with exactly one end selected
  text_units     [[id, n_tokens, selected]] of text units holding a
                 selected entity, ordered by selected (descending), then id
  communities    {level: [[community, selected, rank]]} for levels 0, 1 and
                 "all", ordered by selected, rank, weight (descending), then
                 community number
  reports        {level: [community]} of reported communities, ordered by
                 rank, weight (descending), then community number

Relationship ends are resolved from titles; an entity absent from the
entities table has id "title:" + title, as kgrag names it. A community's
weight is kgrag's occurrence weight (distinct text units of its members
over the largest such count).
"""
import json
import os
import sys

import pyarrow.parquet as pq


def table(d, name):
    return pq.read_table(os.path.join(d, name + ".parquet")).to_pylist()


def main():
    d, sel = sys.argv[1], set(sys.argv[2:])
    ents = table(d, "entities")
    rels = table(d, "relationships")
    units = table(d, "text_units")
    comms = table(d, "communities")
    reps = {str(r["community"]): r for r in table(d, "community_reports")}

    by_title = {}
    for e in ents:
        by_title.setdefault(e["title"], e["id"])

    def eid(title):
        return by_title.get(title, "title:" + title)

    entities = sorted([[e["id"], str(e["human_readable_id"]), e["title"], e["type"] or "", e["degree"]]
                       for e in ents if e["id"] in sel])

    inside, outside = [], []
    for r in rels:
        s, t = eid(r["source"]), eid(r["target"])
        ends = (s in sel) + (t in sel)
        if s == t and s in sel:
            ends = 2
        row = [r["id"], s, t, int(r["combined_degree"]), float(r["weight"])]
        if ends == 2:
            inside.append(row)
        elif ends == 1:
            outside.append(row)
    key = lambda r: (-r[3], -r[4], r[0])
    inside.sort(key=key)
    outside.sort(key=key)

    text_units = []
    for u in units:
        n = len(set(u["entity_ids"] or []) & sel)
        if n:
            text_units.append([u["id"], u["n_tokens"], n])
    text_units.sort(key=lambda r: (-r[2], r[0]))

    units_of = {e["id"]: set(e["text_unit_ids"] or []) for e in ents}
    counts = {}
    for c in comms:
        s = set()
        for e in c["entity_ids"] or []:
            s |= units_of.get(e, set())
        counts[str(c["community"])] = len(s)
    top = max(counts.values()) if counts else 0

    def weight(c):
        return counts[str(c)] / top if top else 0.0

    def rank(c):
        r = reps.get(str(c))
        return float(r["rank"]) if r and r["rank"] is not None else None

    def order(c):
        r = rank(c)
        return (r is None, -(r or 0), -weight(c), c)

    communities = {}
    for level in ("0", "1", "all"):
        rows = []
        for c in comms:
            if level != "all" and c["level"] != int(level):
                continue
            n = len(set(c["entity_ids"] or []) & sel)
            if n:
                rows.append([c["community"], n, rank(c["community"])])
        rows.sort(key=lambda r: (-r[1],) + order(r[0]))
        communities[level] = rows

    reports = {}
    for level in ("0", "1", "2", "3", "all"):
        cs = [c["community"] for c in comms
              if (level == "all" or c["level"] == int(level))
              and str(c["community"]) in reps and reps[str(c["community"])]["full_content"]]
        cs.sort(key=order)
        reports[level] = cs

    json.dump({"entities": entities, "inside": inside, "outside": outside, "text_units": text_units,
               "communities": communities, "reports": reports}, sys.stdout)


if __name__ == "__main__":
    main()
