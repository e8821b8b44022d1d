#!/usr/bin/env python3
"""Microsoft GraphRAG's own global search context builder, run without a
model: the oracle kgrag's global search map batches are compared with.

usage: graphrag_global.py [options] DIR > batches.json
       graphrag_global.py --jobs < jobs.jsonl > batches.jsonl

Run it with the venv python of scripts/graphrag-py.sh. DIR is a GraphRAG
2.x/3.x output (entities, communities, community_reports .parquet). It
prints one JSON object:

  batches   one per map call, in order:
      ids     the "id" column of the batch's records (community numbers,
              as strings) in the order the batch's CSV prints them
      text    the batch's context text (GraphRAG's context_chunks[i])
      tokens  tiktoken --encoding count of text
  reports   how many reports read_indexer_reports returned
  seconds   wall time of build_context alone (perf_counter); with
            --ratings it includes the dynamic selection
  adapt_seconds
            wall time of GraphRAG's indexer adapters
            (read_indexer_communities, _reports, _entities) and of the
            GlobalCommunityContext's construction: the tables, already
            read from parquet, turned into what build_context takes
  rated     with --ratings: the communities rated, in the order they were
            rated (strings)
  selected  with --ratings: the selected communities, as strings sorted by
            number

It does what graphrag.api.query.global_search_streaming and
graphrag.query.factory.get_global_search_engine do up to the map calls:
the data are read with pandas.read_parquet and GraphRAG's
read_indexer_communities / read_indexer_reports / read_indexer_entities at
--community-level, one GlobalCommunityContext is built, and build_context
runs with the context_builder_params get_global_search_engine passes
(report full content, shuffle_data with GraphRAG's seed 86, rank and
normalised "occurrence weight" columns, --max-context-tokens, context name
"Reports"). No model is built.

--ratings FILE turns on dynamic community selection with GraphRAG's
defaults (graphrag/config/defaults.py GlobalSearchDefaults: threshold 1,
keep_parent False, num_repeats 1, use_summary False, max_level 2) and one
rating call at a time. FILE is a JSON object {"<community number>":
rating}; the model is a fake that answers {"rating": N} with N the rating
FILE gives the community whose report is in the prompt (0 when FILE does
not name it), or "not json" for each --bad-rating COMMUNITY (GraphRAG then
keeps the report with rating 1).

--jobs reads one JSON object per stdin line, each naming a DIR and any
options ({"dir": ..., "community_level": 1, "max_context_tokens": 3000,
"ratings": {"3": 5}, "bad_rating": ["4"]}; ratings inline rather than in a
file), and prints one output object per line: one interpreter for many
runs, since importing GraphRAG takes seconds. Every job reads its DIR
afresh, so no state carries over from one to the next.

One change to GraphRAG, to make the oracle deterministic: its
DynamicCommunitySelection.select collects the selected communities in a
Python set, so their order before the shuffle depends on string hashing
(PYTHONHASHSEED). The script sorts the selected reports by community
number before build_community_context sees them, which is what kgrag does
before shuffling.

Tokens are counted with tiktoken --encoding (cl100k_base, kgrag's default);
TIKTOKEN_CACHE_DIR defaults to the venv's tiktoken-cache, filled offline by
scripts/graphrag-py.sh. LITELLM_LOCAL_MODEL_COST_MAP defaults to True, so
importing GraphRAG tries no download.
"""
import argparse
import asyncio
import json
import os
import sys
import time
from types import SimpleNamespace

os.environ.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(sys.prefix, "tiktoken-cache"))
# litellm (imported by graphrag_llm) fetches a model cost map from GitHub
# on import unless told to use its bundled copy; nothing here needs it.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pandas as pd  # noqa: E402
from graphrag.query import indexer_adapters as ia  # noqa: E402
from graphrag.query.context_builder import community_context  # noqa: E402
from graphrag.query.context_builder.rate_prompt import RATE_QUERY  # noqa: E402
from graphrag.query.structured_search.global_search.community_context import (  # noqa: E402
    GlobalCommunityContext,
)
from graphrag.tokenizer.get_tokenizer import get_tokenizer  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dir", nargs="?")
    p.add_argument("--jobs", action="store_true")
    # GraphRAG's defaults: graphrag/config/defaults.py GlobalSearchDefaults
    # (max_context_tokens) and the CLI's community level.
    p.add_argument("--community-level", type=int, default=2)
    p.add_argument("--max-context-tokens", type=int, default=12000)
    p.add_argument("--encoding", default="cl100k_base")
    p.add_argument("--query", default="What is this about?")
    p.add_argument("--ratings", metavar="FILE")
    p.add_argument("--bad-rating", metavar="COMMUNITY", action="append", default=[])
    return p.parse_args()


