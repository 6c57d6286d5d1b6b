"""Types of the extension module (python/src/). Messages are plain dicts in the named format.

The dicts it returns are the ``TypedDict``s below (stub-only: import them under ``if
TYPE_CHECKING:``), keyed by the fields of the Rust type each function serializes; a
``NotRequired`` key is left out when empty, as serde skips it. ``tests/test_stubs.py`` runs
mypy's stubtest: these signatures match the module's."""

import asyncio
import os
from typing import Any, Callable, Dict, List, Literal, Mapping, Optional, Sequence, Union
from typing import type_check_only

from typing_extensions import NotRequired, Self, TypedDict, disjoint_base

Format = Literal["ctxkit", "openai", "anthropic", "responses", "gemini", "ai-sdk", "langchain"]
Family = Literal["openai", "claude", "claude-4.7"]
Json = Any
# Read, not kept: any sequence of mappings (a result's ``Message``s among them).
Messages = Union[Sequence[Mapping[str, Any]], Mapping[str, Any]]
Summarize = Callable[[Dict[str, Any]], Any]
Source = Union[str, "os.PathLike[str]"]

@type_check_only
class ToolCall(TypedDict):
    """A tool call of an assistant message (core ``ToolCall``)."""

    id: str
    name: str
    arguments: str
    provider_fields: NotRequired[Dict[str, Any]]

@type_check_only
class Message(TypedDict):
    """A message in ctxkit's own form (core ``Message``); ``content`` is text or a list of parts."""

    role: str
    content: Union[str, List[Dict[str, Any]]]
    tool_calls: NotRequired[List[ToolCall]]
    tool_call_id: NotRequired[str]
    is_error: NotRequired[bool]
    name: NotRequired[str]
    provider_fields: NotRequired[Dict[str, Any]]

@type_check_only
class Violation(TypedDict):
    """One rule a request breaks (``validate``)."""

    at: str
    message: str

@type_check_only
class ImportedConversation(TypedDict):
    """One conversation of an imported transcript."""

    label: Optional[str]
    messages: List[Message]
    compactions: List[int]
    model: Optional[str]
    family: Optional[str]
    working_directory: Optional[str]

@type_check_only
class ImportedTranscript(TypedDict):
    """``import_transcript``'s result: the format recognised and its conversations."""

    format: str
    sessions: List[ImportedConversation]

@type_check_only
class CostRow(TypedDict):
    """One strategy of ``cost`` (core ``StrategyCost`` with the report's model and marks)."""

    strategy: str
    calls: int
    input_tokens: int
    input_cost_units: float
    input_cost_dollars: float
    cache_read_share: float
    prefix_breaks: int
    prefix_breaks_per_100: float
    mean_tokens: int
    peak_tokens: int
    compactions: int
    idle_compactions: int
    overflow_calls: int
    summary_output_units: float
    pinned_recall: Optional[float]
    needed_next: Optional[float]
    needed_next_held: int
    needed_next_needed: int
    model: str
    window: int
    reserve_tokens: int
    cost_trigger_tokens: Optional[int]
    cost_low_water_tokens: Optional[int]

@type_check_only
class FactFigures(TypedDict):
    """Facts of one kind across a compaction: expected, kept, dropped, found again."""

    expected: int
    kept: int
    dropped: int
    found_again: int

@type_check_only
class NeededNext(TypedDict):
    """The facts the next turn needed, how many a summary held, and the ones it missed."""

    needed: int
    held: int
    missed: List[Any]

@type_check_only
class NeededTotals(TypedDict):
    """``NeededNext`` summed over the compactions."""

    needed: int
    held: int

@type_check_only
class FidelityCheckpoint(TypedDict):
    """``fidelity``'s row for one checkpoint."""

    through_seq: int
    method: str
    summary_bytes: int
    kinds: Dict[str, FactFigures]
    needed_next: NeededNext

@type_check_only
class FidelityTranscriptCompaction(TypedDict):
    """``fidelity``'s row for one compaction the transcript itself recorded."""

    through_seq: int
    method: Literal["transcript"]
    needed_next: NeededNext

