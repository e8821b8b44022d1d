#!/usr/bin/env python3
"""The NetworkX GraphRAG article's query step (section 9 of
../shared/seeds/000_*), written again here over GraphRAG's parquet tables
with pandas and networkx: the outside check of kgrag ask --mode subgraph.

usage: networkx_retrieval.py --jobs    one JSON job per stdin line, one JSON
                                       answer per stdout line

A job: {"dir": GraphRAG output, "entity_ids": [...], "entity_vecs": [[...]],
"question_vec": [...], "top_nodes": 12, "top_inside": 12, "top_outside": 12}.
The vectors stand in for the article's Chroma store: the top_nodes entities
by cosine similarity to the question (Chroma ranks by L2 distance, the same
order for unit vectors).

The graph is built as the article builds its own, from GraphRAG's tables:
one node per entity (in human_readable_id order; names that relationships
use and the entities table lacks are added after them, sorted), with its
description and its chunks (the entity's text_unit_ids); one edge per
relationship (in human_readable_id order), scored by its weight; each
node's community summaries ordered deepest level first, as the article
stores them. The article's networkx.Graph would merge A->B with B->A;
GraphRAG keeps both, so this is a MultiGraph keyed by relationship id.

An answer: {"nodes": [ids], "chunks": [text unit ids, sorted: the article's
list(set(...)) has no order], "inside": [relationship ids, in order],
"outside": [...], "nodes_info": [[id, description]] sorted (a set in the
article), "summaries": [[node id, [community numbers], summary text]] in
node order}.
"""
import glob
import json
import os
import sys

import networkx as nx
import numpy as np
import pandas as pd


def table(d, *names):
    for n in names:
        p = os.path.join(d, n + ".parquet")
        if os.path.exists(p):
            return pd.read_parquet(p)
    return None


def as_list(v):
    return [] if v is None else list(v)


def hrid_key(v):
    try:
        return (0, int(v), "")
    except (TypeError, ValueError):
        return (1, 0, str(v))


def build(d):
    arts = glob.glob(os.path.join(d, "output", "*", "artifacts"))
    if arts:
        d = sorted(arts)[-1]
    ents = table(d, "entities", "create_final_entities")
    rels = table(d, "relationships", "create_final_relationships")
    comms = table(d, "communities", "create_final_communities")
    reps = table(d, "community_reports", "create_final_community_reports")
    nodes_tab = table(d, "create_final_nodes")

    title_col = "title" if "title" in ents.columns else "name"
    ents = ents.assign(_k=[hrid_key(v) for v in ents["human_readable_id"]]).sort_values("_k", kind="stable")
    id_of = {}
    G = nx.MultiGraph()
    for row in ents.itertuples(index=False):
        r = row._asdict()
        id_of.setdefault(r[title_col], r["id"])
        G.add_node(r["id"], description=r["description"] or "", chunks=as_list(r["text_unit_ids"]))
    for t in sorted((set(rels["source"]) | set(rels["target"])) - set(id_of)):
        id_of[t] = "title:" + t
        G.add_node(id_of[t], description="", chunks=[])

    rels = rels.assign(_k=[hrid_key(v) for v in rels["human_readable_id"]]).sort_values("_k", kind="stable")
    for r in rels.to_dict("records"):
        G.add_edge(id_of[r["source"]], id_of[r["target"]], key=r["id"],
                   relationship=r["description"], score=float(r["weight"]), id=r["id"])

    # Community membership: (community, level) per node.
    clusters = {}
    if comms is not None and "entity_ids" in comms.columns:
        for c in comms.to_dict("records"):
            for e in as_list(c["entity_ids"]):
                clusters.setdefault(e, []).append((str(c["community"]), int(c["level"])))
    else:
        for n in nodes_tab.to_dict("records"):
            if n["community"] is None or pd.isna(n["community"]):
                continue
            clusters.setdefault(id_of[n["title"]], []).append((str(int(float(n["community"]))), int(n["level"])))
    summary = {str(r["community"]): r["summary"] or r["full_content"] or "" for r in reps.to_dict("records")}

    # As the article stores them: per level, the summaries of the node's
    # communities on that level joined by a line break; deepest level first.
    for node, data in G.nodes(data=True):
        if node in clusters:
            per_level = []
            for level in sorted({lv for _, lv in clusters[node]}):
                cs = sorted((c for c, lv in clusters[node] if lv == level and c in summary), key=int)
                if cs:
                    per_level.append((cs, "\n".join(summary[c] for c in cs), level))
            per_level.sort(key=lambda x: x[2], reverse=True)
            data["community_summaries"] = [(cs, s) for cs, s, _ in per_level] or [([], " ")]
        else:
            data["community_summaries"] = [([], " ")]
    return G


def answer(G, job):
    vecs = np.asarray(job["entity_vecs"], dtype=np.float64)
    q = np.asarray(job["question_vec"], dtype=np.float64)
    sims = (vecs @ q) / (np.linalg.norm(vecs, axis=1) * np.linalg.norm(q))
    order = sorted(range(len(sims)), key=lambda i: -sims[i])
    nodes = [job["entity_ids"][i] for i in order[: job["top_nodes"]]]

    # Section 9, step by step.
    chunks = []
    for node in nodes:
        chunks.extend(G.nodes[node]["chunks"])
    chunks = list(set(chunks))

    within, between = [], []
    nodes_set = set(nodes)
    for node1, node2, data in G.edges(data=True):
        info = {"start": node1, "end": node2, "id": data["id"], "score": data["score"]}
        if node1 in nodes_set and node2 in nodes_set:
            within.append(info)
        elif (node1 in nodes_set and node2 not in nodes_set) or (node2 in nodes_set and node1 not in nodes_set):
            between.append(info)
    within = sorted(within, key=lambda x: x["score"], reverse=True)[: job["top_inside"]]
    between = sorted(between, key=lambda x: x["score"], reverse=True)[: job["top_outside"]]

    all_nodes = set()
    for rel in within + between:
        all_nodes.add(rel["start"])
        all_nodes.add(rel["end"])
    nodes_info = [[n, G.nodes[n]["description"]] for n in all_nodes if n in G.nodes]

    summaries = []
    for node in nodes:
        cs, text = G.nodes[node]["community_summaries"][0]
        summaries.append([node, cs, text])

    return {"nodes": nodes, "chunks": sorted(chunks), "inside": [r["id"] for r in within],
            "outside": [r["id"] for r in between], "nodes_info": sorted(nodes_info), "summaries": summaries}


def main():
    if sys.argv[1:] != ["--jobs"]:
        sys.exit(__doc__)
    graphs = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        if job["dir"] not in graphs:
            graphs[job["dir"]] = build(job["dir"])
        json.dump(answer(graphs[job["dir"]], job), sys.stdout)
        sys.stdout.write("\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
