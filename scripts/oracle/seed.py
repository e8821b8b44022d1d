#!/usr/bin/env python3
"""Expected answers of the seed article's five SPARQL queries (chunks,
communities, outside and inside relationships, entity descriptions),
computed from the parquet files with pyarrow alone.

usage: seed.py DIR N    takes the first N entities of the entities table as
                        the selected entities and prints JSON:

  ids            the selected entity ids
  chunks         [[text, freq]] for every chunk with freq > 0
  communities    [[community, rank, weight]] for every reported community
                 with a selected member
  outside        [[description, from_id, to_id, rank, weight]] where to_id is
                 not selected (the seed's filter, kept as written)
  inside         the same where to_id is selected
  entities       [[id, description]]

Texts have CR LF replaced as the seed's queries replace them. Ids of
entities absent from the entities table are "title:" + title, as kgrag
names them.
"""
import json
import os
import sys

import pyarrow.parquet as pq


def table(d, *names):
    for n in names:
        p = os.path.join(d, n + ".parquet")
        if os.path.exists(p):
            return pq.read_table(p).to_pylist()
    return None


def main():
    d, n = sys.argv[1], int(sys.argv[2])
    ents = table(d, "entities", "create_final_entities")
    units = table(d, "text_units", "create_final_text_units")
    rels = table(d, "relationships", "create_final_relationships")
    comms = table(d, "communities", "create_final_communities")
    reps = table(d, "community_reports", "create_final_community_reports")
    nodes = table(d, "create_final_nodes")

    title_key = "title" if "title" in ents[0] else "name"
    by_title = {}
    for e in ents:
        by_title.setdefault(e[title_key], e["id"])
    selected = [e["id"] for e in ents[:n]]
    sel = set(selected)

    def eid(title):
        return by_title.get(title, "title:" + title)

    chunks = []
    for u in units:
        ids = u.get("entity_ids")
        if ids is None:
            ids = [e["id"] for e in ents if u["id"] in (e.get("text_unit_ids") or [])]
        freq = sum(1 for i in ids if i in sel)
        if freq:
            chunks.append([u["text"].replace("\r\n", " "), freq])

    # Community membership: entity_ids (0.5 and later) or create_final_nodes.
    members = {}
    if comms and "entity_ids" in comms[0]:
        for c in comms:
            members[str(c["community"])] = set(c["entity_ids"] or [])
    else:
        for row in nodes:
            if row["community"] is None:
                continue
            members.setdefault(str(row["community"]), set()).add(eid(row["title"]))

    # Weight as kgrag defines it: distinct text units of the members over
    # the largest such count in the dataset.
    units_of = {e["id"]: set(e.get("text_unit_ids") or []) for e in ents}
    counts = {}
    for c, m in members.items():
        s = set()
        for e in m:
            s |= units_of.get(e, set())
        counts[c] = len(s)
    top = max(counts.values()) if counts else 0
    communities = []
    for r in reps:
        c = str(r["community"])
        if members.get(c, set()) & sel:
            w = counts.get(c, 0) / top if top else 0.0
            communities.append([c, float(r["rank"]), w])

    outside, inside = [], []
    for r in rels:
        rank = r.get("combined_degree", r.get("rank"))
        row = [r["description"].replace("\r\n", ""), eid(r["source"]), eid(r["target"]), int(rank), float(r["weight"])]
        (inside if row[2] in sel else outside).append(row)

    entities = [[e["id"], (e["description"] or "").replace("\r\n", " ")] for e in ents[:n]]
    json.dump({"ids": selected, "chunks": chunks, "communities": communities,
               "outside": outside, "inside": inside, "entities": entities}, sys.stdout)


if __name__ == "__main__":
    main()
