"""What the adapters share: the conversation's key, and one turn over it.

A framework hands the adapter its whole conversation at every model call. The adapter never
decides by itself which messages are new: the core's rule (``held_prefix``, through
``ctxkit._ctxkit.held_prefix``) decides from the held ends of the conversation, how many of the
framework's messages the log holds and the fingerprints of the first and the last of them
(``message_fingerprint``). ``Turns`` keeps those ends per conversation, shared by every adapter
over the same ``Engine`` object (so an adapter made per request knows them), so a step converts and
fingerprints its new messages and three more (the first, the last held, the new last), never the
whole conversation, and appends the new ones right after the log's last seq (``append(after=)``:
a log another writer moved on is refused, never appended to twice). When the ends are not known
(the conversation's first call on this Engine object, as after a restart) or the rule finds the conversation diverged, the whole
conversation goes once to ``Engine.append_new``, which decides by content from the session's
log (so an adapter built per request or after a restart appends nothing twice, and a
conversation that diverged from the log continues in a fork of its own). The adapters leave the
framework's own history as it is and shape only the model's input, so that history is always
the log followed by new messages. ``adapter_work`` counts the framework messages converted and
fingerprinted, for the test that pins a step's cost."""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import weakref
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple, cast

from ._ctxkit import held_prefix, message_fingerprint

if TYPE_CHECKING:  # the stub's name for the formats the binding takes (no runtime object)
    from ._ctxkit import Format
from ._errors import InvalidInputError, SessionNotFoundError, StoreError

# The work of every adapter in this process: framework messages converted to ctxkit's dicts
# (for the log) and fingerprinted (for the rule). A test reads it to pin a step's cost.
adapter_work = {"converted": 0, "fingerprinted": 0}

# How many conversations' held ends are kept per Engine object (the least recently used
# forgotten first: a forgotten one costs one full comparison by append_new, never a wrong append).
MAX_HELD = 10_000

# How many conversations' held ends each adapter object also keeps for itself.
OWN_HELD = 64

Convert = Callable[[Sequence[Any]], List[Dict[str, Any]]]

_HELD: "weakref.WeakKeyDictionary[Any, Tuple[OrderedDict[Tuple[str, str], Dict[str, Any]], threading.Lock]]" = weakref.WeakKeyDictionary()
_HELD_LOCK = threading.Lock()


def held_ends_of(engine: Any) -> "Tuple[OrderedDict[Tuple[str, str], Dict[str, Any]], threading.Lock]":
    """The held ends kept for ``engine``'s conversations (with their lock), shared by every
    adapter over it while it lives; an engine that takes no weak reference gets its own."""
    with _HELD_LOCK:
        try:
            found = _HELD.get(engine)
            if found is None:
                found = _HELD[engine] = (OrderedDict(), threading.Lock())
            return found
        except TypeError:
            return OrderedDict(), threading.Lock()


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


def check_key(key: Any, parameter: str) -> str:
    """A conversation key as a session name: a non-empty str without NUL, else
    ``InvalidInputError`` naming ``parameter``."""
    if not isinstance(key, str) or not key or "\0" in key:
        raise InvalidInputError(
            f"{parameter}: expected a non-empty str without NUL characters, found {key!r}"
        )
    return key


def check_paging(engine: Any, history_tools: bool) -> None:
    """An adapter without the history tools (``history_tools=False``) must not leave offload
    references naming ``read_offload``, a tool its agent would then lack: ``InvalidInputError``
    saying what to pass instead."""
    if not history_tools and getattr(engine, "paging_tool", None) == "read_offload":
        raise InvalidInputError(
            "history_tools: False, but the engine's offload references tell the model to call "
            "`read_offload`, which the agent would then lack; keep the history tools, or build the "
            "Engine with offload=False or offload={'paging_tool': '<a file tool of the agent>'}"
        )


def derived_key(prefix: str, first: Any) -> str:
    """A key made from a conversation's first message, for a framework that gives none: the same
    first message gives the same key, so conversations that begin alike share it until they
    differ, and then each continues in its own fork (``Engine.append_new``)."""
    text = json.dumps(first, sort_keys=True, default=str)
    return f"{prefix}{hashlib.sha256(text.encode()).hexdigest()[:16]}"


