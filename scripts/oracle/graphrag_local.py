#!/usr/bin/env python3
"""Microsoft GraphRAG's own local search context builder, run on given
entity selections: the oracle kgrag's internal/retrieval is compared with,
and the peer it is timed against.

usage: graphrag_local.py [options] DIR < selections.jsonl > contexts.jsonl

Run it with the venv python of scripts/graphrag-py.sh. DIR is a GraphRAG
2.x/3.x output (entities, relationships, text_units, communities,
community_reports .parquet). Each stdin line is a JSON list of entity ids,
nearest first (what a vector index returns), or an object {"ids": [...],
"question": "...", "history": [{"role": "user", "content": "..."}, ...]}
for a question asked after earlier turns (passed as GraphRAG's
ConversationHistory); each stdout line is a JSON object for it:

  reports, entities, relationships, sources
      the "id" column of each table in GraphRAG's context_records, in
      order (absent table: [])
  text      GraphRAG's context_chunks
  query     the text build_context handed to map_query_to_entities (the
            question with the earlier user turns appended)
  seconds   wall time of build_context alone (perf_counter)
  report_candidates
            with --report-candidates: [id, matches, rank] of every report
            _build_community_context ranked, in its order, before the
            budget cut

The data are read with GraphRAG's own readers (pandas.read_parquet, then
graphrag.query.indexer_adapters read_indexer_entities/relationships/
text_units/reports at --community-level, as graphrag.api.local_search
does) into one LocalSearchMixedContext, built once. build_context then runs
with the arguments graphrag.query.factory.get_local_search_engine passes,
except that map_query_to_entities, the only step that needs an embedding
model, is replaced by a lookup of the given ids in the builder's entity
dict, as the real function does with the ids the vector store returns
(unknown ids are skipped, nothing is truncated). No embedder and no vector
store are built.

Two choices, both to match what kgrag claims to implement:
  - no covariates (claims) are passed; kgrag leaves claims out.
  - before each selection, the attributes GraphRAG's relationship ranking
    leaves on the shared Relationship objects ("links") are cleared, so
    every selection starts from freshly read data whatever ran before it.
    --keep-state skips this (GraphRAG's behaviour in a long-lived process).
    The reset is outside the timed part.

--history-turns and --history-answers are conversation_history_max_turns
and (negated) conversation_history_user_turns_only.

--no-links-column is a what-if for explaining differences, not GraphRAG
as shipped: after each _filter_relationships call the "links" attribute it
left is removed again, so that the relationships table never grows a
"links" column from it (ranking is unchanged: links are recomputed on every
call before they are used).

Tokens are counted with tiktoken --encoding (cl100k_base, kgrag's default);
TIKTOKEN_CACHE_DIR defaults to the venv's tiktoken-cache, filled offline by
scripts/graphrag-py.sh.
"""
import argparse
import json
import os
import sys
import time

os.environ.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(sys.prefix, "tiktoken-cache"))

import pandas as pd  # noqa: E402
from graphrag.query import indexer_adapters as ia  # noqa: E402
from graphrag.query.context_builder import local_context  # noqa: E402
from graphrag.query.context_builder.conversation_history import ConversationHistory  # noqa: E402
from graphrag.query.input.retrieval.entities import get_entity_by_id  # noqa: E402
from graphrag.query.structured_search.local_search import mixed_context  # noqa: E402
from graphrag.tokenizer.get_tokenizer import get_tokenizer  # noqa: E402

TABLES = ("reports", "entities", "relationships", "sources")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dir")
    # kgrag's retrieval.DefaultParams, which are GraphRAG's local search
    # defaults (graphrag/config/defaults.py LocalSearchDefaults).
    p.add_argument("--community-level", type=int, default=2)
    p.add_argument("--max-context-tokens", type=int, default=12000)
    p.add_argument("--text-unit-prop", type=float, default=0.5)
    p.add_argument("--community-prop", type=float, default=0.15)
    p.add_argument("--top-k-entities", type=int, default=10)
    p.add_argument("--top-k-relationships", type=int, default=10)
    p.add_argument("--encoding", default="cl100k_base")
    p.add_argument("--keep-state", action="store_true")
    p.add_argument("--no-links-column", action="store_true")
    p.add_argument("--report-candidates", action="store_true")
    p.add_argument("--history-turns", type=int, default=5)
    p.add_argument("--history-answers", action="store_true")
    return p.parse_args()


