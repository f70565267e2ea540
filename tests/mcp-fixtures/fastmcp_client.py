"""Drives our MCP server with FastMCP's `Client` and prints one JSON object
of what it saw; the Rust test checks it.

usage: fastmcp_client.py stdio COMMAND [ARGS...] | fastmcp_client.py http URL

Its user answers every form by filling each field with "Ada".
"""

import asyncio
import json
import sys

from fastmcp import Client
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport
from fastmcp.exceptions import ToolError


def text_of(result):
    return [c.text for c in result.content if getattr(c, "type", "") == "text"]


async def answer_form(message, response_type, params, context):
    fields = params.requested_schema.get("properties", {})
    return {field: "Ada" for field in fields}


async def main():
    mode, target = sys.argv[1], sys.argv[2:]
    if mode == "stdio":
        transport = StdioTransport(target[0], target[1:])
    else:
        transport = StreamableHttpTransport(target[0])
    seen = {}
    async with Client(transport, elicitation_handler=answer_form, timeout=30) as client:
        tools = await client.list_tools()
        seen["tools"] = sorted(t.name for t in tools)

        result = await client.call_tool("echo", {"message": "from fastmcp"})
        seen["echo"] = text_of(result)

        # FastMCP checks structured content against the output schema and
        # turns it into data.
        result = await client.call_tool("weather", {"city": "Oslo"})
        seen["weather"] = result.structured_content
        seen["weather_data"] = {"city": result.data.city, "celsius": result.data.celsius}

        try:
            await client.call_tool("test_error_handling", {})
            seen["tool_error"] = None
        except ToolError as error:
            seen["tool_error"] = str(error)

        raw = await client.call_tool_mcp("echo", {})
        seen["missing_argument"] = {"is_error": raw.is_error, "text": text_of(raw)}

        progress = []

        async def on_progress(value, total, message):
            progress.append([value, total, message])

        result = await client.call_tool("test_tool_with_progress", {}, progress_handler=on_progress)
        seen["progress"] = progress
        seen["progress_result"] = text_of(result)

        # The tool asks for the user's name: an input-required result on
        # protocol 2026-07-28, a request on older ones.
        result = await client.call_tool("test_input_required_result_elicitation", {})
        seen["elicitation"] = text_of(result)
        result = await client.call_tool("test_input_required_result_multi_round", {})
        seen["multi_round"] = text_of(result)
    print(json.dumps(seen))


asyncio.run(main())