class Turns:
    """One turn of a keyed conversation: append what is new, prepare the view. ``last_turn`` is
    the latest ``prepare`` result (with ``"appended"``, what ``append_new`` did); ``on_turn``,
    when given, is called with ``(key, turn)`` after each. ``agent_prompt`` keeps ctxkit's
    coding-agent prompt (its role, working directory, AGENTS.md); by default the system prompt is
    only ctxkit's parts about the context (``Engine.prepare(context_prompt=True)``)."""

    def __init__(
        self,
        engine: Any,
        summarize: Optional[Callable[..., Any]],
        timeout: Optional[float],
        on_turn: Optional[Callable[[str, Dict[str, Any]], Any]] = None,
        agent_prompt: bool = False,
    ) -> None:
        self.engine = engine
        self.context_prompt = not agent_prompt
        self.summarize = summarize
        self.timeout = timeout
        self.on_turn = on_turn
        self.last_turn: Optional[Dict[str, Any]] = None
        self.last_key: Optional[str] = None
        # Where each key's conversation is (a fork, when it diverged), for the history tools.
        self._sessions: Dict[str, str] = {}
        # Per (format, key), the held ends: {"session", "count" (framework messages held),
        # "first", "last" (their fingerprints), "logged" (the session's last seq)}, shared by
        # every adapter over this engine, so one made per request knows them too.
        self._held, self._lock = held_ends_of(engine)
        # The ends this adapter set last (OWN_HELD of them), kept while it lives: an adapter
        # whose ends the shared ones forgot (MAX_HELD) still knows where its conversation is.
        self._own: "OrderedDict[Tuple[str, str], Dict[str, Any]]" = OrderedDict()

    def session_of(self, key: str) -> str:
        """The session ``key``'s conversation is in (the key itself, or the fork it went to)."""
        return self._sessions.get(key, key)

    def answer(self, key: str, name: str, arguments: Dict[str, Any]) -> str:
        """A history tool's answer (``search_history``, ``read_history``, ``read_offload``) from
        the log of ``key``'s conversation, as the text the model reads."""
        call = {"id": "ctxkit-history", "name": name, "arguments": arguments}
        message = self.engine.execute_tool(self.session_of(key), call)
        return text_of(message.get("content"))

    def _counted(self, convert: Convert, messages: Sequence[Any]) -> List[Dict[str, Any]]:
        adapter_work["converted"] += len(messages)
        return convert(messages)

    def _fingerprint(self, convert: Convert, messages: Sequence[Any], format: str, at: int) -> str:
        adapter_work["fingerprinted"] += 1
        return message_fingerprint(convert(messages[at:at + 1]), cast("Format", format))

    def _remember(
        self, key: str, session: str, messages: Sequence[Any], convert: Convert, format: str,
        logged: int, first: Optional[str],
    ) -> None:
        count = len(messages)
        ends: Dict[str, Any] = {"session": session, "count": count, "logged": logged, "first": None, "last": None}
        if count:
            ends["first"] = first if first is not None else self._fingerprint(convert, messages, format, 0)
            ends["last"] = self._fingerprint(convert, messages, format, count - 1)
        self._own[(format, key)] = ends
        self._own.move_to_end((format, key))
        if len(self._own) > OWN_HELD:
            self._own.popitem(last=False)
        with self._lock:
            self._held[(format, key)] = ends
            self._held.move_to_end((format, key))
            while len(self._held) > MAX_HELD:
                self._held.popitem(last=False)

    def _append_held(self, key: str, messages: Sequence[Any], convert: Convert, format: str) -> Optional[Dict[str, Any]]:
        """The new messages appended after the held ends, or ``None`` when the ends are not
        known, the rule finds the conversation diverged, or the log moved on."""
        with self._lock:
            ends = self._held.get((format, key)) or self._own.get((format, key))
        if ends is None:
            return None
        decided = held_prefix(ends, len(messages), lambda at: self._fingerprint(convert, messages, format, at))
        if "held" not in decided:
            return None
        held = int(decided["held"])
        new = self._counted(convert, messages[held:])
        recorded: List[Dict[str, Any]] = []
        if new:
            try:
                recorded = self.engine.append(ends["session"], new, format, after=ends["logged"])
            except (StoreError, SessionNotFoundError):  # the log moved on or went: compare in full
                return None
        appended = {"session": ends["session"], "held": ends["logged"], "appended": recorded, "forks": []}
        if held == len(messages):  # nothing new (the ends stand as they are)
            return appended
        logged = recorded[-1]["seq"] if recorded else ends["logged"]
        # The first message was compared (the same as held) unless nothing was held.
        self._remember(key, ends["session"], messages, convert, format, logged, ends["first"] if held else None)
        return appended

    def hold(self, key: str, session: str, messages: Sequence[Any], convert: Convert, format: str, logged: int) -> None:
        """Makes ``messages`` the held ends of ``key``'s conversation: the framework holds them as
        the start of its list, the log ``session`` holds what they stand for up to seq ``logged``,
        and what the framework adds after them is new (an adapter that gives the framework a
        compacted view rather than the log, as the Agents SDK's session does). Two messages
        are fingerprinted, whatever the list's length."""
        self._remember(key, session, messages, convert, format, logged, None)

    def append(self, key: str, messages: Sequence[Any], convert: Convert, format: str) -> Dict[str, Any]:
        """What ``messages`` (the framework's whole conversation; ``convert`` maps a slice of it
        to message dicts in ``format``) adds to ``key``'s log, appended: the result of
        ``Engine.append_new`` (see the module doc)."""
        appended = self._append_held(key, messages, convert, format)
        if appended is None:
            appended = self.engine.append_new(key, self._counted(convert, messages), format)
            recorded = appended["appended"]
            logged = recorded[-1]["seq"] if recorded else appended["held"]
            self._remember(key, appended["session"], messages, convert, format, logged, None)
        return appended

    def _done(self, key: str, appended: Dict[str, Any], turn: Dict[str, Any]) -> Dict[str, Any]:
        self._sessions[key] = appended["session"]
        self.last_key = key
        turn["appended"] = appended
        self.last_turn = turn
        if self.on_turn is not None:
            self.on_turn(key, turn)
        return turn

    def turn(
        self, key: str, messages: Sequence[Any], convert: Convert, format: str, view_format: str,
        tools: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        """``messages``: the framework's conversation, ``convert`` its mapping to dicts in
        ``format``; ``tools``: the definitions the request carries, reserved in the budget."""
        appended = self.append(key, messages, convert, format)
        turn = self.engine.prepare(
            appended["session"], format=view_format, summarize=self.summarize, timeout=self.timeout,
            context_prompt=self.context_prompt, tools=tools,
        )
        return self._done(key, appended, turn)

    async def aturn(
        self, key: str, messages: Sequence[Any], convert: Convert, format: str, view_format: str,
        tools: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        appended = await asyncio.to_thread(self.append, key, messages, convert, format)
        turn = await self.engine.aprepare(
            appended["session"], format=view_format, summarize=self.summarize, timeout=self.timeout,
            context_prompt=self.context_prompt, tools=tools,
        )
        return self._done(key, appended, turn)
