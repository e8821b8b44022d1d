#!/usr/bin/env python3
"""Microsoft GraphRAG's own text-unit community report contexts (the fast
method's create_community_reports_text), run without a model: the oracle
kgrag's internal/reports text contexts are compared with.

usage: graphrag_report_text.py --jobs < jobs.jsonl > out.jsonl

Run it with the venv python of scripts/graphrag-py.sh. Each stdin line is
one JSON job; each gets one JSON line back:

{"dir": D, "max_context_tokens": N, "encoding": "cl100k_base",
 "reports": {"COMMUNITY": "FULL_CONTENT", ...}, "drop_unnamed": false}
    D is a GraphRAG 3.x output (entities, communities, text_units
    .parquet). The script does what
    graphrag.index.workflows.create_community_reports_text does before the
    model is called: explode_communities, then the text_unit_context
    build_local_context with max_input_length N. Answer:
      local     one per community: community (string), level, text (its
                context_string: every text unit, untrimmed), tokens,
                exceeds (context_exceed_limit), units (the ids of its text
                units in sort_context's order)
      actual    one per community: the context_string of
                build_level_context called as summarize_communities calls
                it, with no report written yet (an over-budget context is
                trimmed to the budget): community, level, text, tokens
      intended  (only with "reports") the same, given as already written
                the "reports" of the communities one level down, as
                build_level_context's docstring describes it: over-budget
                contexts take their sub-communities' reports. GraphRAG
                3.3.0 cannot run that path as it stands: its text
                build_level_context tests a Series with `is False` (a
                KeyError), and build_mixed_context calls the graph
                context's sort_context on text units. The job runs
                GraphRAG's own functions with those two things mended
                (`== False`, and the text_unit_context sort_context),
                nothing else changed.
      seconds   wall time of the local and level context building
      dropped   with "drop_unnamed": how many text units were left out
                of the communities' text_unit_ids because none of the
                community's entities names them (or text_units lacks
                them): GraphRAG's build_local_context fails on such a
                text unit (TypeError on a NaN all_details), and a standard
                output such as the v3 sample has them, since its
                communities take their text units from relationships.
                kgrag leaves them out too.

Tokens are counted with tiktoken "encoding" (default cl100k_base);
TIKTOKEN_CACHE_DIR defaults to the venv's tiktoken-cache, filled offline by
scripts/graphrag-py.sh. LITELLM_LOCAL_MODEL_COST_MAP defaults to True, so
importing GraphRAG tries no download.
"""
import inspect
import json
import os
import sys
import time
import types

