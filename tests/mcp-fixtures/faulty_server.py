"""An MCP server over stdio, written with the official Python SDK
(`MCPServer`), that breaks its own connection on request while its process
stays alive.

Tools: `pid` (its process id); `close_stdout` closes its standard output
(its messages end) and sleeps for an hour without exiting; `stop_reading`
blocks its event loop for an hour, so it neither reads its input nor
answers anything again.
"""

import asyncio
import os
import signal
import threading
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("faulty")

# The pipe standard output is: the SDK writes to a copy of the descriptor.
STDOUT = os.fstat(1)


@server.tool()
def pid() -> str:
    """This server's process id."""
    return str(os.getpid())


@server.tool()
async def close_stdout() -> str:
    """Close standard output, then stay alive without a word: past the end
    of its input (a thread that is not a daemon keeps the process) and
    deaf to SIGTERM."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    threading.Thread(target=time.sleep, args=(3600,)).start()
    for fd in map(int, os.listdir("/proc/self/fd")):
        try:
            same = os.fstat(fd)
        except OSError:
            continue
        if (same.st_dev, same.st_ino) == (STDOUT.st_dev, STDOUT.st_ino):
            os.close(fd)
    await asyncio.sleep(3600)
    return "never"


@server.tool()
async def stop_reading() -> str:
    """Stop reading standard input: the whole server hangs (its event
    loop blocked)."""
    time.sleep(3600)
    return "never"


server.run("stdio")
