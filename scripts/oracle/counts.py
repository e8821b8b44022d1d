#!/usr/bin/env python3
"""Expected instance counts of a GraphRAG output, computed from the parquet
files with pyarrow alone: the outside check for kgrag's mapping.

usage: counts.py DIR   prints JSON {class: count}

Entity counts are split: "Entity" is the rows of the entities table,
"UnresolvedEntity" the distinct titles that relationships or claims name
and the entities table lacks.
"""
import glob
import json
import os
import sys

import pyarrow.parquet as pq


def claim_end(v):
    """Whether a claim's subject or object names an entity, by kgrag's
    documented rule: not a way of writing "none" (NONE, **NONE**, N/A,
    null, ...) and not a sentence (more than ten words, or six or more
    ending in . ! ? or a quote)."""
    if v is None:
        return False
    if v.strip().strip("*_`'\".").upper() in ("", "NONE", "NULL", "NAN", "N/A"):
        return False
    words = v.split()
    if len(words) > 10 or (len(words) >= 6 and v.strip()[-1] in ".!?'\""):
        return False
    return True


def table(d, *names):
    for n in names:
        p = os.path.join(d, n + ".parquet")
        if os.path.exists(p):
            return pq.read_table(p)
    return None


def main():
    d = sys.argv[1]
    arts = glob.glob(os.path.join(d, "output", "*", "artifacts"))
    if arts:
        d = sorted(arts)[-1]
    docs = table(d, "documents", "create_final_documents")
    units = table(d, "text_units", "create_final_text_units")
    ents = table(d, "entities", "create_final_entities")
    rels = table(d, "relationships", "create_final_relationships")
    comms = table(d, "communities", "create_final_communities")
    reps = table(d, "community_reports", "create_final_community_reports")
    covs = table(d, "covariates", "create_final_covariates")

    title_col = "title" if "title" in ents.column_names else "name"
    titles = set(ents.column(title_col).to_pylist())
    unresolved = set()
    for col in ("source", "target"):
        for t in rels.column(col).to_pylist():
            if t not in titles:
                unresolved.add(t)
    if covs is not None:
        for col in ("subject_id", "object_id"):
            for t in covs.column(col).to_pylist():
                if not claim_end(t):
                    continue
                if t not in titles:
                    unresolved.add(t)

    def community_key(v):
        return str(v)

    community_ids = set()
    if comms is not None:
        col = "community" if "community" in comms.column_names else "id"
        community_ids |= {community_key(v) for v in comms.column(col).to_pylist()}
    if reps is not None:
        community_ids |= {community_key(v) for v in reps.column("community").to_pylist()}

    findings = 0
    if reps is not None:
        for f in reps.column("findings").to_pylist():
            findings += len(f or [])

    out = {
        "Document": docs.num_rows if docs is not None else 0,
        "Chunk": units.num_rows,
        "Entity": ents.num_rows,
        "UnresolvedEntity": len(unresolved),
        "related_to": rels.num_rows,
        "Community": len(community_ids),
        "Finding": findings,
        "Covariate": covs.num_rows if covs is not None else 0,
    }
    # Provenance: one index run per output; the prompts it used when
    # kgrag index left its run record.
    out["IndexRun"] = 1
    run = os.path.join(d, "kgrag_run.json")
    if os.path.exists(run):
        with open(run) as f:
            prompts = json.load(f).get("prompts") or {}
        if prompts:
            out["Prompt"] = len(prompts)
    json.dump(out, sys.stdout, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