os.environ.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(sys.prefix, "tiktoken-cache"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pandas as pd  # noqa: E402
from graphrag.index.operations.summarize_communities import build_mixed_context as bmc  # noqa: E402
from graphrag.index.operations.summarize_communities.explode_communities import (  # noqa: E402
    explode_communities,
)
from graphrag.index.operations.summarize_communities.text_unit_context import (  # noqa: E402
    context_builder as tcb,
)
from graphrag.index.operations.summarize_communities.text_unit_context.sort_context import (  # noqa: E402
    sort_context,
)
from graphrag.index.operations.summarize_communities.utils import get_levels  # noqa: E402
from graphrag.tokenizer.get_tokenizer import get_tokenizer  # noqa: E402


def mended_level_context():
    """GraphRAG's text build_level_context with its two faults mended."""
    src = inspect.getsource(tcb.build_level_context)
    fixed = src.replace("] is False]", "] == False]").replace("] is True]", "] == True]")  # noqa: E712
    if fixed.count("== False]") != 1 or fixed.count("== True]") != 1:
        sys.exit("graphrag_report_text: build_level_context is not the 3.3.0 one this script mends")
    g = dict(tcb.__dict__)
    g["build_mixed_context"] = types.FunctionType(
        bmc.build_mixed_context.__code__, {**bmc.__dict__, "sort_context": sort_context})
    exec(compile(fixed, tcb.__file__, "exec"), g)  # noqa: S102 - GraphRAG's own source
    return g["build_level_context"]


def read(d, name):
    path = os.path.join(d, name + ".parquet")
    try:
        return pd.read_parquet(path)
    except Exception as e:  # noqa: BLE001 - name the file, then fail
        sys.exit(f"graphrag_report_text: read {path}: {e}")


def drop_unnamed(communities, entities, text_units):
    """Leave out of each community's text_unit_ids those that none of its
    entities names, or that text_units lacks: build_local_context fails on
    them (the left join leaves all_details NaN)."""
    names = {r.id: set(r.text_unit_ids) for r in entities.itertuples()}
    known = set(text_units["id"])
    communities = communities.copy()
    dropped = 0
    kept_lists = []
    for r in communities.itertuples():
        named = set()
        for e in r.entity_ids:
            named |= names.get(e, set())
        kept = [u for u in r.text_unit_ids if u in named and u in known]
        dropped += len(r.text_unit_ids) - len(kept)
        kept_lists.append(kept)
    communities["text_unit_ids"] = kept_lists
    return communities, dropped


def level_contexts(builder, reports, communities, nodes, local, tok, budget):
    hierarchy = (
        communities.explode("children")
        .rename({"children": "sub_community"}, axis=1)
        .loc[:, ["community", "level", "sub_community"]]
    ).dropna()
    out = []
    for level in get_levels(nodes):
        done = reports[reports["level"] > level] if reports is not None else None
        ctx = builder(
            done if done is not None and len(done) else None,
            community_hierarchy_df=hierarchy,
            local_context_df=local,
            level=level,
            tokenizer=tok,
            max_context_tokens=budget,
        )
        for row in ctx.itertuples():
            out.append({
                "community": str(int(row.community)),
                "level": int(level),
                "text": row.context_string,
                "tokens": tok.num_tokens(row.context_string),
            })
    return out


def contexts(job):
    d = job["dir"]
    budget = int(job.get("max_context_tokens", 8000))
    tok = get_tokenizer(encoding_model=job.get("encoding", "cl100k_base"))
    entities = read(d, "entities")
    communities = read(d, "communities")
    text_units = read(d, "text_units")

    dropped = 0
    if job.get("drop_unnamed"):
        communities, dropped = drop_unnamed(communities, entities, text_units)

    t0 = time.perf_counter()
    # create_community_reports_text, up to the model calls
    nodes = explode_communities(communities, entities)
    local = tcb.build_local_context(communities, text_units, nodes.copy(), tok, budget)
    res = {"local": [], "actual": level_contexts(tcb.build_level_context, None, communities, nodes, local, tok, budget)}
    for row in local.itertuples():
        ranked = sorted(row.all_context, key=lambda x: x["entity_degree"], reverse=True)
        res["local"].append({
            "community": str(int(row.community)),
            "level": int(row.level),
            "text": row.context_string,
            "tokens": int(row.context_size),
            "exceeds": bool(row.context_exceed_limit),
            "units": [str(int(u["id"])) for u in ranked],
        })
    if job.get("reports"):
        level_of = {str(int(r.community)): int(r.level) for r in communities.itertuples()}
        rows = [{"community": int(c), "level": level_of[c], "full_content": text} for c, text in job["reports"].items()]
        res["intended"] = level_contexts(mended_level_context(), pd.DataFrame(rows), communities, nodes, local, tok, budget)
    res["seconds"] = time.perf_counter() - t0
    res["dropped"] = dropped
    return res


def main():
    if sys.argv[1:] != ["--jobs"]:
        sys.exit(__doc__.split("\n\n")[1])
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            job = json.loads(line)
        except ValueError as e:
            sys.exit(f"graphrag_report_text: job {line[:80]!r}: {e}")
        sys.stdout.write(json.dumps(contexts(job), ensure_ascii=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
