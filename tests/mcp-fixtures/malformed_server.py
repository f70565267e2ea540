"""An MCP server over stdio that misbehaves on purpose: it answers the
handshake correctly, then mixes garbage lines, messages of the wrong shape
and unknown notifications into its answers. It offers resources but does not
know the later `resources/templates/list`. A client must survive all of it."""

import json
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def garbage(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        request = json.loads(line)
    except ValueError:
        continue
    method, rid = request.get("method"), request.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}, "resources": {}},
            "serverInfo": {"name": "malformed", "version": "0"}}})
    elif method == "tools/list":
        garbage("this is not JSON {{{")
        garbage('{"jsonrpc": "2.0", "method": 42}')
        send({"jsonrpc": "2.0", "method": "notifications/unknown", "params": [1, 2]})
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [
            {"name": "garbled", "inputSchema": {"type": "object", "properties": {}}},
            {"name": "fine", "description": "Answers properly.", "inputSchema": {"type": "object", "properties": {}}}]}})
    elif method == "resources/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"resources": [
            {"uri": "note://a", "name": "a"}]}})
    elif method == "resources/read":
        send({"jsonrpc": "2.0", "id": rid, "result": {"contents": [
            {"uri": "note://a", "text": "note a"}]}})
    elif method == "tools/call" and request["params"]["name"] == "garbled":
        garbage("\x00\x01 binary noise")
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": "not a list", "isError": "yes"}})
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "still here"}]}})
    elif rid is not None:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})
