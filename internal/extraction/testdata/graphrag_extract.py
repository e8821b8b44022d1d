"""GraphRAG 3.3.0's own extraction conversations with a fake model, for
internal/extraction's tests.

Reads jobs from stdin, one JSON object a line:

    {"kind": "graph" or "claims",
     "prompt": the first prompt as a str.format template with {input_text},
     "continue": the continue prompt, "loop": the loop prompt,
     "text": the text unit's text, "max_gleanings": n,
     "entity_types": [...]                     (graph),
     "entity_spec": "...", "claim_description": "..."   (claims),
     "replies": the fake model's replies, in call order}

and writes one JSON object a line per job:

    calls: the messages of every model call, in order, as
        [[{"role": ..., "content": ...}, ...], ...];
    replies_used: how many replies the model gave;
    entities, relationships (graph): what GraphRAG's _process_result read
        from its concatenation of the replies;
    claims (claims): what ClaimExtractor kept.

The graph runs through extract_graph._run_extract_graph (which strips the
text and makes a GraphExtractor), the claims through
extract_covariates.run_extract_claims, as GraphRAG's workflows call them.
The prompts are kgrag's, not GraphRAG's: the continue and loop prompts
replace the module constants the extractors read, so only the structure of
the conversation is GraphRAG's. A model that runs out of replies answers
"" (GraphRAG would go on with it).
"""

import asyncio
import json
import logging
import math
import os
import sys
import types

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
logging.disable(logging.WARNING)

from graphrag.index.operations.extract_covariates import claim_extractor  # noqa: E402
from graphrag.index.operations.extract_covariates.extract_covariates import run_extract_claims  # noqa: E402
from graphrag.index.operations.extract_graph import extract_graph, graph_extractor  # noqa: E402


class FakeModel:
    """Answers completion_async from a list, recording the messages."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.calls = []
        self.used = 0

    async def completion_async(self, messages, **kwargs):
        # The builder's list grows after the call: copy it now.
        self.calls.append([{"role": m["role"], "content": m["content"]} for m in messages])
        reply = ""
        if self.used < len(self.replies):
            reply = self.replies[self.used]
            self.used += 1
        return types.SimpleNamespace(content=reply)


async def run(job):
    model = FakeModel(job["replies"])
    out = {}
    if job["kind"] == "graph":
        graph_extractor.CONTINUE_PROMPT = job["continue"]
        graph_extractor.LOOP_PROMPT = job["loop"]
        ents, rels = await extract_graph._run_extract_graph(
            text=job["text"],
            source_id="unit",
            entity_types=job["entity_types"],
            model=model,
            prompt=job["prompt"],
            max_gleanings=job["max_gleanings"],
        )
        out["entities"] = [
            {"title": e.title, "type": e.type, "description": e.description} for e in ents.itertuples()
        ]
        out["relationships"] = [
            {"source": r.source, "target": r.target, "description": r.description,
             "weight": r.weight if math.isfinite(r.weight) else None}
            for r in rels.itertuples()
        ]
    else:
        claim_extractor.CONTINUE_PROMPT = job["continue"]
        claim_extractor.LOOP_PROMPT = job["loop"]
        res = await run_extract_claims(
            input=job["text"],
            entity_types=job["entity_spec"],
            resolved_entities_map={},
            model=model,
            max_gleanings=job["max_gleanings"],
            claim_description=job["claim_description"],
            prompt=job["prompt"],
        )
        out["claims"] = [
            {"subject": c.subject_id, "object": c.object_id, "type": c.type, "description": c.description}
            for c in res.covariate_data
        ]
    out["calls"] = model.calls
    out["replies_used"] = model.used
    return out


def main():
    for line in sys.stdin:
        print(json.dumps(asyncio.run(run(json.loads(line)))), flush=True)


if __name__ == "__main__":
    main()
