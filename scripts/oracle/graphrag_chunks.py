#!/usr/bin/env python3
"""Microsoft GraphRAG's own input loaders, tokenizer and chunker: the
oracle kgrag's documents, tokens and chunks are compared with.

usage: graphrag_chunks.py < jobs.jsonl > answers.jsonl

Run it with the venv python of scripts/graphrag-py.sh. It reads one JSON
object per stdin line and prints one answer per line, in order: one
interpreter for many jobs, since importing GraphRAG takes seconds.

  {"op": "encode", "encoding": E, "texts": [...]}
      -> {"ids": [[...], ...]}      GraphRAG's tokenizer.encode of each
                                    text (get_tokenizer(encoding_model=E))
  {"op": "decode", "encoding": E, "ids": [[...], ...]}
      -> {"texts": [...]}           tokenizer.decode of each id list
  {"op": "replace", "hex": ["e282", ...]}
      -> {"texts": [...]}           bytes.fromhex(h).decode("utf-8",
                                    errors="replace"), which tiktoken's
                                    decode does
  {"op": "chunk", "encoding": E, "size": N, "overlap": M,
   "prepend_metadata": [...] or null, "documents": [{"id", "title",
   "text", "creation_date", "raw_data"}, ...]}
      -> {"text_units": [{"id", "human_readable_id", "document_id",
                          "text", "n_tokens"}, ...]}
  {"op": "load", "dir": D, "type": "text" | "csv", "file_pattern": P,
   "text_column": C, "title_column": T}  (all but op and dir optional)
      -> {"documents": [{"id", "human_readable_id", "title", "text",
                         "creation_date", "raw_data"}, ...]}

chunk runs GraphRAG 3.3.0's create_base_text_units workflow function
(graphrag/index/workflows/create_base_text_units.py) with the tokenizer and
chunker its run_workflow builds from a ChunkingConfig (type tokens), on
in-memory tables, then create_final_text_units with no entities or
relationships for human_readable_id. load runs the input reader
(graphrag_input, create_input_reader on a FileStorage of D) through the
load_input_documents workflow function. A job that raises answers
{"error": "..."}.

TIKTOKEN_CACHE_DIR defaults to the venv's tiktoken-cache, filled offline by
scripts/graphrag-py.sh. LITELLM_LOCAL_MODEL_COST_MAP defaults to True, so
importing GraphRAG tries no download.
"""
import asyncio
import json
import os
import sys

os.environ.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(sys.prefix, "tiktoken-cache"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from graphrag_chunking.chunker_factory import create_chunker  # noqa: E402
from graphrag_chunking.chunking_config import ChunkingConfig  # noqa: E402
from graphrag_input import create_input_reader  # noqa: E402
from graphrag_input.input_config import InputConfig  # noqa: E402
from graphrag_storage.file_storage import FileStorage  # noqa: E402

from graphrag.callbacks.noop_workflow_callbacks import NoopWorkflowCallbacks  # noqa: E402
from graphrag.index.workflows.create_base_text_units import (  # noqa: E402
    create_base_text_units,
)
from graphrag.index.workflows.create_final_text_units import (  # noqa: E402
    create_final_text_units,
)
from graphrag.index.workflows.load_input_documents import load_input_documents  # noqa: E402
from graphrag.tokenizer.get_tokenizer import get_tokenizer  # noqa: E402


class MemTable:
    """The part of graphrag_storage's Table the workflows use: async
    iteration over rows and write."""

    def __init__(self, rows=None):
        self.rows = list(rows or [])

    def __aiter__(self):
        async def gen():
            for r in list(self.rows):
                yield dict(r)

        return gen()

    async def write(self, row):
        self.rows.append(row)

    async def length(self):
        return len(self.rows)


async def chunk(job):
    enc = job["encoding"]
    tokenizer = get_tokenizer(encoding_model=enc)
    cfg = ChunkingConfig(size=job["size"], overlap=job["overlap"], encoding_model=enc,
                         prepend_metadata=job.get("prepend_metadata"))
    chunker = create_chunker(cfg, tokenizer.encode, tokenizer.decode)
    docs = MemTable(job["documents"])
    units = MemTable()
    await create_base_text_units(docs, units, len(docs.rows), NoopWorkflowCallbacks(),
                                 tokenizer=tokenizer, chunker=chunker,
                                 prepend_metadata=cfg.prepend_metadata)
    final = MemTable()
    await create_final_text_units(units, MemTable(), MemTable(), final, None)
    return {"text_units": [
        {k: r[k] for k in ("id", "human_readable_id", "document_id", "text", "n_tokens")}
        for r in final.rows]}


async def load(job):
    cfg = {"type": job.get("type", "text")}
    for k in ("file_pattern", "text_column", "title_column"):
        if job.get(k):
            cfg[k] = job[k]
    reader = create_input_reader(InputConfig(**cfg), FileStorage(base_dir=job["dir"]))
    docs = MemTable()
    await load_input_documents(reader, docs)
    return {"documents": [
        {k: r.get(k) for k in ("id", "human_readable_id", "title", "text", "creation_date", "raw_data")}
        for r in docs.rows]}


def run(job):
    op = job["op"]
    if op == "encode":
        tok = get_tokenizer(encoding_model=job["encoding"])
        return {"ids": [tok.encode(t) for t in job["texts"]]}
    if op == "decode":
        tok = get_tokenizer(encoding_model=job["encoding"])
        return {"texts": [tok.decode(ids) for ids in job["ids"]]}
    if op == "replace":
        return {"texts": [bytes.fromhex(h).decode("utf-8", errors="replace") for h in job["hex"]]}
    if op == "chunk":
        return asyncio.run(chunk(job))
    if op == "load":
        return asyncio.run(load(job))
    raise ValueError(f"unknown op {op!r}")


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            out = run(json.loads(line))
        except Exception as e:  # noqa: BLE001 (the answer carries it)
            out = {"error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