@type_check_only
class FidelityTotals(TypedDict):
    """``fidelity``'s last row: the totals."""

    session: str
    window: int
    checkpoints: int
    max_summary_bytes: int
    kinds: Dict[str, FactFigures]
    needed_next: NeededTotals
    transcript_needed_next: NeededTotals
    transcript_compactions: int

FidelityRow = Union[FidelityCheckpoint, FidelityTranscriptCompaction, FidelityTotals]

@type_check_only
class UsageAnchor(TypedDict):
    """The last usage a provider reported, against the estimate of the same view."""

    checkpoint_through: Optional[int]
    last_seq: Optional[int]
    input_tokens: int
    estimated_tokens: int

@type_check_only
class SessionInfo(TypedDict):
    """A session's summary (native ``SessionInfo``); ``latest_checkpoint`` is ``[through, method]``."""

    name: str
    family: str
    created_at: int
    updated_at: int
    messages: int
    last_seq: int
    total_tokens: int
    checkpoints: int
    latest_checkpoint: Optional[List[Union[int, str]]]
    offloads: int
    turns: int
    usage_anchor: Optional[UsageAnchor]

@type_check_only
class OffloadRecord(TypedDict):
    """A tool output written to a file (native ``OffloadRecord``)."""

    seq: int
    tool_call_id: Optional[str]
    relative_path: str
    bytes: int
    lines: int
    is_error: bool

@type_check_only
class Recorded(TypedDict):
    """One message ``append`` recorded: its number, its estimate, its offload if any."""

    seq: int
    tokens: int
    offload: Optional[OffloadRecord]

# "from" is a keyword, so the functional form.
Fork = TypedDict("Fork", {"from": int, "at": int, "reason": str})

@type_check_only
class AppendedNew(TypedDict):
    """``append_new``'s result: the session written to, the messages held, those appended, forks."""

    session: str
    held: int
    appended: List[Recorded]
    forks: List[Fork]

@type_check_only
class ViewStats(TypedDict):
    """What a view holds and how it was made (core ``ViewStats``)."""

    tier: Optional[str]
    system_tokens: int
    summary_tokens: int
    message_tokens: int
    nudge_tokens: int
    total_tokens: int
    calibrated_tokens: Optional[int]
    budget_tokens: int
    trigger_tokens: int
    low_water_tokens: int
    fits: bool
    messages: int
    checkpoint_through: Optional[int]
    checkpoint_method: Optional[str]
    last_seq: Optional[int]
    dropped_messages: int
    cleared_results: int
    cut_messages: int
    offload_references: int
    nudges: List[str]
    repair: Dict[str, Any]
    dropped_facts: Dict[str, Any]
    cache_breakpoints: List[Dict[str, Any]]
    refused_usage: NotRequired[Dict[str, Any]]
    fallbacks: NotRequired[List[Dict[str, Any]]]

@type_check_only
class TokensEstimated(TypedDict):
    """Event: the view's estimate against the budget."""

    event: Literal["tokens_estimated"]
    session: str
    estimated_tokens: int
    calibrated_tokens: Optional[int]
    budget_tokens: int
    fits: bool

@type_check_only
class TokensReported(TypedDict):
    """Event: the provider's usage recorded."""

    event: Literal["tokens_reported"]
    session: str
    input_tokens: int
    estimated_tokens: int

@type_check_only
class UsageRefused(TypedDict):
    """Event: a reported usage refused as implausible."""

    event: Literal["usage_refused"]
    session: str
    input_tokens: int
    estimated_tokens: int
    reason: str

@type_check_only
class SummaryRequested(TypedDict):
    """Event: a summary asked for."""

    event: Literal["summary_requested"]
    session: str
    after_seq: Optional[int]
    through_seq: int
    messages: int
    covered_tokens: int

@type_check_only
class BackgroundSummaryStarted(TypedDict):
    """Event: a summary started in the background."""

    event: Literal["background_summary_started"]
    session: str
    after_seq: Optional[int]
    through_seq: int

