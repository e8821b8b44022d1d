#!/usr/bin/env python3
"""Expected instance counts of a GraphRAG output, computed from the parquet
files with pyarrow alone: the outside check for kgrag's mapping.

usage: counts.py DIR   prints JSON {class: count, ..., "left_out": {...}}

Entity counts are split: "Entity" is the rows of the entities table,
"UnresolvedEntity" the distinct titles that relationships or claims name
and the entities table lacks.

Quarantine: a row whose key column is blank (null, or empty once
whitespace is stripped) is malformed and left out of every count, and so
is a row that depends on an entity left out that way. Key columns:
documents.id, text_units.id, entities.id and entities.title (`name` in
0.3/0.4), relationships.id/source/target, covariates.id, and the
community number (communities.community, `id` in 0.3/0.4, and
community_reports.community), which must also be an integer (3, "3",
3.0). A left-out title is one held by a malformed entity row and by no
kept one; a relationship whose source or target, or a claim whose subject
or object, is a left-out title depends on it. "UnresolvedEntity" counts
only titles named by kept relationships and claims, and never a left-out
title; "Finding" only kept reports. "left_out" is
{table: {"malformed": n, "depends": m}} for each table with rows left
out ({} when none are).
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


def blank(v):
    """A key value that is missing: null, or empty once stripped."""
    return v is None or str(v).strip() == ""


def integral(v):
    """Whether a community number is an integer: an int, a float with no
    fraction (3.0), or a string of either ("3", "3.0")."""
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    if isinstance(v, str):
        try:
            int(v.strip())
            return True
        except ValueError:
            pass
        try:
            v = float(v)
        except ValueError:
            return False
    return isinstance(v, float) and v.is_integer()


def malformed_rows(t, key_cols, numbered=None):
    """Per row of t, whether it is malformed: a key column is blank, or
    the column `numbered` (a community number) is blank or no integer."""
    if t is None:
        return []
    bad = [False] * t.num_rows
    for col in key_cols:
        for i, v in enumerate(t.column(col).to_pylist()):
            bad[i] = bad[i] or blank(v)
    if numbered is not None:
        for i, v in enumerate(t.column(numbered).to_pylist()):
            bad[i] = bad[i] or blank(v) or not integral(v)
    return bad


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
    ent_titles = ents.column(title_col).to_pylist()

    # Malformed rows: a blank key, or a community number that is no integer.
    bad = {
        "documents": malformed_rows(docs, ["id"]),
        "text_units": malformed_rows(units, ["id"]),
        "entities": malformed_rows(ents, ["id", title_col]),
        "relationships": malformed_rows(rels, ["id", "source", "target"]),
        "communities": malformed_rows(
            comms, [],
            numbered=None if comms is None else
            ("community" if "community" in comms.column_names else "id")),
        "community_reports": malformed_rows(reps, [], numbered="community"),
        "covariates": malformed_rows(covs, ["id"]),
    }

    # Titles left out: held by a malformed entity row and by no kept one
    # (a duplicate title on a good row keeps the entity).
    titles = {t for t, b in zip(ent_titles, bad["entities"]) if not b}
    left_titles = {t for t, b in zip(ent_titles, bad["entities"])
                   if b and not blank(t)} - titles

    # Rows that depend on a left-out entity: well-formed relationships and
    # claims naming a left-out title at either end. They are left out but
    # are not malformed, so they are counted apart.
    def dependents(t, cols, malformed):
        if t is None:
            return []
        ends = [t.column(c).to_pylist() for c in cols]
        return [not m and any(e[i] in left_titles for e in ends)
                for i, m in enumerate(malformed)]

    dep = {
        "relationships": dependents(rels, ("source", "target"), bad["relationships"]),
        "covariates": dependents(covs, ("subject_id", "object_id"), bad["covariates"]),
    }

    def kept(name, t):
        """Row indexes of t that are neither malformed nor dependent."""
        if t is None:
            return []
        deps = dep.get(name) or [False] * t.num_rows
        return [i for i in range(t.num_rows) if not bad[name][i] and not deps[i]]

    keep = {n: kept(n, t) for n, t in (
        ("documents", docs), ("text_units", units), ("entities", ents),
        ("relationships", rels), ("communities", comms),
        ("community_reports", reps), ("covariates", covs))}

    def kept_values(name, t, col):
        """Column col of t, kept rows only."""
        vals = t.column(col).to_pylist()
        return [vals[i] for i in keep[name]]

    # Unresolved: titles named by kept relationships and kept claims that
    # no kept entity has; a left-out title is not turned into one.
    unresolved = set()
    for col in ("source", "target"):
        for t in kept_values("relationships", rels, col):
            if t not in titles and t not in left_titles:
                unresolved.add(t)
    if covs is not None:
        for col in ("subject_id", "object_id"):
            for t in kept_values("covariates", covs, col):
                if not claim_end(t):
                    continue
                if t not in titles and t not in left_titles:
                    unresolved.add(t)

    def community_key(v):
        return str(v)

    community_ids = set()
    if comms is not None:
        col = "community" if "community" in comms.column_names else "id"
        community_ids |= {community_key(v)
                          for v in kept_values("communities", comms, col)}
    if reps is not None:
        community_ids |= {community_key(v)
                          for v in kept_values("community_reports", reps, "community")}

    findings = 0
    if reps is not None:
        for f in kept_values("community_reports", reps, "findings"):
            findings += len(f or [])

    left_out = {}
    for name, rows in bad.items():
        n, m = sum(rows), sum(dep.get(name, []))
        if n + m:
            left_out[name] = {"malformed": n, "depends": m}

    out = {
        "Document": len(keep["documents"]) if docs is not None else 0,
        "Chunk": len(keep["text_units"]),
        "Entity": len(keep["entities"]),
        "UnresolvedEntity": len(unresolved),
        "related_to": len(keep["relationships"]),
        "Community": len(community_ids),
        "Finding": findings,
        "Covariate": len(keep["covariates"]) if covs is not None else 0,
        "left_out": left_out,
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
