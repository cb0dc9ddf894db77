"""The client's exceptions: one type per failure class, so that a trainer can
tell a bad request (fix the input) from a server that is not there (retry
later, or mask the sample) without reading messages."""


class ExecevalError(Exception):
    """Base of every error this package raises.

    status: the HTTP status, or None when no answer came; message: the
    server's "error" text (or ours); field: the JSON path the server named,
    or None; body: the decoded error body (a dict), or None."""

    def __init__(self, message, status=None, field=None, body=None):
        super().__init__(message)
        self.message, self.status, self.field, self.body = message, status, field, body

    def __str__(self):
        where = " (field %s)" % self.field if self.field else ""
        code = "HTTP %d: " % self.status if self.status is not None else ""
        return "%s%s%s" % (code, self.message, where)


class InputError(ExecevalError):
    """A 4xx about the request (400, 404, 405, 413, 422): retrying the same
    request cannot help. message and field are the server's."""


class SessionEnded(InputError):
    """404 from a session's route (its idle timeout or TTL passed, it was
    deleted, or the server restarted), or a cell answered `session_ended`
    (the session ended while the cell ran; body is that answer): the
    session's state is gone. Start a new session; retrying cannot help."""


class SessionBusy(InputError):
    """409: the session is running another cell (one cell at a time per
    session). Not retried: the caller sends the cells of one session one
    after the other."""


class Unauthorized(ExecevalError):
    """401: the bearer token is missing or wrong."""


class ServerError(ExecevalError):
    """A 5xx that is not retried: 500 when the sandbox could not be set up
    (a problem of the host, not a verdict; body["record"] holds the
    sandbox_error record), or another unexpected status."""


class Unavailable(ExecevalError):
    """No replica gave an answer within the attempts allowed: connection
    refused or timed out, or 429/503/504 every time. status is the last
    HTTP status seen (None when the last attempt got no answer)."""


class DeadlineExceeded(Unavailable):
    """The call's overall deadline (Client.map's deadline, the adapters'
    EXECEVAL_CALL_DEADLINE_S) passed before an answer came: a server that
    stopped answering mid-call, or a queue that never moved. The trainer
    adapters count it as an infrastructure error, whatever
    EXECEVAL_UNAVAILABLE says, so that the training step goes on."""