@type_check_only
class Compacted(TypedDict):
    """Event: a checkpoint made."""

    event: Literal["compacted"]
    session: str
    method: str
    through_seq: int
    summary_tokens: int

@type_check_only
class MemoriesExtracted(TypedDict):
    """Event: memories extracted from the log."""

    event: Literal["memories_extracted"]
    session: str
    added: int
    duplicates: int
    rejected: int

@type_check_only
class Offloaded(TypedDict):
    """Event: a tool output written to a file."""

    event: Literal["offloaded"]
    session: str
    seq: int
    relative_path: str
    bytes: int

@type_check_only
class SummarizerUsage(TypedDict):
    """Event: what the summarizer's LLM calls used."""

    event: Literal["summarizer_usage"]
    session: str
    input_tokens: int
    output_tokens: int
    iterations: int

@type_check_only
class WarningEvent(TypedDict):
    """Event: something went wrong and a fallback was taken."""

    event: Literal["warning"]
    session: Optional[str]
    kind: str
    message: str

Event = Union[
    TokensEstimated, TokensReported, UsageRefused, SummaryRequested, BackgroundSummaryStarted,
    Compacted, MemoriesExtracted, Offloaded, SummarizerUsage, WarningEvent,
]

@type_check_only
class Prepared(TypedDict):
    """``prepare``'s result: the view in ``format``, its system prompt, stats and events."""

    session: str
    format: str
    messages: Json
    system_prompt: str
    stats: ViewStats
    compacted: Optional[str]
    events: List[Event]

@type_check_only
class ToolDefinition(TypedDict):
    """A history tool's definition (core ``ToolDefinition``)."""

    name: str
    description: str
    parameters: Dict[str, Any]

@type_check_only
class OffloadPage(TypedDict):
    """A page of an offloaded output."""

    text: str
    offset: int
    lines: int
    more: bool

@type_check_only
class LogEntry(TypedDict):
    """One message of the log with its number and estimate (core ``Entry``); ``message`` has
    ``Message``'s keys (a plain dict type so it passes where a ``Dict[str, Any]`` is asked)."""

    seq: int
    message: Dict[str, Any]
    tokens: int

@type_check_only
class TailEntry(TypedDict):
    """One message of the log's tail with its number."""

    seq: int
    message: Dict[str, Any]

@type_check_only
class Tail(TypedDict):
    """The log's last messages (``Engine.tail``): its last seq and its last entries, oldest first."""

    last_seq: int
    entries: List[TailEntry]

@type_check_only
class SessionExport(TypedDict):
    """A whole session (core ``Session``): the log, checkpoints and the turn state."""

    family: str
    entries: List[LogEntry]
    checkpoints: List[Dict[str, Any]]
    nudge_state: Dict[str, Any]
    usage_anchor: Optional[UsageAnchor]
    refused_usage: NotRequired[Dict[str, Any]]
    summarizer_breaker: NotRequired[Dict[str, Any]]
    frozen_prompt: NotRequired[Dict[str, Any]]

@type_check_only
class MemoryRecord(TypedDict):
    """A stored memory (native ``MemoryRecord``)."""

    id: int
    project: Optional[str]
    title: str
    content: str
    category: str
    importance: int
    tags: List[str]
    scope: str
    source: str
    created_at: int
    updated_at: int
    expires_at: Optional[int]
    use_count: int
    disabled_at: Optional[int]
    approved_at: Optional[int]
    quarantine: Optional[str]

__version__: str
__all__ = [
    "__version__", "Engine", "parse", "render", "repair", "validate", "estimate_tokens",
    "import_transcript", "cost", "fidelity", "message_fingerprint", "held_prefix",
]