def read(d, name):
    path = os.path.join(d, name + ".parquet")
    try:
        return pd.read_parquet(path)
    except Exception as e:  # noqa: BLE001 - name the file, then fail
        sys.exit(f"graphrag_global: read {path}: {e}")


def read_ratings(path):
    if isinstance(path, dict):  # inline, from --jobs
        raw = path
        path = "job ratings"
    else:
        try:
            with open(path, encoding="utf-8") as f:
                raw = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit(f"graphrag_global: read ratings {path}: {e}")
    if not isinstance(raw, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in raw.values()
    ):
        sys.exit(f'graphrag_global: ratings {path}: want a JSON object {{"<community>": <int rating>}}')
    return {community_number(k, path): v for k, v in raw.items()}


def community_number(s, where):
    try:
        return str(int(s))
    except ValueError:
        sys.exit(f"graphrag_global: {where}: {s!r} is not a community number")


class FakeModel:
    """The smallest stand-in for graphrag_llm's LLMCompletion that
    rate_relevancy accepts: completion_async returns an object whose
    choices[0].message.content is the reply, all that
    graphrag_llm.utils.gather_completion_response_async reads."""

    def __init__(self, reports, query, ratings, bad):
        # rate_relevancy's system message is RATE_QUERY over the report's
        # full_content (use_summary False): map each message back to its
        # community exactly.
        self.community = {}
        for r in reports:
            msg = RATE_QUERY.format(description=r.full_content, question=query)
            if msg in self.community:
                sys.exit(f"graphrag_global: communities {self.community[msg]} and {r.short_id} have the same rating prompt")
            self.community[msg] = r.short_id
        self.ratings = ratings
        self.bad = bad
        self.rated = []

    async def completion_async(self, messages, **_kwargs):
        c = self.community.get(messages[0]["content"])
        if c is None:
            raise RuntimeError("graphrag_global: fake model: the prompt holds no known report")
        self.rated.append(c)
        reply = "not json" if c in self.bad else json.dumps({"rating": self.ratings.get(c, 0)})
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=reply))])


_convert = community_context._convert_report_context_to_df


def record_batches():
    """Wrap GraphRAG's _convert_report_context_to_df to keep each batch's
    records: build_community_context returns them concatenated, and every
    non-empty frame it converts becomes exactly one batch, in order."""
    frames = []
    convert = _convert

    def recording(*args, **kwargs):
        df = convert(*args, **kwargs)
        if len(df):
            frames.append(df)
        return df

    community_context._convert_report_context_to_df = recording
    return frames


