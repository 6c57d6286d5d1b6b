"""What the adapters share: which of a framework's messages are already in the session's log.

A framework hands the adapter its whole message list each step; the adapter appends only the
messages it has not seen (by identity of the object, or an id the framework keeps), then asks
the engine for the turn's view. The engine's log is append-only, so a message is never recorded
twice and the complete history stays searchable with the history tools."""

from __future__ import annotations

from typing import Any, Dict, List, Sequence


def text_of(content: Any) -> str:
    """A ctxkit message's content (a str or a list of parts) as text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces: List[str] = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                pieces.append(str(part.get("text", "")))
        return "\n".join(pieces)
    return ""


def messages_after_system(view: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The view's conversation, without the system prompt it starts with."""
    return [m for m in view if m.get("role") != "system"]


def system_of(view: Sequence[Dict[str, Any]]) -> str:
    """The system prompt the view starts with ("" when it has none)."""
    for message in view:
        if message.get("role") == "system":
            return text_of(message.get("content"))
    return ""
