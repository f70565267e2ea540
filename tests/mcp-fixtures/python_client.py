"""Drives our MCP server with the official Python SDK's client and prints
one JSON object of what it saw; the Rust test checks it.

usage: python_client.py stdio COMMAND [ARGS...] | python_client.py http URL

With MCP_CALLS set to a JSON list of [name, arguments] pairs, it makes just
those calls and prints {"calls": [{"is_error": ..., "text": [...]}, ...]}.
"""

import asyncio
import json
import os
import sys

from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters


def text_of(result):
    return [c.text for c in result.content if getattr(c, "type", "") == "text"]


async def main():
    mode, target = sys.argv[1], sys.argv[2:]
    server = StdioServerParameters(command=target[0], args=target[1:]) if mode == "stdio" else target[0]
    seen = {}
    calls = os.environ.get("MCP_CALLS")
    async with Client(server) as client:
        if calls is not None:
            seen["calls"] = []
            for name, arguments in json.loads(calls):
                result = await client.call_tool(name, arguments)
                seen["calls"].append({"is_error": result.is_error, "text": text_of(result)})
            print(json.dumps(seen))
            return
        tools = []
        cursor = None
        pages = 0
        while True:
            page = await client.list_tools(cursor=cursor)
            pages += 1
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        seen["pages"] = pages
        seen["tools"] = sorted(t.name for t in tools)
        echo = next(t for t in tools if t.name == "echo")
        seen["echo_read_only"] = echo.annotations.read_only_hint
        seen["echo_schema"] = echo.input_schema

        result = await client.call_tool("echo", {"message": "from python"})
        seen["echo"] = text_of(result)

        # Lenient casting on the server: a string for an integer.
        result = await client.call_tool("slow", {"seconds": "0"})
        seen["echo_cast"] = text_of(result)

        result = await client.call_tool("echo", {})
        seen["missing_argument"] = {"is_error": result.is_error, "text": text_of(result)}

        result = await client.call_tool("test_error_handling", {})
        seen["tool_error"] = {"is_error": result.is_error, "text": text_of(result)}

        progress = []

        async def on_progress(value, total, message):
            progress.append([value, total, message])

        result = await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        seen["progress"] = progress
        seen["progress_result"] = text_of(result)

        weather = next(t for t in tools if t.name == "weather")
        seen["weather_output_schema"] = weather.output_schema
        seen["weather_open_world"] = weather.annotations.open_world_hint
        result = await client.call_tool("weather", {"city": "Oslo"})
        seen["weather"] = result.structured_content

        forecast = next(t for t in tools if t.name == "forecast")
        seen["forecast_output_schema"] = forecast.output_schema
        # The SDK checks the structured content against the output schema.
        result = await client.call_tool("forecast", {"city": "Oslo", "days": 2})
        seen["forecast"] = result.structured_content
        seen["forecast_text"] = text_of(result)

        result = await client.call_tool("test_image_content", {})
        seen["image"] = [c.type for c in result.content]
    print(json.dumps(seen))


asyncio.run(main())
