"""The exceptions ctxkit raises: one class per kind, each message naming what is wrong and where."""


class CtxkitError(Exception):
    """Every error ctxkit raises."""


class InvalidInputError(CtxkitError, ValueError):
    """The input has the wrong shape; the message names the field path
    (``messages[5].tool_call_id: ...``)."""


class BudgetTooSmallError(CtxkitError):
    """The budget cannot hold the system prompt and the smallest conversation, or its reserves
    fill the window; the message names each number."""


class StoreError(CtxkitError):
    """SQLite, PostgreSQL or a file failed; nothing was written."""


class SessionNotFoundError(StoreError, KeyError):
    """No session has that name."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
