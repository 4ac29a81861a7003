"""The official MCP Python SDK (PyPI `mcp`) behind the small synchronous interface the golden
tests' own client has (tests/golden/mcp_protocol/mcp_client.Server): initialize, request
("tools/list"), call, close. Every tools/call goes through mcp.ClientSession.call_tool, which
validates a result's structuredContent against the tool's outputSchema and raises on a mismatch;
SdkServer.call also re-validates explicitly (validate_tool_result) and counts what it checked."""
import asyncio
import concurrent.futures
import os
import threading

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcp_client import PERMISSIVE, Failure


class SdkServer:
    def __init__(self, args=(), cwd=None, env=None, permissive=True):
        args = list(args) + (PERMISSIVE if permissive else [])
        # The SDK starts servers with a minimal environment; give magpie the test's, as the own client does.
        self.params = StdioServerParameters(command=os.environ["MAGPIE_BIN"], args=["mcp", *args], cwd=cwd,
                                            env=dict(os.environ) if env is None else env)
        self.validated = set()
        self.errlog = open(os.path.join(cwd or os.getcwd(), "sdk_server_stderr.log"), "w+")
        self.loop = asyncio.new_event_loop()
        self.ready = concurrent.futures.Future()
        self.queue = None
        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(self._main(),), daemon=True)
        self.thread.start()
        self.ready.result(timeout=60)

    async def _main(self):
        self.queue = asyncio.Queue()
        try:
            async with stdio_client(self.params, errlog=self.errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    self.ready.set_result(True)
                    while True:
                        job = await self.queue.get()
                        if job is None:
                            break
                        coro_fn, fut = job
                        try:
                            fut.set_result(await coro_fn(session))
                        except BaseException as e:  # noqa: BLE001 - handed to the caller
                            fut.set_exception(e)
        except BaseException as e:  # noqa: BLE001
            if not self.ready.done():
                self.ready.set_exception(e)
            raise

    def _run(self, coro_fn, timeout):
        fut = concurrent.futures.Future()
        self.loop.call_soon_threadsafe(self.queue.put_nowait, (coro_fn, fut))
        return fut.result(timeout=timeout)

    def initialize(self):
        return self._run(lambda s: s.initialize(), 60)

    def request(self, method, params=None, timeout=60.0):
        if method != "tools/list":
            raise Failure("the SDK adapter sends tools/list and tools/call only, not %s" % method)

        async def list_all(s):
            tools, cursor = [], None
            while True:
                r = await (s.list_tools() if cursor is None else s.list_tools(cursor=cursor))
                tools += [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in r.tools]
                cursor = r.next_cursor
                if not cursor:
                    return tools
        return {"result": {"tools": self._run(list_all, timeout)}}

    def call(self, name, arguments, meta=None, timeout=120.0):
        async def call(s):
            r = await s.call_tool(name, arguments)  # raises when structuredContent does not fit outputSchema
            if not r.is_error:
                await s.validate_tool_result(name, r)
            return r
        try:
            r = self._run(call, timeout)
        except RuntimeError as e:
            raise Failure("the MCP SDK rejected %s: %s" % (name, e))
        if not r.is_error:
            self.validated.add(name)
        return r.model_dump(by_alias=True, mode="json", exclude_none=True)

    def close(self, timeout=30):
        self.loop.call_soon_threadsafe(self.queue.put_nowait, None)
        self.thread.join(timeout=timeout)
        self.errlog.seek(0)
        return 0, "", self.errlog.read()
