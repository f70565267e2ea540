"""An MCP server written with FastMCP and its tasks extension
(`fastmcp-tasks`, SEP-2663), for our client to mount and drive: `work`
runs as a task (sleeps `seconds`, then says so). FastMCP's tasks do not
take `ctx.elicit` (a task tool asks by returning an input-required result
itself), so no task here asks.

usage: fastmcp_task_server.py stdio | fastmcp_task_server.py http PORT
"""

import asyncio
import sys

from fastmcp import FastMCP
from fastmcp_tasks import TasksExtension

server = FastMCP("fastmcp-task-peer")
# One process: the in-memory task backend.
server.add_extension(TasksExtension(url="memory://"))


@server.tool(task=True)
async def work(seconds: float, label: str) -> str:
    """Works for `seconds`, then says it is done with `label`."""
    await asyncio.sleep(max(0.0, min(seconds, 600.0)))
    return f"worked on {label}"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio", show_banner=False)
    else:
        server.run("http", host="127.0.0.1", port=int(sys.argv[2]), show_banner=False)
