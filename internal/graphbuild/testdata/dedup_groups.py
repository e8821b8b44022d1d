"""De-duplication groups by numpy and networkx, for internal/graphbuild's
Dedup tests.

Reads jobs from stdin, one JSON object a line:

    {"titles": [...], "vectors": [[...], ...], "threshold": t,
     "extractions": [{"text_unit_id", "entities": [{"title", "type",
       "description"}], "relationships": [{"source", "target",
       "description", "weight"}]}] or absent}

and writes one JSON object a line per job:

    groups: the connected components of more than one title of the graph
        whose edges join titles of cosine similarity >= t - 1e-9 (the
        slack Dedup documents), each sorted, in order of their first title;
    links: [a, b, similarity] of those edges, a before b in title order;
    min_similarity: per group, the least cosine similarity of two members;
    with "extractions", the records renamed to each group's kept title
    (most records of its first type, then least title) and merged by
    plain Python, keyed by title and by "source\\u0000target":
    entities: {title: {type, descriptions (sorted), text_unit_ids
        (sorted), frequency}} for the first (title, type) of each title;
    relationships: {key: {descriptions, text_unit_ids (sorted), weight}}.
"""

import json
import sys

import networkx as nx
import numpy as np

SLACK = 1e-9


def groups(titles, vectors, threshold):
    x = np.asarray(vectors, dtype=np.float64)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    sim = x @ x.T
    g = nx.Graph()
    g.add_nodes_from(range(len(titles)))
    links = []
    ii, jj = np.nonzero(np.triu(sim >= threshold - SLACK, k=1))
    for i, j in zip(ii.tolist(), jj.tolist()):
        g.add_edge(i, j)
        links.append([titles[i], titles[j], float(sim[i, j])])
    comps = [sorted(c) for c in nx.connected_components(g) if len(c) > 1]
    comps.sort(key=lambda c: c[0])
    mins = [float(sim[np.ix_(c, c)][np.triu_indices(len(c), k=1)].min()) for c in comps]
    return comps, links, mins


def merge(exts, comps, titles):
    # Each title's first type and the records of it.
    first_type, freq = {}, {}
    for x in exts:
        for e in x["entities"]:
            first_type.setdefault(e["title"], e["type"])
            if e["type"] == first_type[e["title"]]:
                freq[e["title"]] = freq.get(e["title"], 0) + 1
    rename = {}
    for c in comps:
        names = [titles[i] for i in c]
        kept = min(names, key=lambda n: (-freq[n], n.encode()))
        for n in names:
            if n != kept:
                rename[n] = (kept, first_type[kept])
    ents, rels = {}, {}
    known = set(first_type)
    for x in exts:
        tu = x["text_unit_id"]
        for e in x["entities"]:
            title, typ = rename.get(e["title"], (e["title"], e["type"]))
            row = ents.setdefault((title, typ), {"type": typ, "descriptions": [], "text_unit_ids": [], "frequency": 0})
            row["descriptions"].append(e["description"])
            row["text_unit_ids"].append(tu)
            row["frequency"] += 1
    for x in exts:
        tu = x["text_unit_id"]
        for r in x["relationships"]:
            if r["source"] not in known or r["target"] not in known:
                continue
            s = rename.get(r["source"], (r["source"],))[0]
            t = rename.get(r["target"], (r["target"],))[0]
            if s == t and r["source"] != r["target"]:
                continue
            row = rels.setdefault(s + "\u0000" + t, {"descriptions": [], "text_unit_ids": [], "weights": []})
            row["descriptions"].append(r["description"])
            row["text_unit_ids"].append(tu)
            row["weights"].append(r["weight"])
    out_e = {}
    for (title, typ), row in ents.items():  # first (title, type) of a title wins
        out_e.setdefault(title, row)
    for row in out_e.values():
        row["descriptions"].sort()
        row["text_unit_ids"].sort()
    out_r = {}
    for k, row in rels.items():
        out_r[k] = {"descriptions": sorted(row["descriptions"]), "text_unit_ids": sorted(row["text_unit_ids"]),
                    "weight": float(np.sum(row["weights"]))}
    return out_e, out_r


def main():
    for line in sys.stdin:
        job = json.loads(line)
        comps, links, mins = groups(job["titles"], job["vectors"], job["threshold"])
        out = {"groups": [[job["titles"][i] for i in c] for c in comps], "links": links, "min_similarity": mins}
        if job.get("extractions") is not None:
            out["entities"], out["relationships"] = merge(job["extractions"], comps, job["titles"])
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
