#!/usr/bin/env python3
"""Microsoft GraphRAG's own basic and DRIFT search, run with a scripted
model: the oracle kgrag's internal/basicsearch and internal/driftsearch are
compared with.

usage: graphrag_search.py < jobs.jsonl > answers.jsonl

Run it with the venv python of scripts/graphrag-py.sh. Each stdin line is
one JSON job; each stdout line answers it.

A job {"kind": "basic", "dir": D, "hits": [text unit id, ...],
"max_context_tokens": N, "encoding": E} runs GraphRAG's BasicSearchContext
.build_context on the 2.x/3.x output D (text units read with
read_indexer_text_units), its vector store replaced by one that returns
the given hits, nearest first (the text units kgrag's index found). It
answers {"ids": [text unit ids printed, in order], "short_ids": [...],
"text": context_chunks}.

A job {"kind": "drift", "dir": D, "question": Q, "level": L, "template":
community, "embed_url": URL, "embed_model": M, "encoding": E} runs
GraphRAG's DRIFTSearch.search (primer, follow-up local searches, reduce)
with GraphRAG's DRIFT defaults (DRIFTSearchConfig()) on D read as
graphrag.api.drift_search reads it, with:
  - a scripted chat model (Scripted below). kgrag's test gives its own
    calls the same replies, so both searches meet the same answers;
  - embeddings from URL (POST /embeddings, model M): kgrag's test server,
    which embeds deterministically, so both sides embed alike. Entities
    are embedded as "title:description" (every row of the table) and
    reports by full content, as kgrag embed does; the entity store ranks
    by cosine, ties by id;
    With "visible_only": true the store holds only the entities
    read_indexer_entities keeps (those in a community up to the level);
  - GraphRAG's two random draws fixed: the report the expansion imitates
    (secrets.choice) is `template`, the one kgrag chose, and the open
    follow-ups are not shuffled (random.shuffle), which is kgrag's order.
It answers {"primed": [report ids, nearest first], "folds": [[ids], ...],
"actions": [{"query", "answered", "answer", "context": {table: [ids]}}],
"reduce": [answers the reduce call read], "calls": {kind: count}}.
"""
import asyncio
import json
import os
import sys
import urllib.request

