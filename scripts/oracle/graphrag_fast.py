"""GraphRAG 3.3.0's fast indexing method (PyPI graphrag), as an oracle for
kgrag index --method fast. Reads one JSON job per line on stdin and writes
one JSON answer per line on stdout (internal/test.PythonJSONL).

Jobs:
  {"op": "phrases", "extractor": "syntactic_parser" | "cfg" | "regex_english",
   "model": "<spaCy model folder or name>", "units": [{"id": ..., "text": ...}]}
      -> {"units": [{"id": ..., "phrases": [...sorted]}], "seconds": s}
     GraphRAG's own noun-phrase extractor, built by its factory from a
     TextAnalyzerConfig with its defaults but for the extractor type and
     the model. regex_english needs NLTK's corpora (brown, treebank,
     punkt, averaged_perceptron_tagger_eng), which no package registry
     serves: the answer is then {"error": "..."} saying what is missing,
     and nothing is downloaded (nltk.download is refused).
  {"op": "graph", "units": [{"id": ..., "phrases": [...]}]}
      -> {"nodes": [{"title", "frequency", "text_unit_ids"}],
          "edges": [{"source", "target", "weight", "text_unit_ids"}],
          "pruned_entities": [...titles], "pruned_edges": [{"source", "target", "weight"}]}
     GraphRAG's build_noun_graph after the extractor (_extract_edges with
     PMI weights, normalize_edge_weights's default) on the phrases given,
     then its prune_graph operation with PruneGraphConfig's defaults.
  {"op": "time", "extractor": ..., "model": ..., "dir": "<output folder>"}
      -> {"units": n, "extract_seconds": s, "graph_seconds": s, "load_seconds": s}
     GraphRAG's fast graph on the text units of an output folder
     (text_units.parquet), timed: the extractor's model load, extract on
     every unit one after the other (as build_noun_graph runs it, without
     its cache), then _extract_edges with PMI and prune_graph.
"""

import asyncio
import json
import logging
import sys
import time
from collections import defaultdict

logging.disable(logging.WARNING)

import pandas as pd  # noqa: E402
import nltk  # noqa: E402

from graphrag.config.models.extract_graph_nlp_config import TextAnalyzerConfig  # noqa: E402
from graphrag.config.models.prune_graph_config import PruneGraphConfig  # noqa: E402
from graphrag.index.operations.build_noun_graph import build_noun_graph as bng  # noqa: E402
from graphrag.index.operations.build_noun_graph.np_extractors.factory import (  # noqa: E402
    create_noun_phrase_extractor,
)
from graphrag.index.operations.prune_graph import prune_graph  # noqa: E402


def _no_download(*args, **kwargs):
    raise RuntimeError(f"nltk.download{args} refused: no package registry serves NLTK's data")


nltk.download = _no_download

_extractors = {}


def extractor(kind, model):
    key = (kind, model)
    if key not in _extractors:
        cfg = TextAnalyzerConfig(extractor_type=kind, model_name=model)
        _extractors[key] = create_noun_phrase_extractor(cfg)
    return _extractors[key]


def phrases(job):
    try:
        x = extractor(job["extractor"], job.get("model") or "en_core_web_md")
    except Exception as e:  # noqa: BLE001
        return {"error": f"{type(e).__name__}: {e}"}
    start = time.perf_counter()
    out = [{"id": u["id"], "phrases": sorted(x.extract(u["text"]))} for u in job["units"]]
    return {"units": out, "seconds": time.perf_counter() - start}


def graph(job):
    title_to_ids = defaultdict(list)
    for u in job["units"]:
        for p in u["phrases"]:
            title_to_ids[p].append(u["id"])
    title_to_ids = dict(title_to_ids)
    nodes = pd.DataFrame(
        [{"title": t, "frequency": len(ids), "text_unit_ids": ids} for t, ids in title_to_ids.items()],
        columns=["title", "frequency", "text_unit_ids"],
    )
    edges = bng._extract_edges(title_to_ids, nodes_df=nodes, normalize_edge_weights=True)
    c = PruneGraphConfig()
    pe, pr = prune_graph(
        nodes.copy(), edges.copy(),
        min_node_freq=c.min_node_freq, max_node_freq_std=c.max_node_freq_std,
        min_node_degree=c.min_node_degree, max_node_degree_std=c.max_node_degree_std,
        min_edge_weight_pct=c.min_edge_weight_pct, remove_ego_nodes=c.remove_ego_nodes,
        lcc_only=c.lcc_only,
    )
    return {
        "nodes": [{"title": r.title, "frequency": int(r.frequency), "text_unit_ids": list(r.text_unit_ids)}
                  for r in nodes.itertuples()],
        "edges": [{"source": r.source, "target": r.target, "weight": float(r.weight),
                   "text_unit_ids": list(r.text_unit_ids)} for r in edges.itertuples()],
        "pruned_entities": list(pe["title"]),
        "pruned_edges": [{"source": r.source, "target": r.target, "weight": float(r.weight)}
                         for r in pr.itertuples()],
    }


def timed(job):
    import os
    units = pd.read_parquet(os.path.join(job["dir"], "text_units.parquet"))
    t0 = time.perf_counter()
    try:
        x = extractor(job["extractor"], job.get("model") or "en_core_web_md")
    except Exception as e:  # noqa: BLE001
        return {"error": f"{type(e).__name__}: {e}"}
    t1 = time.perf_counter()
    found = [{"id": i, "phrases": x.extract(t)} for i, t in zip(units["id"], units["text"])]
    t2 = time.perf_counter()
    graph({"units": found})
    t3 = time.perf_counter()
    return {"units": len(found), "load_seconds": t1 - t0, "extract_seconds": t2 - t1, "graph_seconds": t3 - t2}


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        ans = {"phrases": phrases, "graph": graph, "time": timed}[job["op"]](job)
        sys.stdout.write(json.dumps(ans) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
