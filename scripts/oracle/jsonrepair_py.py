#!/usr/bin/env python3
"""PyPI json_repair (json-repair), the library GraphRAG's
try_parse_json_object falls back to: the outside check for kgrag's
internal/jsonrepair.

usage: jsonrepair_py.py [--version] < lines

Each input line is a JSON string (a model's reply). Each output line is
{"value": repair_json(reply, return_objects=True)}, or {"error": "..."}
when that value is no JSON (NaN) or repair_json raised. --version prints
json-repair's version. Runs in the venv of scripts/graphrag-py.sh.
"""
import importlib.metadata
import json
import sys

import json_repair


def main():
    if sys.argv[1:] == ["--version"]:
        print(importlib.metadata.version("json-repair"))
        return
    for line in sys.stdin:
        reply = json.loads(line)
        try:
            out = {"value": json_repair.repair_json(reply, return_objects=True)}
            text = json.dumps(out, allow_nan=False)
        except Exception as e:  # noqa: BLE001 - reported per line
            text = json.dumps({"error": f"{type(e).__name__}: {e}"})
        print(text, flush=True)


if __name__ == "__main__":
    main()