def load(d, level, encoding):
    def read(name):
        path = os.path.join(d, name + ".parquet")
        try:
            return pd.read_parquet(path)
        except Exception as e:  # noqa: BLE001 - name the file, then fail
            sys.exit(f"graphrag_local: read {path}: {e}")

    communities = read("communities")
    entities = ia.read_indexer_entities(read("entities"), communities, level)
    reports = ia.read_indexer_reports(read("community_reports"), communities, level)
    return mixed_context.LocalSearchMixedContext(
        entities=entities,
        entity_text_embeddings=None,
        text_embedder=None,
        text_units=ia.read_indexer_text_units(read("text_units")),
        community_reports=reports,
        relationships=ia.read_indexer_relationships(read("relationships")),
        covariates=None,
        tokenizer=get_tokenizer(encoding_model=encoding),
    )


def main():
    a = parse_args()
    builder = load(a.dir, a.community_level, a.encoding)
    current = []
    queries = []

    def selected(*_args, all_entities_dict, **kwargs):
        queries.append(kwargs.get("query"))
        out = []
        for eid in current:
            e = get_entity_by_id(all_entities_dict, eid)
            if e:
                out.append(e)
        return out

    mixed_context.map_query_to_entities = selected

    if a.no_links_column:
        filter_relationships = local_context._filter_relationships

        def filter_without_links(*args, **kwargs):
            out = filter_relationships(*args, **kwargs)
            for r in kwargs.get("relationships", args[1] if len(args) > 1 else []):
                if r.attributes:
                    r.attributes.pop("links", None)
            return out

        local_context._filter_relationships = filter_without_links

    candidates = []
    if a.report_candidates:
        build_community_context = mixed_context.build_community_context

        def recording(*args, **kwargs):
            reports = kwargs["community_reports"]
            chosen = [builder.entities[i] for i in current if i in builder.entities]
            for r in reports:
                n = sum(1 for e in chosen if r.community_id in (e.community_ids or []))
                candidates.append([str(r.short_id), n, r.rank])
            return build_community_context(*args, **kwargs)

        mixed_context.build_community_context = recording
    rels = list(builder.relationships.values())
    for n, line in enumerate(sys.stdin, 1):
        if not line.strip():
            continue
        question, history = "kgrag oracle", None
        try:
            v = json.loads(line)
            if isinstance(v, dict):
                question = v.get("question", question)
                if v.get("history"):
                    history = ConversationHistory.from_list(v["history"])
                v = v["ids"]
            current = [str(x) for x in v]
        except (ValueError, TypeError, KeyError) as e:
            sys.exit(f"graphrag_local: stdin line {n}: want a JSON list of entity ids or an object with ids: {e}")
        candidates.clear()
        queries.clear()
        if not a.keep_state:
            for r in rels:
                r.attributes = None
        t0 = time.perf_counter()
        res = builder.build_context(
            query=question,  # only recorded: map_query_to_entities is replaced
            conversation_history=history,
            max_context_tokens=a.max_context_tokens,
            text_unit_prop=a.text_unit_prop,
            community_prop=a.community_prop,
            top_k_mapped_entities=a.top_k_entities,
            top_k_relationships=a.top_k_relationships,
            include_entity_rank=True,
            include_relationship_weight=True,
            include_community_rank=False,
            return_candidate_context=False,
            conversation_history_max_turns=a.history_turns,
            conversation_history_user_turns_only=not a.history_answers,
        )
        secs = time.perf_counter() - t0
        out = {"selection": current, "text": res.context_chunks, "seconds": secs, "query": queries[0] if queries else None}
        if a.report_candidates:
            out["report_candidates"] = candidates
        for name in TABLES:
            df = res.context_records.get(name)
            out[name] = [] if df is None or "id" not in df else [str(x) for x in df["id"].tolist()]
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