def build(a):
    """Read DIR and make the context builder as GraphRAG's API and factory
    do; returns it with the tokenizer, with --ratings the fake model, and
    the seconds the adapters and the builder's construction took."""
    dynamic = a.ratings is not None
    communities = read(a.dir, "communities")
    community_reports = read(a.dir, "community_reports")
    entities = read(a.dir, "entities")
    # Older samples, written in 3.x layout by kgrag (graphrag.Write3x),
    # have no degree for the placeholder entities kgrag adds for
    # relationship ends it could not resolve; GraphRAG's reader refuses a
    # null degree. Global search never reads it.
    if "degree" in entities:
        entities["degree"] = entities["degree"].fillna(0)

    t0 = time.perf_counter()
    communities_ = ia.read_indexer_communities(communities, community_reports)
    reports = ia.read_indexer_reports(
        community_reports,
        communities,
        community_level=a.community_level,
        dynamic_community_selection=dynamic,
    )
    entities_ = ia.read_indexer_entities(entities, communities, community_level=a.community_level)
    adapt = time.perf_counter() - t0
    tok = get_tokenizer(encoding_model=a.encoding)

    kwargs = {}
    model = None
    if dynamic:
        bad = {community_number(c, "--bad-rating") for c in a.bad_rating}
        model = FakeModel(reports, a.query, read_ratings(a.ratings), bad)
        kwargs = {
            "model": model,
            "tokenizer": tok,
            "keep_parent": False,
            "num_repeats": 1,
            "use_summary": False,
            "concurrent_coroutines": 1,
            "threshold": 1,
            "max_level": 2,
            "model_params": {},
        }
    t0 = time.perf_counter()
    builder = GlobalCommunityContext(
        community_reports=reports,
        communities=communities_,
        entities=entities_,
        tokenizer=tok,
        dynamic_community_selection=dynamic,
        dynamic_community_selection_kwargs=kwargs,
    )
    adapt += time.perf_counter() - t0
    return builder, reports, tok, model, adapt


async def run(a, builder, reports, tok, model, adapt):
    """Run build_context as GlobalSearch does and return the output object."""
    dynamic = model is not None
    selected = []
    if dynamic:
        select = builder.dynamic_community_selection.select

        async def select_sorted(query):
            chosen, info = await select(query)
            chosen = sorted(chosen, key=lambda r: int(r.short_id))
            selected.extend(r.short_id for r in chosen)
            if list(info["ratings"]) != model.rated:
                raise RuntimeError(f"graphrag_global: GraphRAG rated {list(info['ratings'])}, the fake model saw {model.rated}")
            return chosen, info

        builder.dynamic_community_selection.select = select_sorted

    frames = record_batches()
    t0 = time.perf_counter()
    res = await builder.build_context(
        query=a.query,
        use_community_summary=False,
        shuffle_data=True,
        include_community_rank=True,
        min_community_rank=0,
        community_rank_name="rank",
        include_community_weight=True,
        community_weight_name="occurrence weight",
        normalize_community_weight=True,
        max_context_tokens=a.max_context_tokens,
        context_name="Reports",
    )
    secs = time.perf_counter() - t0

    texts = res.context_chunks
    if isinstance(texts, str):  # single_batch is False, so never; be loud if it changes
        raise RuntimeError("graphrag_global: build_context returned one text, not batches")
    if len(texts) != len(frames):
        raise RuntimeError(f"graphrag_global: {len(texts)} context texts but {len(frames)} record batches")
    out = {
        "batches": [
            {"ids": [str(x) for x in df["id"].tolist()], "text": text, "tokens": tok.num_tokens(text)}
            for df, text in zip(frames, texts, strict=True)
        ],
        "reports": len(reports),
        "seconds": secs,
        "adapt_seconds": adapt,
    }
    if dynamic:
        out["rated"] = model.rated
        out["selected"] = selected
    return out


def main():
    a = parse_args()
    if not a.jobs:
        if a.dir is None:
            sys.exit("graphrag_global: DIR is required (or --jobs)")
        jobs = [a]
    else:
        jobs = (job_args(line) for line in sys.stdin if line.strip())
    for j in jobs:
        # Reading and checking the input happen outside the event loop,
        # where sys.exit ends the script quietly (GraphRAG's nest_asyncio2
        # would print a traceback for it from inside a task).
        out = asyncio.run(run(j, *build(j)))
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        sys.stdout.flush()


def job_args(line):
    """One --jobs line as the options parse_args gives."""
    try:
        j = json.loads(line)
    except ValueError as e:
        sys.exit(f"graphrag_global: job {line[:80]!r}: {e}")
    return argparse.Namespace(
        dir=j["dir"],
        community_level=j.get("community_level", 2),
        max_context_tokens=j.get("max_context_tokens", 12000),
        encoding=j.get("encoding", "cl100k_base"),
        query=j.get("query", "What is this about?"),
        ratings=j.get("ratings"),
        bad_rating=[str(c) for c in j.get("bad_rating", [])],
    )


if __name__ == "__main__":
    main()
