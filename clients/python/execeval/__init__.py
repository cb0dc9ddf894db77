"""execeval's Python client: run candidates on `execeval serve` replicas.

    from execeval import Client
    c = Client("http://127.0.0.1:8080")
    rec = c.run(task, candidate="def add(a, b):\n    return a + b\n")

Standard library only. See clients/python/README.md."""
from .errors import (DeadlineExceeded, ExecevalError, InputError, ServerError, SessionBusy, SessionEnded,
                     Unauthorized, Unavailable)
from .client import Client
from .session import Session
from .aio import AsyncClient, AsyncSession

__all__ = ["Client", "AsyncClient", "Session", "AsyncSession", "DeadlineExceeded", "ExecevalError", "InputError",
           "ServerError", "SessionBusy", "SessionEnded", "Unauthorized", "Unavailable"]
__version__ = "0.1.0"
