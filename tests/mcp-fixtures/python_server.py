"""An MCP server over stdio written with the official Python SDK (`MCPServer`),
whose lists can be made to fail or hang.

Tools: `env` (the value of one of its environment variables), `pid` (its
process id) and `echo`. A resource `hello`, a resource template `note` and a
prompt `greet`; a tool, a resource and a prompt all called `echo`, so that
filters by raw name meet all three.

usage: python_server.py [--fail resources|templates|prompts]... [--hang resources|prompts]...
"""

import asyncio
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

failing = {sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--fail"}
hanging = {sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--hang"}


async def refuse_or_hang(what):
    if what in hanging:
        await asyncio.sleep(3600)
    if what in failing:
        raise MCPError(code=-32603, message=f"the {what} index is offline")


class Partial(MCPServer):
    async def list_resources(self):
        await refuse_or_hang("resources")
        return await super().list_resources()

    async def list_resource_templates(self):
        await refuse_or_hang("templates")
        return await super().list_resource_templates()

    async def list_prompts(self):
        await refuse_or_hang("prompts")
        return await super().list_prompts()


server = Partial("partial")


@server.tool()
def env(name: str) -> str:
    """The value of the environment variable `name`, or `<unset>`."""
    return os.environ.get(name, "<unset>")


@server.tool()
def pid() -> str:
    """This server's process id."""
    return str(os.getpid())


@server.tool(name="echo")
def echo_tool(text: str) -> str:
    """Say `text` back."""
    return text


@server.resource("note://hello", name="hello")
def hello() -> str:
    return "hello from the resource"


@server.resource("note://echo", name="echo")
def echo_resource() -> str:
    return "the echo resource"


@server.resource("note://by-id/{id}", name="note")
def note(id: str) -> str:
    return f"note {id}"


@server.prompt(name="greet")
def greet(who: str) -> str:
    return f"Greet {who} warmly."


@server.prompt(name="echo")
def echo_prompt() -> str:
    return "Repeat after me."


server.run("stdio")
