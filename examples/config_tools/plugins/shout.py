#!/usr/bin/env python3
"""A plugin: describes its tools, then answers calls, one JSON line each."""
import json
import sys

TOOLS = [{
    "name": "shout",
    "description": "Say a text loudly",
    "input_schema": {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "What to say"}},
        "required": ["text"],
    },
    # Optional: how the tool behaves (read-only tools run beside other
    # safe calls), its category (which sets the risk) and its own timeout.
    "annotations": {"read_only": True, "idempotent": True},
    "timeout_seconds": 5,
}]

for line in sys.stdin:
    request = json.loads(line)
    if request["method"] == "describe":
        reply = {"id": request["id"], "tools": TOOLS}
    else:
        reply = {"id": request["id"], "content": request["arguments"]["text"].upper() + "!"}
    print(json.dumps(reply), flush=True)
