"""AsyncClient: the Client's methods as coroutines, for reward functions
that are coroutines.

Built on run_in_executor over the synchronous Client, not on asyncio
streams: the Client already holds the keep-alive pool, the retries and the
replica choice, and http.client already parses HTTP/1.1 (chunked bodies,
keep-alive rules); a second implementation over streams would be a second
place for those to go wrong. The cost is one thread per request in flight,
small beside an evaluation that takes a sandbox tens of milliseconds or
more; the threads are those of this client's own executor, bounded by
max_in_flight, so a burst of coroutines queues in the executor instead of
opening a connection each. A retry's back-off sleeps in that thread, not in
the event loop."""
import asyncio
import collections
import functools
from concurrent.futures import ThreadPoolExecutor

from .client import Client


class AsyncClient:
    """AsyncClient(url_or_urls, token=None, timeout=300, max_in_flight=16, ...):
    the other keywords are Client's. Use `async with` or `await aclose()`."""

    def __init__(self, url_or_urls, token=None, timeout=300.0, max_in_flight=16, **kw):
        self.client = Client(url_or_urls, token=token, timeout=timeout, **kw)
        self.max_in_flight = max_in_flight
        self._pool = ThreadPoolExecutor(max_in_flight, thread_name_prefix="execeval-async")

    async def _call(self, fn, *args, **kw):
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(fn, *args, **kw))

    async def run(self, task, candidate=None, **kw):
        """Client.run, awaited."""
        return await self._call(self.client.run, task, candidate, **kw)

    async def batch(self, task, runs, **kw):
        """Client.batch, awaited."""
        return await self._call(self.client.batch, task, runs, **kw)

    async def run_code(self, code, stdin=None, **kw):
        """Client.run_code, awaited."""
        return await self._call(self.client.run_code, code, stdin, **kw)

    async def health(self):
        return await self._call(self.client.health)

    async def map(self, samples, max_in_flight=None, return_exceptions=False):
        """Client.map as an async generator: results in the order of samples,
        at most max_in_flight (default: the client's) requests at once."""
        n = max_in_flight or self.max_in_flight
        if n < 1:
            raise ValueError("max_in_flight must be at least 1")
        window = collections.deque()
        try:
            for sample in samples:
                window.append(asyncio.ensure_future(self._call(self.client._one, sample)))
                if len(window) >= n:
                    yield await _outcome(window.popleft(), return_exceptions)
            while window:
                yield await _outcome(window.popleft(), return_exceptions)
        finally:
            for f in window:
                f.cancel()

    async def aclose(self):
        self._pool.shutdown(wait=False)
        self.client.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.aclose()


async def _outcome(future, return_exceptions):
    try:
        return await future
    except Exception as e:  # noqa: B902 - handed to the caller as asked
        if return_exceptions:
            return e
        raise
