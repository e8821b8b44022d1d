"""Ask kgrag serve one question through LangChain's ChatOpenAI and
LlamaIndex's OpenAILike, each streamed and not, as an application built on
them would. Prints one JSON line per call: client, version, stream, answer,
chunks (streamed pieces), and error when the call failed.

Usage: python frameworks.py --client langchain|llamaindex --base-url http://127.0.0.1:8765/v1 QUESTION

Each framework has a venv of its own (scripts/clients.sh): run this with
its python.
"""

import argparse
import json
import sys
import traceback
from importlib.metadata import version


def langchain(base_url, model, question):
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(model=model, base_url=base_url, api_key="unused", max_retries=0, timeout=120)
    yield False, llm.invoke(question).content, 1
    pieces = [c.content for c in llm.stream(question)]
    yield True, "".join(pieces), len([p for p in pieces if p])


def llamaindex(base_url, model, question):
    from llama_index.core.llms import ChatMessage
    from llama_index.llms.openai_like import OpenAILike

    # A chat model: without is_chat_model OpenAILike calls /v1/completions.
    llm = OpenAILike(model=model, api_base=base_url, api_key="unused", is_chat_model=True,
                     context_window=8192, max_retries=0, timeout=120)
    msgs = [ChatMessage(role="user", content=question)]
    yield False, llm.chat(msgs).message.content, 1
    pieces = [c.delta or "" for c in llm.stream_chat(msgs)]
    yield True, "".join(pieces), len([p for p in pieces if p])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--client", required=True, choices=["langchain", "llamaindex"])
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--model", default="kgrag-local")
    ap.add_argument("question")
    a = ap.parse_args()
    for name, pkg, fn in (("langchain", "langchain-openai", langchain),
                          ("llamaindex", "llama-index-llms-openai-like", llamaindex)):
        if name != a.client:
            continue
        rec = {"client": name, "version": pkg + " " + version(pkg)}
        try:
            for stream, answer, chunks in fn(a.base_url, a.model, a.question):
                print(json.dumps(dict(rec, stream=stream, answer=answer, chunks=chunks)), flush=True)
        except Exception as e:  # reported to the test, which fails on it
            print(json.dumps(dict(rec, error=f"{type(e).__name__}: {e}", trace=traceback.format_exc())), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
