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
from .session import Session, create_body


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

    def session(self, setup=None, limits=None, idle_timeout_s=None, ttl_s=None, files=None):
        """Client.session's arguments; an AsyncSession, made by awaiting it
        (`s = await ac.session(...)`) or entering it (`async with
        ac.session(...) as s:`, which deletes it at the end)."""
        return AsyncSession(self, create_body(setup, limits, idle_timeout_s, ttl_s, files))

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


class AsyncSession:
    """Session's methods as coroutines (exec, fetch, info, close), each a
    call of the synchronous Session in the AsyncClient's executor. Made
    when awaited or entered; `async with` closes it at the end, after an
    exception too."""

    def __init__(self, aclient, body):
        self._aclient, self._body = aclient, body
        self.session = None

    async def _create(self):
        if self.session is None:
            self.session = await self._aclient._call(Session, self._aclient.client, self._body)
        return self

    def __await__(self):
        return self._create().__await__()

    @property
    def id(self):
        return self.session.id if self.session is not None else None

    @property
    def setup(self):
        return self.session.setup

    async def exec(self, code, timeout_s=None, stdin=None, fetch_files=None):
        """Session.exec, awaited."""
        return await self._aclient._call(self.session.exec, code, timeout_s, stdin, fetch_files)

    async def fetch(self, path):
        return await self._aclient._call(self.session.fetch, path)

    async def judge(self, task, **kw):
        return await self._aclient._call(lambda: self.session.judge(task, **kw))

    async def info(self):
        return await self._aclient._call(self.session.info)

    async def fork(self, n=1):
        """Session.fork, awaited: a list of AsyncSession, one per copy."""
        copies = await self._aclient._call(self.session.fork, n)
        out = []
        for c in copies:
            a = AsyncSession(self._aclient, None)
            a.session = c
            out.append(a)
        return out

    async def close(self, retries=None):
        if self.session is not None:
            await self._aclient._call(self.session.close, retries)

    async def __aenter__(self):
        return await self._create()

    async def __aexit__(self, exc_type, exc, tb):
        if exc_type is None:
            await self.close()
            return
        try:  # the block's exception is the one to see
            await self.close(retries=1)
        except Exception:  # noqa: B902 - the session ends at its idle timeout anyway
            pass


async def _outcome(future, return_exceptions):
    try:
        return await future
    except Exception as e:  # noqa: B902 - handed to the caller as asked
        if return_exceptions:
            return e
        raise
