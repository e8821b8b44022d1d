#!/usr/bin/env python3
"""Microsoft GraphRAG's own community report contexts and report
rendering, run without a model: the oracle kgrag's internal/reports is
compared with.

usage: graphrag_report_context.py --jobs < jobs.jsonl > out.jsonl

Run it with the venv python of scripts/graphrag-py.sh. Each stdin line is
one JSON job; each gets one JSON line back. Two kinds of job:

{"dir": D, "max_context_tokens": N, "encoding": "cl100k_base", "claims": true,
 "report_column": "full_content"}
    D is a GraphRAG 2.x/3.x output (entities, relationships, communities,
    community_reports and, with "claims", covariates .parquet). The script
    does what graphrag.index.workflows.create_community_reports does before
    the model is called: explode_communities, _prep_nodes, _prep_edges,
    _prep_claims, build_local_context with max_input_length N. Then, for
    each level from the deepest up, build_level_context with the reports
    "already generated": the rows of D's community_reports at deeper
    levels (community, level, full_content), as they would stand had the
    pipeline written them bottom-up. "report_column" names the column
    that stands in for a report's full_content: "title" gives short
    reports, so that a small budget makes GraphRAG mix sub-community
    reports with local context (real reports are longer than any budget
    at which a local context is over it). Answer:
      contexts  one per community: community (string), level, text (the
                context_string the prompt would hold), tokens (its
                tiktoken count), exceeds (the local context's
                context_exceed_limit flag: whether substitution was tried)
      seconds   wall time of the local and level context building

    GraphRAG 3.3.0's summarize_communities itself builds every level's
    context before it generates any report (it passes the still empty
    report list to build_level_context for all levels), so in a real run
    an over-budget context is trimmed, never given sub-community reports.
    The jobs here call build_level_context as its docstring describes, with
    the reports of the level below, which is what kgrag does.

{"render": [REPLY, ...]}
    Each REPLY is a model reply text. GraphRAG's parse of it
    (graphrag_llm.utils.structure_response: json.loads, then
    CommunityReportResponse(**dict)) and, when that works, its rendering:
    CommunityReportsExtractor._get_text_output (full_content) and
    model_dump_json(indent=4) (full_content_json). Answer:
      reports  one per REPLY: ok, error (when not ok), full_content,
               full_content_json, rating

Tokens are counted with tiktoken "encoding" (default cl100k_base);
TIKTOKEN_CACHE_DIR defaults to the venv's tiktoken-cache, filled offline by
scripts/graphrag-py.sh. LITELLM_LOCAL_MODEL_COST_MAP defaults to True, so
importing GraphRAG tries no download.
"""
import json
import os
import sys
import time

os.environ.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(sys.prefix, "tiktoken-cache"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pandas as pd  # noqa: E402
from graphrag.callbacks.noop_workflow_callbacks import NoopWorkflowCallbacks  # noqa: E402
from graphrag.index.operations.summarize_communities.community_reports_extractor import (  # noqa: E402
    CommunityReportResponse,
    CommunityReportsExtractor,
)
from graphrag.index.operations.summarize_communities.explode_communities import (  # noqa: E402
    explode_communities,
)
from graphrag.index.operations.summarize_communities.graph_context.context_builder import (  # noqa: E402
    build_level_context,
    build_local_context,
)
from graphrag.index.operations.summarize_communities.utils import get_levels  # noqa: E402
from graphrag.index.workflows import create_community_reports as workflow  # noqa: E402
from graphrag.tokenizer.get_tokenizer import get_tokenizer  # noqa: E402


def read(d, name):
    path = os.path.join(d, name + ".parquet")
    try:
        return pd.read_parquet(path)
    except Exception as e:  # noqa: BLE001 - name the file, then fail
        sys.exit(f"graphrag_report_context: read {path}: {e}")


def contexts(job):
    d = job["dir"]
    budget = int(job.get("max_context_tokens", 8000))
    column = job.get("report_column", "full_content")
    tok = get_tokenizer(encoding_model=job.get("encoding", "cl100k_base"))
    entities = read(d, "entities")
    relationships = read(d, "relationships")
    communities = read(d, "communities")
    reports = read(d, "community_reports")
    claims = workflow._prep_claims(read(d, "covariates")) if job.get("claims") else None

    t0 = time.perf_counter()
    # create_community_reports, up to the model calls
    nodes = workflow._prep_nodes(explode_communities(communities, entities))
    edges = workflow._prep_edges(relationships)
    local = build_local_context(nodes, edges, claims, tok, NoopWorkflowCallbacks(), budget)
    # summarize_communities' hierarchy table
    hierarchy = (
        communities.explode("children")
        .rename({"children": "sub_community"}, axis=1)
        .loc[:, ["community", "level", "sub_community"]]
    ).dropna()

    out = []
    for level in get_levels(nodes):
        done = reports.loc[reports["level"] > level, ["community", "level", column]]
        done = done.rename(columns={column: "full_content"})
        ctx = build_level_context(
            done if len(done) else None,
            community_hierarchy_df=hierarchy,
            local_context_df=local,
            level=level,
            tokenizer=tok,
            max_context_tokens=budget,
        )
        at = local[local["level"] == level].set_index("community")
        for row in ctx.itertuples():
            out.append({
                "community": str(int(row.community)),
                "level": int(level),
                "text": row.context_string,
                "tokens": tok.num_tokens(row.context_string),
                "exceeds": bool(at.loc[row.community, "context_exceed_limit"]),
            })
    return {"contexts": out, "seconds": time.perf_counter() - t0}


def render(replies):
    out = []
    for text in replies:
        try:
            report = CommunityReportResponse(**json.loads(text))
        except Exception as e:  # noqa: BLE001 - GraphRAG drops the report on any error
            out.append({"ok": False, "error": f"{type(e).__name__}: {e}"})
            continue
        out.append({
            "ok": True,
            "full_content": CommunityReportsExtractor._get_text_output(None, report),
            "full_content_json": report.model_dump_json(indent=4),
            "rating": report.rating,
        })
    return {"reports": out}


def main():
    if sys.argv[1:] != ["--jobs"]:
        sys.exit(__doc__.split("\n\n")[1])
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            job = json.loads(line)
        except ValueError as e:
            sys.exit(f"graphrag_report_context: job {line[:80]!r}: {e}")
        res = render(job["render"]) if "render" in job else contexts(job)
        sys.stdout.write(json.dumps(res, ensure_ascii=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
