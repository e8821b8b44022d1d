#!/usr/bin/env python3
"""Ask kgrag serve through the OpenAI Python library (PyPI openai), as any
script or chat UI built on it does; print what the library saw as JSON.

usage: openai_client.py --base-url URL [--api-key KEY] --model M QUESTION...

For each question: a plain completion and a streamed one (with usage).
Output, one JSON object:
  models      the ids client.models.list() gave
  answers     per question: {"answer", "usage", "finish_reason", "kgrag"
              (the extra field, read from the raw response), "stream",
              "stream_chunks", "stream_usage", "error" (type and status of
              an exception the library raised, or null)}
"""
import argparse
import json
import sys

import openai


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--base-url", required=True)
    p.add_argument("--api-key", default="none")
    p.add_argument("--model", required=True)
    p.add_argument("questions", nargs="+")
    a = p.parse_args()
    client = openai.OpenAI(base_url=a.base_url, api_key=a.api_key, max_retries=0, timeout=60)
    out = {"models": [], "answers": []}
    try:
        out["models"] = [m.id for m in client.models.list()]
    except openai.APIError as e:
        out["models_error"] = error(e)
    for q in a.questions:
        r = {"question": q, "error": None}
        msgs = [{"role": "user", "content": q}]
        try:
            c = client.chat.completions.create(model=a.model, messages=msgs)
            r["answer"] = c.choices[0].message.content
            r["finish_reason"] = c.choices[0].finish_reason
            r["usage"] = c.usage.model_dump() if c.usage else None
            extra = c.model_extra or {}
            r["kgrag"] = extra.get("kgrag")
            r["citations"] = extra.get("citations")
            # The SDK's typed annotations (url_citation), as chat UIs read them.
            r["annotations"] = [x.model_dump() for x in (c.choices[0].message.annotations or [])]
            text, n, usage = "", 0, None
            for chunk in client.chat.completions.create(model=a.model, messages=msgs, stream=True,
                                                         stream_options={"include_usage": True}):
                n += 1
                if chunk.choices and chunk.choices[0].delta.content:
                    text += chunk.choices[0].delta.content
                if chunk.choices and (chunk.choices[0].delta.model_extra or {}).get("annotations"):
                    r["stream_annotations"] = chunk.choices[0].delta.model_extra["annotations"]
                if chunk.usage:
                    usage = chunk.usage.model_dump()
            r["stream"], r["stream_chunks"], r["stream_usage"] = text, n, usage
        except openai.APIError as e:
            r["error"] = error(e)
        out["answers"].append(r)
    json.dump(out, sys.stdout)


def error(e):
    return {"type": type(e).__name__, "status": getattr(e, "status_code", None), "message": str(e)}


if __name__ == "__main__":
    main()