os.environ.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(sys.prefix, "tiktoken-cache"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from graphrag.config.models.drift_search_config import DRIFTSearchConfig  # noqa: E402
from graphrag.query import indexer_adapters as ia  # noqa: E402
from graphrag.query.structured_search.basic_search.basic_context import BasicSearchContext  # noqa: E402
from graphrag.query.structured_search.drift_search import primer as drift_primer  # noqa: E402
from graphrag.query.structured_search.drift_search import state as drift_state  # noqa: E402
from graphrag.query.structured_search.drift_search.drift_context import DRIFTSearchContextBuilder  # noqa: E402
from graphrag.query.structured_search.drift_search.search import DRIFTSearch  # noqa: E402
from graphrag.tokenizer.get_tokenizer import get_tokenizer  # noqa: E402
from graphrag_vectors.vector_store import VectorStoreDocument, VectorStoreSearchResult  # noqa: E402

TABLES = ("reports", "entities", "relationships", "sources")


def read(d, name):
    path = os.path.join(d, name + ".parquet")
    try:
        df = pd.read_parquet(path)
    except Exception as e:  # noqa: BLE001 - name the file, then fail
        sys.exit(f"graphrag_search: read {path}: {e}")
    # GraphRAG 3.x's text unit reader wants document_id, which 2.x wrote
    # as the list document_ids; no search reads it.
    if name == "text_units" and "document_id" not in df and "document_ids" in df:
        df["document_id"] = [ids[0] if len(ids) else None for ids in df["document_ids"]]
    return df


class Hits:
    """A vector store that returns fixed hits (basic search)."""

    def __init__(self, ids):
        self.ids = ids

    def similarity_search_by_text(self, text, text_embedder, k=10, **kwargs):
        return [VectorStoreSearchResult(document=VectorStoreDocument(id=i, vector=None), score=1.0) for i in self.ids[:k]]


def basic(job):
    units = ia.read_indexer_text_units(read(job["dir"], "text_units"))
    b = BasicSearchContext(text_embedder=None, text_unit_embeddings=Hits(job["hits"]), text_units=units,
                           tokenizer=get_tokenizer(encoding_model=job.get("encoding", "cl100k_base")))
    res = b.build_context(query="kgrag oracle", k=len(job["hits"]), max_context_tokens=job["max_context_tokens"])
    df = res.context_records["sources"]
    by_short = {u.short_id: u.id for u in units}
    short = [str(x) for x in df["id"].tolist()] if "id" in df else []
    return {"ids": [by_short[s] for s in short], "short_ids": short, "text": res.context_chunks}


class Embedder:
    """GraphRAG's embedding interface over kgrag's test server."""

    def __init__(self, url, model):
        self.url, self.model, self.cache = url.rstrip("/") + "/embeddings", model, {}

    def embed(self, texts):
        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        for lo in range(0, len(todo), 64):
            batch = todo[lo:lo + 64]
            body = json.dumps({"model": self.model, "input": batch}).encode()
            req = urllib.request.Request(self.url, body, {"Content-Type": "application/json"})
            with urllib.request.urlopen(req) as r:
                data = json.load(r)["data"]
            for d in data:
                self.cache[batch[d["index"]]] = d["embedding"]
        return [self.cache[t] for t in texts]

    def embedding(self, input):  # noqa: A002 - GraphRAG's keyword
        vecs = self.embed(input)

        class Response:
            first_embedding = vecs[0]
            embeddings = vecs

        return Response()


class EntityStore:
    """An entity vector store ranking by cosine, ties by id (kgrag's flat index)."""

    def __init__(self, ids, vecs):
        m = np.asarray(vecs, dtype=np.float64)
        self.ids = ids
        self.m = m / np.linalg.norm(m, axis=1, keepdims=True)

    def similarity_search_by_text(self, text, text_embedder, k=10, **kwargs):
        q = np.asarray(text_embedder(text), dtype=np.float64)
        s = self.m @ (q / np.linalg.norm(q))
        order = sorted(range(len(self.ids)), key=lambda i: (-s[i], self.ids[i]))[:k]
        return [VectorStoreSearchResult(document=VectorStoreDocument(id=self.ids[i], vector=None), score=float(s[i])) for i in order]


def first_ids(context):
    """The first entity title and the first source id of a local context's
    tables ("" when a table is empty or absent)."""
    out = []
    for table in ("Entities", "Sources"):
        _, _, rest = context.partition("-----" + table + "-----\n")
        rows = rest.split("\n")[1:2]
        fields = rows[0].split("|") if rows and rows[0].strip() and not rows[0].startswith("-----") else []
        out.append(fields[1 if table == "Entities" else 0] if len(fields) > 1 else "")
    return out


def local_reply(query, context):
    """The scripted follow-up reply (kgrag's test writes the same): one
    follow-up about the first entity, one about the first passage."""
    entity, source = first_ids(context)
    follow = []
    if entity:
        follow.append(f"Tell me more about {entity}.")
    if source:
        follow.append(f"What else happens around passage {source}?")
    return json.dumps({"response": "Answer to: " + query, "score": 50, "follow_up_queries": follow})


def primer_reply(prompt, reports):
    """The scripted primer reply: the reports found in the prompt, by number."""
    found = sorted((r for r in reports if r.full_content and r.full_content in prompt), key=lambda r: int(r.short_id))
    ids = [str(r.short_id) for r in found]
    return {"intermediate_answer": "Primer over reports " + ",".join(ids), "score": 40 + len(ids),
            "follow_up_queries": [f"What is said about {r.title}?" for r in found]}


class Scripted:
    """GraphRAG's completion interface, answering as kgrag's test does."""

    def __init__(self, question, reports, tokenizer):
        self.question, self.reports, self.tokenizer = question, reports, tokenizer
        self.calls = {"expand": 0, "primer": 0, "local": 0, "reduce": 0}
        self.reduce_context = None

    async def completion_async(self, messages, stream=False, response_format=None, **kwargs):
        if isinstance(messages, str) and response_format is None:
            self.calls["expand"] += 1
            return Whole("Hypothetical: " + self.question)
        if isinstance(messages, str):
            self.calls["primer"] += 1
            return Whole(json.dumps(primer_reply(messages, self.reports)), response_format)
        system = messages[0]["content"]
        user = messages[-1]["content"]
        if kwargs.get("response_format_json_object"):
            self.calls["local"] += 1
            return stream_of(local_reply(user, system))
        self.calls["reduce"] += 1
        self.reduce_context = system
        return stream_of("Final answer.") if stream else Whole("Final answer.")


class Whole:
    def __init__(self, content, fmt=None):
        self.content = content
        self.formatted_response = fmt.model_validate_json(content) if fmt else None

        class Message:
            pass

        class Choice:
            pass

        m, c = Message(), Choice()
        m.content = content
        c.message = m
        self.choices = [c]


async def stream_of(text):
    class Delta:
        content = text

    class Choice:
        delta = Delta()

    class Chunk:
        choices = [Choice()]

    yield Chunk()


def drift(job):
    d, level = job["dir"], job["level"]
    tok = get_tokenizer(encoding_model=job.get("encoding", "cl100k_base"))
    communities = read(d, "communities")
    entities = ia.read_indexer_entities(read(d, "entities"), communities, level)
    reports = ia.read_indexer_reports(read(d, "community_reports"), communities, level)
    emb = Embedder(job["embed_url"], job["embed_model"])
    for r, v in zip(reports, emb.embed([r.full_content for r in reports])):
        r.full_content_embedding = v
    # The store holds every entity, as GraphRAG's embedding of the
    # entities table does; map_query_to_entities skips those that
    # read_indexer_entities left out (in no community up to the level).
    raw = read(d, "entities")
    ids = [str(i) for i in raw["id"]]
    texts = [f"{t}:{x if isinstance(x, str) else ''}" for t, x in zip(raw["title"], raw["description"])]
    if job.get("visible_only"):
        # What kgrag's test removes as a cause of difference: a store of
        # the entities read_indexer_entities keeps.
        keep = {e.id for e in entities}
        ids, texts = [i for i in ids if i in keep], [x for i, x in zip(ids, texts) if i in keep]
    store = EntityStore(ids, emb.embed(texts))
    model = Scripted(job["question"], reports, tok)

    template = [r for r in reports if str(r.short_id) == str(job["template"])]
    if not template:
        sys.exit(f"graphrag_search: no report {job['template']} up to level {level}")
    drift_primer.secrets.choice = lambda seq: template[0]
    drift_state.random.shuffle = lambda seq: None

    builder = DRIFTSearchContextBuilder(
        model=model, config=DRIFTSearchConfig(), text_embedder=emb, entities=entities,
        entity_text_embeddings=store, text_units=ia.read_indexer_text_units(read(d, "text_units")),
        reports=reports, relationships=ia.read_indexer_relationships(read(d, "relationships")),
        tokenizer=tok, response_type="multiple paragraphs")
    search = DRIFTSearch(model=model, context_builder=builder, tokenizer=tok)

    primed = []
    build_context = builder.build_context

    async def recording(query, **kwargs):
        top, ct = await build_context(query, **kwargs)
        primed.extend(str(x) for x in top["short_id"].tolist())
        return top, ct

    builder.build_context = recording
    asyncio.run(search.search(job["question"]))
    folds = [[primed[i] for i in f] for f in np.array_split(np.arange(len(primed)), search.primer.config.primer_folds)]
    actions = []
    for node in search.query_state.graph.nodes:
        ctx = node.metadata.get("context_data") or {}
        actions.append({"query": node.query, "answered": node.answer is not None, "answer": node.answer,
                        "context": {t: ([str(x) for x in ctx[t]["id"].tolist()] if t in ctx and "id" in ctx[t] else [])
                                    for t in TABLES} if ctx else None})
    nodes, _, _ = search.query_state.serialize(include_context=True)
    reduce = [n["answer"] for n in nodes["nodes"] if n.get("answer")]
    return {"primed": primed, "folds": [f for f in folds if f], "actions": actions, "reduce": reduce, "calls": model.calls}


def main():
    for n, line in enumerate(sys.stdin, 1):
        if not line.strip():
            continue
        try:
            job = json.loads(line)
        except ValueError as e:
            sys.exit(f"graphrag_search: stdin line {n}: {e}")
        out = basic(job) if job.get("kind") == "basic" else drift(job)
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
