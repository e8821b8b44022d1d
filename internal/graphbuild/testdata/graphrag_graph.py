"""GraphRAG 3.3.0's own merge, description summaries and finalize_graph on
extraction records, for internal/graphbuild's tests.

Reads jobs from stdin, one JSON object a line:

    {"extractions": [{"text_unit_id": ..., "entities": [{"title", "type",
      "description"}], "relationships": [{"source", "target", "description",
      "weight"}]}],
     "summarize": {"budget": B, "max_length": M, "encoding": "o200k_base"}
                  or null}

and writes one JSON object a line per job:

    merged_entities, merged_relationships: GraphRAG's extract_graph tables
        before summaries (description lists), after the orphan filter;
    orphans: relationships filter_orphan_relationships dropped;
    with "summarize":
    calls: every summary call, in order: {"key": ["e", title] or
        ["r", source, target], "occurrence": n-th item with that key,
        "descriptions": [...]};
    entities, relationships: finalize_graph's rows (ids left out);
    with "uuid5": [names]:
    uuid5: uuid.uuid5(the kgrag namespace, name) of each.

A job {"read_dir": DIR} reads DIR's entities, communities and
relationships parquet files with pandas and GraphRAG's query-side
adapters (read_indexer_entities, read_indexer_relationships) and answers
{"read": {"entities": [...], "relationships": [...]}} with the fields of
the model objects they return.

Each text unit's records become a DataFrame exactly as GraphExtractor's
_process_result builds them (an empty frame of its own when there are
none), and go through _merge_entities, _merge_relationships,
filter_orphan_relationships, get_summarized_entities_relationships (the
extract_graph workflow's summary step, with a fake model) and
finalize_graph (over in-memory tables). The fake model answers with
summary(), which the Go test computes the same way; its tokenizer is
graphrag_llm's TiktokenTokenizer. The prompt is not GraphRAG's (the Go
side uses kgrag's): only its token count matters, so max_input_tokens is
the budget B for descriptions plus that count, as the Go side sets it.

TIKTOKEN_CACHE_DIR defaults to the venv's tiktoken-cache, filled offline by
scripts/graphrag-py.sh.
"""

import asyncio
import contextvars
import hashlib
import json
import logging
import os
import sys
import types
import uuid

os.environ.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(sys.prefix, "tiktoken-cache"))
logging.disable(logging.WARNING)

import pandas as pd  # noqa: E402
from graphrag.callbacks.noop_workflow_callbacks import NoopWorkflowCallbacks  # noqa: E402
from graphrag.index.operations.extract_graph import extract_graph as eg  # noqa: E402
from graphrag.index.operations.extract_graph.graph_extractor import (  # noqa: E402
    _empty_entities_df,
    _empty_relationships_df,
)
from graphrag.index.operations.extract_graph.utils import filter_orphan_relationships  # noqa: E402
from graphrag.index.operations.summarize_descriptions import (  # noqa: E402
    summarize_descriptions as sd,
)
from graphrag.index.workflows import extract_graph as wf  # noqa: E402
from graphrag.index.workflows.finalize_graph import finalize_graph  # noqa: E402
from graphrag_llm.tokenizer.tiktoken_tokenizer import TiktokenTokenizer  # noqa: E402

# uuid5(NAMESPACE_URL, "https://github.com/kgrag/kgrag/graphbuild")
KGRAG_NS = uuid.UUID("0789e9f7-091e-51f2-813b-9a5b190f25de")
PROMPT = "{entity_name}\n{description_list}\n{max_length}"

current = contextvars.ContextVar("current")


def summary(descriptions):
    """The fake model's reply: a hash of the descriptions and their first words."""
    h = hashlib.sha256("\n".join(descriptions).encode()).hexdigest()[:8]
    firsts = [d.split()[0] if d.split() else "" for d in descriptions]
    return "S" + h + " " + " ".join(firsts)


class FakeModel:
    def __init__(self, encoding, calls):
        self.tokenizer = TiktokenTokenizer(encoding_name=encoding)
        self.calls = calls

    async def completion_async(self, messages):
        _, listed, _ = messages.split("\n")
        descriptions = json.loads(listed)
        key, occurrence = current.get()
        self.calls.append({"key": key, "occurrence": occurrence, "descriptions": descriptions})
        return types.SimpleNamespace(content=summary(descriptions))