def parse(messages: Messages, format: Format = "openai") -> List[Message]: ...
def render(messages: Messages, to: Format = "openai", format: Format = "ctxkit") -> Json: ...
def repair(messages: Messages, format: Format = "ctxkit") -> Json: ...
def validate(request: Json, format: Format = "openai") -> List[Violation]: ...
def estimate_tokens(
    input: Union[str, Dict[str, Any], List[Dict[str, Any]]],
    family: Family = "claude",
    format: Format = "ctxkit",
) -> int: ...
def import_transcript(source: Source, format: Optional[str] = None) -> ImportedTranscript: ...
def message_fingerprint(messages: Messages, format: Format = "ctxkit") -> str: ...
def held_prefix(held: Dict[str, Any], incoming: int, fingerprint_at: Callable[[int], str]) -> Dict[str, Any]: ...
def cost(
    source: Source,
    *,
    window: int = 200_000,
    model: Optional[str] = None,
    format: Optional[str] = None,
    index: int = 0,
) -> List[CostRow]: ...
def fidelity(
    source: Source,
    *,
    window: int = 32_000,
    family: Family = "claude",
    format: Optional[str] = None,
    index: int = 0,
) -> List[FidelityRow]: ...

# A PyO3 class: built by __new__ (no __init__), and not a base to mix with another native one.
@disjoint_base
class Engine:
    # max_input_bytes defaults to 256 MiB (268435456).
    def __new__(
        cls,
        db: Optional[Union[str, "os.PathLike[str]"]] = None,
        workdir: Optional[Union[str, "os.PathLike[str]"]] = None,
        *,
        window: Optional[int] = None,
        budget: Optional[Dict[str, Any]] = None,
        policy: Optional[Dict[str, Any]] = None,
        offload: Union[bool, Dict[str, Any], None] = None,  # None: as True
        prompt: Optional[Dict[str, Any]] = None,
        summarize: Optional[Summarize] = None,
        timeout: float = ...,  # 60 seconds
        extract_memories: bool = False,
    ) -> Self: ...
    def close(self) -> None: ...
    def create_session(self, name: str) -> SessionInfo: ...
    def sessions(self) -> List[SessionInfo]: ...
    def session_info(self, name: str) -> SessionInfo: ...
    def import_session(self, name: str, messages: Messages, format: Format = "ctxkit", *, max_input_bytes: int = ...) -> SessionInfo: ...
    def append(self, session: str, messages: Messages, format: Format = "ctxkit", *, max_input_bytes: int = ..., key: Optional[str] = None, after: Optional[int] = None) -> List[Recorded]: ...
    def append_new(self, session: str, messages: Messages, format: Format = "ctxkit", *, max_input_bytes: int = ...) -> AppendedNew: ...
    def prepare(
        self,
        session: str,
        *,
        format: Format = "openai",
        summarize: Optional[Summarize] = None,
        timeout: Optional[float] = None,
        cached: bool = False,
        event_loop: Optional[asyncio.AbstractEventLoop] = None,
        context_prompt: Optional[bool] = None,
        tools: Optional[List[Dict[str, Any]]] = None,
    ) -> Prepared: ...
    def view(self, session: str, *, format: Format = "openai") -> Json: ...
    def record_usage(self, session: str, turn: Mapping[str, Any], input_tokens: int) -> Event: ...
    @property
    def paging_tool(self) -> Optional[str]: ...
    def history_tools(self) -> List[ToolDefinition]: ...
    def execute_tool(self, session: str, call: Dict[str, Any]) -> Message: ...
    def read_offload(self, session: str, seq: int, offset: int = 0, limit: int = 200) -> OffloadPage: ...
    def offloads(self, session: str) -> List[OffloadRecord]: ...
    def tail(self, session: str, count: int) -> Tail: ...
    def export(self, session: str) -> SessionExport: ...
    def add_memory(self, memory: Dict[str, Any]) -> MemoryRecord: ...
    def memories(
        self, *, include_disabled: bool = False, include_expired: bool = False, limit: int = 1000
    ) -> List[MemoryRecord]: ...
    def search_memories(self, text: str, limit: int = 20) -> List[MemoryRecord]: ...
    def remove_memory(self, id: int) -> bool: ...
    def memory_precis(self) -> str: ...
