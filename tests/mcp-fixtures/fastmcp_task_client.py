"""Drives our MCP server's task tools with FastMCP's `Client` and its tasks
extension (`fastmcp-tasks`), and prints one JSON object of what it saw;
the Rust test checks it.

usage: fastmcp_task_client.py stdio COMMAND [ARGS...] | fastmcp_task_client.py http URL

Its user answers every form by filling each field with "Ada" and
confirming.
"""

import asyncio
import json
import sys

from fastmcp import Client
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport
from fastmcp_tasks import call_tool_task


def text_of(result):
    return [c.text for c in result.content if getattr(c, "type", "") == "text"]


async def answer_form(message, response_type, params, context):
    fields = params.requested_schema.get("properties", {})
    return {field: (True if field == "confirm" else "Ada") for field in fields}


async def main():
    mode, target = sys.argv[1], sys.argv[2:]
    if mode == "stdio":
        transport = StdioTransport(target[0], target[1:])
    else:
        transport = StreamableHttpTransport(target[0])
    seen = {}
    async with Client(transport, elicitation_handler=answer_form, timeout=30) as client:
        # Created, followed, its result read.
        task = await call_tool_task(client, "slow_compute", {"seconds": 0.3, "label": "x"})
        seen["created"] = task.create_result.status
        seen["result"] = text_of(await task.result())
        # Created, then cancelled while it works.
        task = await call_tool_task(client, "slow_compute", {"seconds": 60, "label": "y"})
        await task.cancel()
        seen["cancelled"] = (await task.wait(timeout=20)).status
        # A task that asks: parked in input_required, answered by the
        # elicitation handler through tasks/update.
        task = await call_tool_task(client, "confirm_delete", {"filename": "a.txt"})
        seen["asked"] = (await task.wait(state="input_required", timeout=20)).status
        seen["answered"] = text_of(await task.result())
        # A plain call of a task tool: FastMCP waits for the task itself.
        seen["waited"] = text_of(await client.call_tool("slow_compute", {"seconds": 0.1, "label": "z"}))
    print(json.dumps(seen))


asyncio.run(main())
