"""An MCP server written with FastMCP, for our client to mount.

Tools: `add` (a number, which FastMCP wraps as structured content under
`result`), `weather` (a model: structured content with an output schema),
`refuse` (raises FastMCP's `ToolError`), `count` (reports progress) and
`ask_name` (asks the user's name: with an input-required result on protocol
2026-07-28, where FastMCP has no server-to-client requests, and with an
elicitation request on older protocols).

usage: fastmcp_server.py stdio | fastmcp_server.py http PORT
"""

import sys

import mcp_types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from pydantic import BaseModel

server = FastMCP("fastmcp-peer")


class Weather(BaseModel):
    city: str
    celsius: int


@server.tool
def add(a: int, b: int) -> int:
    """The sum of `a` and `b`."""
    return a + b


@server.tool
def weather(city: str) -> Weather:
    """Today's weather in `city`."""
    return Weather(city=city, celsius=21)


@server.tool
def refuse(reason: str) -> str:
    """Always fails, saying why."""
    raise ToolError(f"refused: {reason}")


@server.tool
async def count(steps: int, ctx: Context) -> str:
    """Counts to `steps`, reporting each step as progress."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return f"counted to {steps}"


NAME_FORM = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}


def greeting(action, content):
    if action != "accept":
        return f"no name ({action})"
    return f"Hello, {(content or {}).get('name')}!"


@server.tool
async def ask_name(ctx: Context) -> str | mcp_types.InputRequiredResult:
    """Asks the user's name, then greets them."""
    if ctx.request_context.protocol_version in MODERN_PROTOCOL_VERSIONS:
        answers = ctx.input_responses or {}
        if "name" in answers:
            answer = answers["name"]
            return greeting(answer.action, answer.content)
        question = mcp_types.ElicitRequest(
            params=mcp_types.ElicitRequestFormParams(
                message="What is your name?", requested_schema=NAME_FORM
            )
        )
        return mcp_types.InputRequiredResult(input_requests={"name": question})
    answer = await ctx.elicit("What is your name?", response_type=str, response_title="name")
    return greeting(answer.action, {"name": getattr(answer, "data", None)})


if sys.argv[1] == "http":
    server.run("http", host="127.0.0.1", port=int(sys.argv[2]), path="/mcp", show_banner=False)
else:
    server.run("stdio", show_banner=False)
