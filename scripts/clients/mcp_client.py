#!/usr/bin/env python3
"""Call kgrag's MCP tools with the Model Context Protocol's Python SDK
(PyPI mcp), over streamable HTTP or stdio; print what the SDK saw as JSON.

usage: mcp_client.py --http URL [--api-key KEY] CALLS.json
       mcp_client.py --stdio [--env KEY=VALUE]... CALLS.json -- COMMAND ARGS...

CALLS.json is a list of {"name": TOOL, "arguments": {...}}. Output, one
JSON object:
  server      the server's name and version from initialize
  tools       [{"name", "read_only"}] as list_tools gave them
  calls       per call: {"name", "is_error", "structured", "text"}
"""
import argparse
import asyncio
import json
import sys

import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


async def run(session, calls):
    init = await session.initialize()
    out = {"server": {"name": init.server_info.name, "version": init.server_info.version}, "tools": [], "calls": []}
    for t in (await session.list_tools()).tools:
        ro = bool(t.annotations and t.annotations.read_only_hint)
        out["tools"].append({"name": t.name, "read_only": ro})
    for c in calls:
        r = await session.call_tool(c["name"], c.get("arguments") or {})
        text = "".join(getattr(x, "text", "") for x in (r.content or []))
        out["calls"].append({"name": c["name"], "is_error": bool(r.is_error), "structured": r.structured_content, "text": text})
    return out


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--http")
    p.add_argument("--api-key")
    p.add_argument("--stdio", action="store_true")
    p.add_argument("--env", action="append", default=[], help="KEY=VALUE for the stdio server's environment")
    p.add_argument("calls")
    p.add_argument("command", nargs="*")
    a = p.parse_args()
    with open(a.calls) as f:
        calls = json.load(f)
    if a.http:
        headers = {"Authorization": "Bearer " + a.api_key} if a.api_key else {}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as hc:
            async with streamable_http_client(a.http, http_client=hc) as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write) as s:
                    out = await run(s, calls)
    else:
        env = dict(kv.split("=", 1) for kv in a.env)
        params = StdioServerParameters(command=a.command[0], args=a.command[1:], env=env or None)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                out = await run(s, calls)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    asyncio.run(main())