def track(original):
    """Wraps run_summarize_descriptions to tell the fake model which item it serves."""
    seen = {}

    async def run(id, descriptions, *args, **kwargs):
        key = ["r", id[0], id[1]] if isinstance(id, tuple) else ["e", id]
        k = json.dumps(key)
        current.set((key, seen.get(k, 0)))
        seen[k] = seen.get(k, 0) + 1
        return await original(id, descriptions, *args, **kwargs)

    run.seen = seen
    return run


class MemTable:
    """The part of graphrag_storage's Table that finalize_graph uses."""

    def __init__(self, rows):
        self.rows = rows
        self.out = []

    def __aiter__(self):
        return self._rows()

    async def _rows(self):
        for r in self.rows:
            yield dict(r)

    async def write(self, row):
        self.out.append(row)


def plain(v):
    if hasattr(v, "tolist"):
        return v.tolist()
    if hasattr(v, "item"):
        return v.item()
    raise TypeError(type(v))


def frames(extractions):
    entity_dfs, relationship_dfs = [], []
    for x in extractions:
        tu = x["text_unit_id"]
        ents = [{"title": e["title"], "type": e["type"], "description": e["description"], "source_id": tu}
                for e in x["entities"]]
        rels = [{"source": r["source"], "target": r["target"], "description": r["description"],
                 "source_id": tu, "weight": float(r["weight"])} for r in x["relationships"]]
        entity_dfs.append(pd.DataFrame(ents) if ents else _empty_entities_df())
        relationship_dfs.append(pd.DataFrame(rels) if rels else _empty_relationships_df())
    return entity_dfs, relationship_dfs


def read(d):
    from graphrag.query.indexer_adapters import read_indexer_entities, read_indexer_relationships

    entities = pd.read_parquet(os.path.join(d, "entities.parquet"))
    communities = pd.read_parquet(os.path.join(d, "communities.parquet"))
    relationships = pd.read_parquet(os.path.join(d, "relationships.parquet"))
    ents = read_indexer_entities(entities, communities, None)
    rels = read_indexer_relationships(relationships)
    return {
        "entities": [{"id": e.id, "short_id": e.short_id, "title": e.title, "type": e.type,
                      "description": e.description, "rank": e.rank,
                      "text_unit_ids": list(e.text_unit_ids or [])} for e in ents],
        "relationships": [{"id": r.id, "short_id": r.short_id, "source": r.source, "target": r.target,
                           "description": r.description, "weight": r.weight, "rank": r.rank,
                           "text_unit_ids": list(r.text_unit_ids or [])} for r in rels],
    }


async def run(job):
    if "read_dir" in job:
        return {"read": read(job["read_dir"])}
    entity_dfs, relationship_dfs = frames(job["extractions"])
    entities = eg._merge_entities(entity_dfs)
    relationships = eg._merge_relationships(relationship_dfs)
    before = len(relationships)
    relationships = filter_orphan_relationships(relationships, entities)
    cols_e = ["title", "type", "description", "text_unit_ids", "frequency"]
    cols_r = ["source", "target", "description", "text_unit_ids", "weight"]
    out = {
        "merged_entities": [{c: r[c] for c in cols_e} for r in entities.to_dict("records")],
        "merged_relationships": [{c: r[c] for c in cols_r} for r in relationships.to_dict("records")],
        "orphans": before - len(relationships),
    }
    if "uuid5" in job:
        out["uuid5"] = [str(uuid.uuid5(KGRAG_NS, n)) for n in job["uuid5"]]
    s = job.get("summarize")
    if s:
        calls = []
        sd.run_summarize_descriptions.seen.clear()
        model = FakeModel(s["encoding"], calls)
        summarized_e, summarized_r = await wf.get_summarized_entities_relationships(
            extracted_entities=entities.copy(),
            extracted_relationships=relationships.copy(),
            callbacks=NoopWorkflowCallbacks(),
            model=model,
            max_summary_length=s["max_length"],
            max_input_tokens=s["budget"] + model.tokenizer.num_tokens(PROMPT),
            summarization_prompt=PROMPT,
            num_threads=4,
        )
        et = MemTable(summarized_e.to_dict("records"))
        rt = MemTable(summarized_r.to_dict("records"))
        await finalize_graph(et, rt)
        out["calls"] = calls
        out["entities"] = [{k: v for k, v in r.items() if k != "id"} for r in et.out]
        out["relationships"] = [{k: v for k, v in r.items() if k != "id"} for r in rt.out]
    return out


def main():
    sd.run_summarize_descriptions = track(sd.run_summarize_descriptions)
    for line in sys.stdin:
        if line.strip():
            res = asyncio.run(run(json.loads(line)))
            sys.stdout.write(json.dumps(res, default=plain) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
