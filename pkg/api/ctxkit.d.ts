/* tslint:disable */
/* eslint-disable */

/**
 * A group of models that tokenize alike: `"openai"` (o200k models, and the nearest guess for
 * OpenAI-compatible servers), `"claude"` (Claude 3 to Opus 4.6, Sonnet 4.x, Haiku 4.5),
 * `"claude-4.7"` (Opus 4.7 and later).
 */
export type ModelFamily = "openai" | "claude" | "claude-4.7";



/**
 * Anthropic's server compaction (beta `compact-2026-09-04`) for this summary: POST `body` (add
 * `model`) to `/v1/messages` with `headers` (add `anthropic-version` and the API key). `body`
 * is the turn's own Anthropic request (`system` and `messages` with their cache breakpoints,
 * or `request.system` and `request.prompt` without `cache_safe_messages`) plus
 * `compaction: {type: "summarize"}`; never `context_management`.
 */
export interface AnthropicCompactionRequest {
    headers: { "anthropic-beta": string };
    body: Record<string, unknown>;
}

/**
 * OpenAI Responses compaction for this summary: POST `body` (add `model`) to `/v1/responses`
 * with your API key. `body` is the turn's own request as Responses items (the previous
 * checkpoint's compaction item first, when the session has one) with
 * `{type: "compaction_trigger"}` as the last input item and `store: false`.
 */
export interface ResponsesCompactionRequest {
    body: Record<string, unknown>;
}

/** The argument of `prepare`'s `summarize`: the summary request, and its server-compaction forms. */
export interface SummarizerRequest extends SummaryRequest {
    anthropic_compaction: AnthropicCompactionRequest;
    responses_compaction: ResponsesCompactionRequest;
}

/**
 * A server-compaction answer: the Messages response to `request.anthropic_compaction`, parsed
 * or as its JSON text. Its `compaction` block's text becomes the summary (held to the pinned
 * facts) and the block is kept beside the checkpoint, sent first in `"anthropic"` views only; a
 * refused or malformed response falls back to the extractive summary, saying why.
 */
export interface AnthropicCompactionAnswer {
    anthropic_compaction: unknown;
}

/**
 * A Responses compaction answer: the response to `request.responses_compaction`, parsed or as
 * its JSON text. Its one opaque `compaction` item is kept beside the checkpoint, whose
 * plaintext summary is the extractive one; the item is sent in `"responses"` views only, in
 * the summary's place. A refusal or any other shape falls back, saying why.
 */
export interface ResponsesCompactionAnswer {
    responses_compaction: unknown;
}




/** A skill the agent can use. */
export interface Skill {
    /** A skill without a name is left out. */
    name: string;
    /** When to use it, in one line (without one, the skill is listed by name only). */
    description?: string;
}

/** How the model reads an offloaded output back (default: that of the default `OffloadPolicy`). */
export interface OffloadGuidance {
    folder: string;
    paging_tool: string;
    offset_param: string;
    limit_param: string;
}

/** Everything a system prompt is made of. Only `date` is required. */
export interface PromptParts {
    /** The role text (default: a general software-agent role). */
    base?: string | null;
    working_directory?: string;
    /** Today's date, `YYYY-MM-DD`. */
    date: string;
    agents_md?: string | null;
    /** AGENTS.md is cut to this many bytes, marker included (default 16,384). */
    agents_md_max_bytes?: number;
    skills?: Skill[];
    todo_guidance?: string | null;
    offload_guidance?: Partial<OffloadGuidance> | null;
    /** Add `## Conversation History` (the Engine's history tools); set it once `engine.latestCheckpoint` is not null (default false). */
    history_guidance?: boolean;
    /** The memory precis (see `renderPrecis`). */
    memory_precis?: string | null;
}

/** The system prompt's parts an Engine froze with its latest checkpoint (its state's `frozen_prompt`). */
export interface FrozenParts {
    /** The latest checkpoint's `through_seq` when they were frozen; null before any. */
    checkpoint_through: number | null;
    date: string;
    agents_md: string | null;
    memory_precis: string | null;
}



/** A tool as a model is offered it, in no provider's shape: `parameters` is its JSON schema. */
export interface ToolDefinition {
    name: string;
    description: string;
    parameters: { [key: string]: Json };
}

/** The shape `historyTools` returns the tools in. */
export type ToolFormat = "ctxkit" | "openai" | "anthropic";

/** A tool call to execute: ctxkit's shape, OpenAI's, or an Anthropic `tool_use` block. */
export type ExecutableToolCall =
| ToolCall
| OpenAIToolCall
| { type: "tool_use"; id: string; name: string; input: { [key: string]: Json } };

/** Options of `executeTool`, for `read_offload` (the Engine keeps no files). */
export interface ExecuteToolOptions {
    /** Reads an offloaded output's file, given its path relative to the working directory (default: the reader of the engine's `setOffload` writer, with its session and folder). */
    read_file?: (path: string) => string;
    /** The session name the outputs were offloaded under (`planOffload`'s); any when omitted. */
    session?: string;
    /** The offload folder (default that of the default `OffloadPolicy`). */
    offload_folder?: string;
}



/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Who wrote a message. */
export type Role = "system" | "user" | "assistant" | "tool";
/** A provider or library format, for opaque blocks and for `validate`. */
export type Provider = "openai" | "anthropic" | "responses" | "gemini" | "ai-sdk" | "langchain";

/** Fields of a message or call that only one format has, kept for that format. */
export interface ProviderFields {
    provider: Provider;
    fields: { [key: string]: Json };
}

/** Where an image's bytes are. */
export type ImageSource =
| { type: "base64"; media_type: string; data: string }
| { type: "url"; url: string };

/** One piece of a message's content. */
export type Part =
| { type: "text"; text: string }
| { type: "image"; source: ImageSource; detail?: string | null }
| { type: "thinking"; thinking: string; signature: string }
/** A provider block ctxkit does not model, kept verbatim and sent back only to its provider. */
| { type: "opaque"; provider: Provider; block: Json };

/** A message's content: plain text, or a list of parts (`null` reads as empty text). */
export type Content = string | Part[];

/** A tool call an assistant made; `arguments` is JSON text. */
export interface ToolCall {
    id: string;
    name: string;
    arguments: string;
    provider_fields?: ProviderFields | null;
}

/**
 * One message in the ctxkit form (the serde form of `ctxkit_core::Message`). A tool result is
 * `role: "tool"` with the `tool_call_id` it answers; `is_error` says the tool failed. Empty
 * fields are omitted on output; unknown fields are errors on input.
 */
export interface Message {
    role: Role;
    content?: Content | null;
    tool_calls?: ToolCall[];
    tool_call_id?: string | null;
    is_error?: boolean;
    name?: string | null;
    provider_fields?: ProviderFields | null;
}

/**
 * A Chat Completions content part as ctxkit writes it: the official SDK's part types (text,
 * image, audio, file, refusal), so a view's messages are the `openai` package's
 * `ChatCompletionMessageParam`s with no cast. (Other parts are only written back to the format
 * they came from, as they were.)
 */
export type OpenAIContentPart =
| { type: "text"; text: string }
| { type: "image_url"; image_url: { url: string; detail?: "auto" | "low" | "high" } }
| { type: "input_audio"; input_audio: { data: string; format: "wav" | "mp3" } }
| { type: "file"; file: { file_data?: string; file_id?: string; filename?: string } };

/** A Chat Completions text part. */
export type OpenAITextPart = { type: "text"; text: string };

/** A Chat Completions function tool call, as ctxkit writes it. */
export interface OpenAIToolCall {
    id: string;
    type: "function";
    function: { name: string; arguments: string };
}

/** A Chat Completions message as ctxkit writes it (a view, `toOpenAI`). */
export type OpenAIMessage =
| { role: "system"; content: string | OpenAITextPart[]; name?: string }
| { role: "developer"; content: string | OpenAITextPart[]; name?: string }
| { role: "user"; content: string | OpenAIContentPart[]; name?: string }
| {
    role: "assistant";
    content?: string | (OpenAITextPart | { type: "refusal"; refusal: string })[] | null;
    tool_calls?: OpenAIToolCall[];
    refusal?: string | null;
    name?: string;
}
| { role: "tool"; content: string | OpenAITextPart[]; tool_call_id: string };

/**
 * A Chat Completions message as ctxkit reads it: any object with a `role` (the official
 * `ChatCompletionMessageParam`, a response's `ChatCompletionMessage`, or ctxkit's own); the
 * core checks the rest and names what is wrong.
 */
export type OpenAIMessageInput = OpenAIMessage | { role: string; content?: unknown };

/** A Chat Completions request body as ctxkit writes it. */
export interface OpenAIRequest {
    messages: OpenAIMessage[];
}

/** A Chat Completions request body, or any object with its `messages` (other fields are ignored). */
export interface OpenAIRequestInput {
    messages: readonly OpenAIMessageInput[];
}

/** An Anthropic text block. */
export type AnthropicTextBlock = { type: "text"; text: string };

/**
 * An Anthropic content block as ctxkit writes it: the official SDK's `ContentBlockParam`s, so
 * a view's messages are the `@anthropic-ai/sdk` package's `MessageParam`s with no cast.
 */
export type AnthropicBlock =
| AnthropicTextBlock
| {
    type: "image";
    source:
    | { type: "base64"; media_type: "image/jpeg" | "image/png" | "image/gif" | "image/webp"; data: string }
    | { type: "url"; url: string };
}
| { type: "tool_use"; id: string; name: string; input: unknown }
| {
    type: "tool_result";
    tool_use_id: string;
    content?: string | (AnthropicTextBlock | Extract<AnthropicBlock, { type: "image" }>)[];
    is_error?: boolean;
}
| { type: "thinking"; thinking: string; signature: string }
| { type: "redacted_thinking"; data: string };

/** An Anthropic message as ctxkit writes it. */
export interface AnthropicMessage {
    role: "user" | "assistant";
    content: string | AnthropicBlock[];
}

/**
 * An Anthropic message as ctxkit reads it: a `role` and `content` (the official
 * `MessageParam`, or a response's `role` and `content` blocks, `RedactedThinkingBlock`
 * included); the core checks the blocks and keeps the ones it does not model verbatim.
 */
export type AnthropicMessageInput = AnthropicMessage | { role: string; content: unknown };

/** An Anthropic Messages request's `system` and `messages`, as `toAnthropic` writes them. */
export interface AnthropicRequest {
    system?: string | AnthropicTextBlock[];
    messages: AnthropicMessage[];
}

/** An Anthropic Messages request's `system` and `messages` as ctxkit reads them (other fields are ignored). */
export interface AnthropicRequestInput {
    system?: string | readonly { type: string; text?: string }[];
    messages: readonly AnthropicMessageInput[];
}



/** One long-term memory. Every field has a default. */
export interface MemoryEntry {
    id?: string;
    title?: string;
    content?: string;
    category?: string;
    /** 1 (trivia) to 10 (never forget); higher ranks first. */
    importance?: number;
    /**
     * Where it came from (default `"agent"`). Memories from outside (a tool's output, an
     * extraction over the conversation, a document) rank below the user's and the agent's, and
     * are quarantined when their text addresses the model (see `memoryQuarantine`).
     */
    source?: "user" | "agent" | "tool" | "extracted" | "document";
    scope?: "project" | "global";
    /** Unix seconds (the core has no clock). */
    updated_at?: number;
    tags?: string[];
    /** A person approved it: rendered even when quarantined (default false). */
    approved?: boolean;
}

/** How much of the memory goes into a precis (default 30 entries, 5,120 bytes). */
export interface PrecisOptions {
    max_entries: number;
    max_bytes: number;
}



/** One rule a request breaks, as the provider would report it. */
export interface Violation {
    /** Where, in the provider's location syntax (`messages.3.content.1`, `messages.[3]`). */
    at: string;
    /** What the provider would say. */
    message: string;
}



/** Options of `extractiveSummary`. */
export interface ExtractiveOptions {
    /** The previous checkpoint's summary, to merge into. */
    previous?: string | null;
    /** Bounds (default: 16 KiB, 15 recent calls, ...). */
    limits?: Partial<ExtractiveLimits>;
}



/** Options of `new Engine()`. */
export interface EngineOptions {
    /** The tokenizer family the log's estimates are cached for (default `"openai"`). */
    family?: ModelFamily;
    /** The most bytes one `append` may carry (default 268,435,456: 256 MiB, the CLI's and the Python engine's cap); more is refused, nothing appended. */
    maxInputBytes?: number | null;
}

/** The shape of messages given to `append`. */
export type MessageFormat = "ctxkit" | "openai" | "anthropic" | "responses" | "gemini" | "ai-sdk" | "langchain";

/** One message of the log, with its sequence number and cached token estimate. */
export interface Entry {
    seq: number;
    message: Message;
    tokens: number;
}

/** An engine's whole state, as `toJSON()` gives it and `Engine.fromJSON()` takes it. */
export interface EngineState {
    family: ModelFamily;
    entries: Entry[];
    checkpoints: Checkpoint[];
    nudge_state: NudgeState;
    usage_anchor: UsageAnchor | null;
    refused_usage?: RefusedUsage | null;
    /** The summarizer's circuit breaker (absent when closed with no timeout counted). */
    summarizer_breaker?: SummarizerBreaker;
    /** The system prompt's parts frozen with the latest checkpoint (absent before a turn given `prompt`). */
    frozen_prompt?: FrozenParts | null;
}

/**
 * The summarizer's circuit breaker: after 2 failures of `summarize` in a row (of any kind: a
 * timeout, a throw or rejection, a refusal, an unusable answer), the next 3 compactions (6,
 * 12, up to 24 after each further failure in a row) use the extractive summary without
 * calling it; then it is called again. A usable answer closes it. A state written with
 * `consecutive_timeouts` is read as the same count.
 */
export interface SummarizerBreaker {
    /** `summarize` calls in a row that failed. */
    consecutive_failures: number;
    /** Compactions left that skip `summarize`. */
    skip_compactions: number;
}

/** A checkpoint stored during a turn from a summary. */
export interface SummaryOutcome {
    method: SummaryMethod;
    through_seq: number;
    /** Why the summarizer's answer was not used (it threw, rejected, timed out, returned no string or one with a lone surrogate, an empty, oversized or untagged summary, or it was skipped by the circuit breaker): the reason of the summary's entry in `stats.fallbacks`. */
    fallback_reason: string | null;
}

/** A turn's result: its view in the asked shape, its stats, and the summary the turn stored, if any. */
export type TurnResult = RenderedView & {
    stats: ViewStats;
    summary: SummaryOutcome | null;
    /** What memory extraction gave: set by `prepare` with `extract` (`null` when the turn did not summarize, so nothing was asked). */
    extraction?: ExtractionResult | null;
    /** Set by `prepare` when its summarizer (or a background summary started by an earlier turn) answered but another turn had meanwhile stored a checkpoint: why the answer was dropped (also in `stats.fallbacks`, kind `"stale"`). */
    summary_dropped?: string;
    /** Set by `prepare` with `policy.background_percent`: `"started"` when it started `summarize` in the background (not awaited) for a later turn, `"used"` when this turn's checkpoint is one made that way. */
    background?: "started" | "used";
};

/** What an `AbortSignal` offers that ctxkit uses (the DOM's and Node's both fit). */
export interface AbortSignalLike {
    readonly aborted: boolean;
    readonly reason?: unknown;
    addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
    removeEventListener(type: "abort", listener: () => void): void;
}

/** What a callback of `prepare` gets besides its request. */
export interface CallbackContext {
    /** The `signal` of `prepare`'s options, to pass to the HTTP client. */
    signal?: AbortSignalLike;
}

/** The view type of each format. */
export interface ViewOfFormat {
    ctxkit: CtxkitView;
    openai: OpenAIView;
    anthropic: AnthropicView;
    responses: ResponsesView;
    gemini: GeminiView;
    "ai-sdk": AiSdkView;
    langchain: LangChainView;
}

/** A turn's result in the shape of `format` (what `view` and `prepare` return for it). */
export type TurnResultOf<F extends ViewFormat> = ViewOfFormat[F] & {
    dropped_state: number;
    stats: ViewStats;
    summary: SummaryOutcome | null;
    extraction?: ExtractionResult | null;
    summary_dropped?: string;
    background?: "started" | "used";
};

/**
 * `view` and `prepare` narrowed by `format`: `format: "openai"` gives an `OpenAIView`,
 * `"anthropic"` one with `system` (the class's own signatures take the ctxkit shape).
 */
export interface Engine {
    view<F extends ViewFormat>(options: TurnInputs & { format: F }): TurnResultOf<F>;
    prepare<F extends ViewFormat>(options: PrepareOptions & { format: F }): Promise<TurnResultOf<F>>;
}

/** Writes a summary for a request: ask an LLM with `request.system` and `request.prompt` (a string), or POST `request.anthropic_compaction` (an `AnthropicCompactionAnswer`) or `request.responses_compaction` (a `ResponsesCompactionAnswer`). */
export type Summarizer = (request: SummarizerRequest, context: CallbackContext) => Promise<string | AnthropicCompactionAnswer | ResponsesCompactionAnswer> | string | AnthropicCompactionAnswer | ResponsesCompactionAnswer;

/** Asks an LLM for memories: `request.system` and `request.prompt`; answer its text (a JSON array). */
export type Extractor = (request: ExtractionRequest, context: CallbackContext) => Promise<string> | string;

/** A memory extraction request (the core's, the same as native ctxkit's). */
export interface ExtractionRequest {
    system: string;
    prompt: string;
    max_output_tokens: number;
}

/** A memory the model proposed that passed the core's checks. */
export interface MemoryDraft {
    title: string;
    content: string;
    category: string;
    importance: number;
}

/** An item of the extractor's answer that was refused, and why. */
export interface RejectedDraft {
    index: number;
    reason: string;
}

/** The drafts an extraction answer gave and the items it rejected. */
export interface ExtractionOutcome {
    drafts: MemoryDraft[];
    rejected: RejectedDraft[];
}

/** A turn's memory extraction: store `outcome.drafts` with `source: "extracted"` (renderPrecis quarantines what addresses the model). */
export interface ExtractionResult {
    outcome: ExtractionOutcome;
    /** Why the extractor gave no answer (threw, rejected, timed out, returned no string). */
    failure_reason: string | null;
}

/** The options of `prepare`: a turn's options and the summarizer. */
export interface PrepareOptions extends TurnInputs {
    /** Called when the turn needs a summary; without it the extractive summary is used. */
    summarize?: Summarizer;
    /**
     * How long to wait for `summarize`, in milliseconds (1 to 2147483647, default 120000); past
     * it the turn uses the extractive summary and `summary.fallback_reason` says it timed out.
     */
    summarize_timeout_ms?: number;
    /**
     * Asked, before a summary, for the memories worth keeping from what the summary will cover;
     * its answer is checked by the core's rules and the accepted drafts are in `extraction`.
     */
    extract?: Extractor;
    /** Passed to `summarize` and `extract`; when it aborts, their answer is not waited for (the turn falls back). */
    signal?: AbortSignalLike;
}



/** Sizes that bound a view, in tokens. `usable = context_window - output_reserve - tool_schema_tokens - safety_margin`. */
export interface Budget {
    context_window: number;
    output_reserve: number;
    tool_schema_tokens: number;
    safety_margin: number;
    /** Compact when the view passes this share of the usable budget, in percent (1 to 100). */
    trigger_percent: number;
    /** A compaction brings the view down to this share, in percent (1 to `trigger_percent`). */
    low_water_percent: number;
    /** Compact above this many tokens even when the percentage allows more (what pays once prompt caching is counted); null: the percentage alone. */
    cost_trigger_tokens: number | null;
    /** A compaction brings the view down to at most this many tokens; null: the percentage alone. */
    cost_low_water_tokens: number | null;
}
/** A budget where every field has its default. */
export type BudgetOptions = Partial<Budget>;

/** How to bring an over-budget view down. */
export type Strategy =
| { kind: "summarize" }
| { kind: "sliding_window"; keep_last: number }
| { kind: "truncate" }
| { kind: "off" };

/** How much of each message a summary request's transcript keeps, in bytes. */
export interface TranscriptLimits {
    per_tool_output_bytes: number;
    per_tool_call_bytes: number;
    per_message_bytes: number;
    total_bytes: number;
}

/** Bounds on the extractive summary. */
export interface ExtractiveLimits {
    max_bytes: number;
    recent_calls: number;
    later_requests: number;
    decisions: number;
    errors: number;
    files: number;
    identifiers: number;
}

/** Which old tool results to clear before compacting. */
export interface ClearPolicy {
    keep_last_exchanges: number;
    batch_exchanges: number;
    exclude_tools: string[];
    min_bytes: number;
}

/** When to nudge, and what to say. */
export interface NudgePolicy {
    /** Memory nudge every this many turns; 0 turns it off. */
    memory_every_turns: number;
    /** Stall nudge after this many turns without a progress tool; 0 turns it off. */
    stall_after_turns: number;
    /** Tools whose use counts as progress (default the file-edit tools of common agents). */
    progress_tools: string[];
    /** Tools that save to long-term memory (default `save_memory`, `memory`, `remember`). */
    memory_tools: string[];
    /**
     * The names of the agent's tools, when known (the adapters set it): the stall nudge then runs
     * only if one is a progress tool, the memory nudge only if one is a memory tool. `null`: both
     * run as configured.
     */
    agent_tools: string[] | null;
    memory_text: string;
    /** `{turns}` is replaced by the number of turns. */
    stall_text: string;
}

/** Everything configurable about planning. */
export interface Policy {
    family: ModelFamily;
    strategy: Strategy;
    keep_last_messages: number;
    max_summary_tokens: number;
    /** A summary costs at most this share of the usable budget, in percent. */
    summary_share_percent: number;
    transcript: TranscriptLimits;
    extractive: ExtractiveLimits;
    clear_tool_results: ClearPolicy | null;
    nudges: NudgePolicy;
    summary_mode: SummaryMode;
    /** Background compaction's soft threshold, in percent of the way from the low-water mark to the trigger (null: off). */
    background_percent: number | null;
    /** With `cache_expired`, compact from this point, in percent of the way from the low-water mark to the trigger (default 25; null: as warm). */
    cold_trigger_percent: number | null;
    /** Idle compaction (`compact_if_idle`): compact a view above this point, in percent of the way from the low-water mark to the trigger, in the last `idle_margin_percent` of the cache lifetime (default 50; null: never). */
    idle_trigger_percent: number | null;
    /** The share of the cache lifetime, in percent, before its end at which an idle compaction runs (at least 30 s; default 10). */
    idle_margin_percent: number;
    /** The restore block a compaction keeps with its checkpoint: the latest content of the files read most recently before the cut, sent right after the summary (null: off). */
    restore: RestoreLimits | null;
    /** The directory the agent works in, when the caller knows it: every summary names it and writes paths relative to it (absent or null: the directory the log shows; a value that is not an absolute directory on one line is not taken). */
    working_directory?: string | null;
}

/**
 * How summary requests are meant to be sent: `"fresh"` (default) a fenced transcript under the
 * summarizer's own system prompt, for any model; `"cache_safe"` also the agent's own request
 * followed by one instruction (`SummaryRequest.cache_safe_messages`), for a summarizer that is
 * the agent's model, so the provider serves the history from its cache.
 */
export type SummaryMode = "fresh" | "cache_safe";

/** A policy where every field, at every level, has its default. */
export interface PolicyOptions {
    family?: ModelFamily;
    strategy?: Strategy;
    keep_last_messages?: number;
    max_summary_tokens?: number;
    summary_share_percent?: number;
    transcript?: Partial<TranscriptLimits>;
    extractive?: Partial<ExtractiveLimits>;
    clear_tool_results?: Partial<ClearPolicy> | null;
    nudges?: Partial<NudgePolicy>;
    summary_mode?: SummaryMode;
    background_percent?: number | null;
    cold_trigger_percent?: number | null;
    idle_trigger_percent?: number | null;
    idle_margin_percent?: number;
    restore?: Partial<RestoreLimits> | null;
    working_directory?: string | null;
}

/** One item of the agent's todo list. */
export interface TodoItem {
    content: string;
    status: "pending" | "in_progress" | "completed";
}

/** How a checkpoint's summary was made. */
export type SummaryMethod = "llm" | "extractive" | "truncation";

/** A summary of the log up to and including `through_seq`, stored beside the log. */
export interface Checkpoint {
    through_seq: number;
    summary: string;
    method: SummaryMethod;
    active_tasks?: string | null;
    tokens: number;
    made_at_turn: number;
    /** The facts the summary carries verbatim, kept as data for the next checkpoint. */
    pinned?: PinnedFact[];
    /** Pinned facts that summary caps dropped so far (the log keeps them). */
    dropped_facts?: DroppedFacts;
    /** Anthropic's signed compaction block (JSON text, byte for byte), sent only in Anthropic views. */
    compaction_block?: string | null;
    /** The restore block (the latest content of the files read before the checkpoint), rendered when it was made and sent byte for byte right after the summary in every view from it. */
    restore?: string | null;
}

/** What kind of fact a checkpoint pins. */
export type FactKind = "path" | "error" | "request" | "identifier" | "task" | "next_step";

/** A fact every checkpoint must carry verbatim: a path, an error line, a user request... */
export interface PinnedFact {
    kind: FactKind;
    text: string;
}

/** How many pinned facts of each kind summary caps dropped. */
export interface DroppedFacts {
    paths: number;
    errors: number;
    requests: number;
    identifiers: number;
}

/** A request for a summary: ask an LLM with `system` and `prompt`. */
export interface SummaryRequest {
    after_seq: number | null;
    through_seq: number;
    messages: number;
    covered_tokens: number;
    previous_summary: string | null;
    system: string;
    prompt: string;
    max_summary_tokens: number;
    /** The output cap for the summary call (its `max_tokens`): twice `max_summary_tokens`, at most 8,192. */
    max_output_tokens: number;
    turn: number;
    active_tasks: string | null;
    /** The restore block the checkpoint will keep (chosen with the cut). */
    restore: string | null;
    /** The facts the summary must carry verbatim; those an answer leaves out are appended. */
    pinned: PinnedFact[];
    dropped_facts: DroppedFacts;
    /** Wrap the summary in `<answer_tag>…</answer_tag>` (the prompt says so too). */
    answer_tag: string;
    /**
     * With `summary_mode: "cache_safe"`: the messages to send to the agent's own model (with its
     * tools) instead of `system` + `prompt`: the turn's system prompt, the conversation as the
     * previous call sent it, then the instruction. Absent in the fresh mode and when it would
     * not fit the window.
     */
    cache_safe_messages?: Message[];
    /** The policy's `working_directory`: the summary names it and writes paths relative to it. Absent when the policy has none. */
    working_directory?: string | null;
}

/** The session's nudge counters, carried from turn to turn. */
export interface NudgeState {
    turn: number;
    last_seq: number | null;
    turns_without_progress: number;
}

/** Which reminder. */
export type NudgeKind = "memory" | "stall";

/** The real size of one view, as the API reported it. */
export interface UsageAnchor {
    checkpoint_through: number | null;
    last_seq: number | null;
    input_tokens: number;
    estimated_tokens: number;
}

/** Which tier produced a view. */
export type Tier = "fits" | "cleared" | "summarized" | "window" | "truncated" | "uncompacted";

/** Where a view's tokens went and what the pipeline did to make it. */
export interface ViewStats {
    tier: Tier | null;
    system_tokens: number;
    summary_tokens: number;
    message_tokens: number;
    nudge_tokens: number;
    total_tokens: number;
    calibrated_tokens: number | null;
    budget_tokens: number;
    trigger_tokens: number;
    low_water_tokens: number;
    fits: boolean;
    messages: number;
    checkpoint_through: number | null;
    checkpoint_method: SummaryMethod | null;
    last_seq: number | null;
    dropped_messages: number;
    cleared_results: number;
    cut_messages: number;
    offload_references: number;
    nudges: NudgeKind[];
    repair: RepairReport;
    /** Pinned facts summary caps dropped so far, as the checkpoint in the view records them. */
    dropped_facts: DroppedFacts;
    /** Where the view's cache breakpoints are (rendered as markers with `cache: true`). */
    cache_breakpoints: CacheBreakpoint[];
    /** The last reported usage the calibration refused since it last took one (`recordUsage`). */
    refused_usage?: RefusedUsage | null;
    /** The LLM calls of this turn answered by a fallback, and why (absent when none was). */
    fallbacks?: Fallback[];
}

/** Which LLM call of a turn fell back: the summary (the extractive one was used) or the memory extraction (skipped). */
export type LlmCall = "summary" | "extraction";

/**
 * Why: the call failed (`error`), did not settle in time (`timeout`), the model declined
 * (`refused`), its answer was empty, oversized or without the request's tag (`unusable`), it
 * came after another turn stored a checkpoint over the same messages (`stale`), or it was not
 * made because the summarizer timed out too often in a row (`skipped`: the circuit breaker).
 */
export type FallbackKind = "error" | "timeout" | "refused" | "unusable" | "stale" | "skipped";

/** An LLM call of a turn answered by a fallback, and why. */
export interface Fallback {
    call: LlmCall;
    kind: FallbackKind;
    reason: string;
}

/** Why a cache breakpoint is where it is. */
export type BreakpointReason = "system" | "summary" | "previous_turn" | "last_message";

/** One cache breakpoint of a view. */
export interface CacheBreakpoint {
    reason: BreakpointReason;
    /** The view message it follows (an index into `messages`); null: the end of the system prompt. */
    after_message: number | null;
}

/** The input of `planTurn`: the log and the session state besides the turn options. */
export interface PlanInput extends TurnInputs {
    /** The whole log (or its tail after `checkpoint`), numbered from `first_seq`. */
    log: Message[];
    /** The `seq` of `log[0]` (default 1). */
    first_seq?: number | null;
    /** The latest checkpoint, if any. */
    checkpoint?: Checkpoint | null;
    /** The nudge state the previous turn returned. */
    nudge_state?: Partial<NudgeState> | null;
    /** The last real usage the API reported. */
    usage_anchor?: UsageAnchor | null;
}

/** What planning decided: a view ready to send, or a summary to ask for first. */
export type Plan =
| {
    kind: "ready";
    view: RenderedView;
    stats: ViewStats;
    /** Pass this as `nudge_state` next turn. */
    next_nudge_state: NudgeState;
    /** A truncation checkpoint to keep (the view already uses it). */
    new_checkpoint: Checkpoint | null;
}
| { kind: "summarize"; request: SummaryRequest };

/** The input of `summaryCheckpoint`. */
export interface SummaryCheckpointInput {
    request: SummaryRequest;
    /** What the summarizer wrote; omit or null when it failed (the extractive summary is used). */
    answer?: string | null;
    /** The same log (and `first_seq`) the request was planned from. */
    log: Message[];
    first_seq?: number | null;
    /** The policy the request was planned with (its family and extractive limits are used). */
    policy?: PolicyOptions | null;
}

/** A checkpoint made from a summarizer's answer, or the extractive summary and why. */
export interface SummaryCheckpoint {
    checkpoint: Checkpoint;
    /** Why the answer was not used, when there was one and it was refused. */
    fallback_reason: string | null;
}



/** The defaults of every option object. */
export interface Defaults {
    budget: Budget;
    policy: Policy;
    /** What `policy.clear_tool_results` means when it is set to `{}`. */
    clear_tool_results: ClearPolicy;
    offload: OffloadPolicy;
    offload_guidance: OffloadGuidance;
    precis: PrecisOptions;
}

/** The restore block's limits: the files read before a compaction, brought back after it. */
export interface RestoreLimits {
    /** At most this many files (default 5). */
    max_files: number;
    /** Each file's content at most this many tokens, cut at a line beyond (default 5,000). */
    per_file_tokens: number;
    /** The block at most this share of the usable budget, in percent (default 10). */
    share_percent: number;
    /** And at most this many tokens (default 25,000). */
    max_tokens: number;
}



/** The input of `advanceNudges`. */
export interface NudgeInput {
    /** The state the previous turn returned (default: a new session). */
    state?: Partial<NudgeState> | null;
    /** The log (default: none), numbered from `first_seq` (default 1); only messages after `state.last_seq` are read. */
    log?: Message[] | null;
    first_seq?: number | null;
    policy?: Partial<NudgePolicy> | null;
}

/** This turn's nudges and the state for the next turn. */
export interface NudgeOutcome {
    /** Messages to append at the end of the view, in order (never to the log). */
    messages: Message[];
    kinds: NudgeKind[];
    /** Pass this as `state` next turn. */
    next: NudgeState;
}



/** The provider usage shapes `recordUsage` reads. */
export type UsageShape = "anthropic" | "openai" | "ai-sdk";

/** What `recordUsage` did with a reported usage. */
export interface UsageVerdict {
    /** Whether it became the calibration anchor. */
    accepted: boolean;
    /** The whole input it counted. */
    input_tokens: number;
    /** Why it was refused (outside the plausible band of the estimate), else `null`. */
    reason: string | null;
}

/** A reported usage the calibration refused: outside the plausible band of the estimate. */
export interface RefusedUsage {
    input_tokens: number;
    estimated_tokens: number;
    lowest_plausible: number;
    highest_plausible: number;
}



/** The shape a view is returned in. */
export type ViewFormat = "ctxkit" | "openai" | "anthropic" | "responses" | "gemini" | "ai-sdk" | "langchain";

/** The inputs of one turn. Every field is optional; unknown keys are errors. */
export interface TurnInputs {
    /** This turn's system prompt (see `buildSystemPrompt`); never stored in the log. */
    system?: string;
    /**
     * The system prompt's parts, instead of `system`: an Engine freezes their date, AGENTS.md
     * and memory precis in its state with the latest checkpoint and uses those until the next
     * compaction, whose view takes the parts given then (set `history_guidance` as usual), so
     * every request between two compactions begins byte for byte like the one before.
     */
    prompt?: PromptParts | null;
    /** With `prompt`: use and freeze the parts given now, whatever is frozen. Default false. */
    refresh_prompt?: boolean;
    /**
     * The token budget (defaults: a 200k window). `output_reserve` and `safety_margin`, when left
     * out, scale with `context_window` (at most 16,384 and an eighth of it, 2,048 and a
     * sixty-fourth); reserves that reach the window are an error naming the numbers.
     */
    budget?: BudgetOptions;
    /** How to compact. Its `family`, if given, must be the engine's. */
    policy?: PolicyOptions;
    /** The agent's todo list: active items are frozen into a new checkpoint. */
    todos?: TodoItem[];
    /** The shape of the returned view (default `"ctxkit"`). */
    format?: ViewFormat;
    /**
     * Mark the view's cache breakpoints (`stats.cache_breakpoints`): with `format: "anthropic"`,
     * `cache_control: {type: "ephemeral"}` on the end of the system prompt, of the checkpoint
     * summary, of the previous turn and of the conversation before its nudges; with
     * `format: "responses"` or `"openai"`, OpenAI's `prompt_cache_breakpoint: {mode: "explicit"}`
     * on the last input part each one ends (GPT-5.6 and later: at most four, never on assistant
     * output, none under 1,024 tokens; older OpenAI models cache prefixes by themselves and may
     * refuse the field). The other shapes have no markers. Default false.
     */
    cache?: boolean;
    /**
     * The provider's cache of the previous request has expired (more than its lifetime, five
     * minutes for Anthropic's default, since your last model call): the next call rewrites the
     * whole prefix anyway, so the turn compacts from the policy's lower `cold_trigger_percent`.
     * Default false.
     */
    cache_expired?: boolean;
}

/**
 * A view in the ctxkit shape: the system prompt apart, then the messages. In an Engine's views
 * (ctxkit and OpenAI shapes) the message objects are frozen: unchanged ones are shared with
 * later views. Copy one (`structuredClone`) to change it.
 */
export interface CtxkitView {
    format: "ctxkit";
    system: string;
    messages: Message[];
}
/** A view as OpenAI Chat Completions `messages` (the system prompt first). */
export interface OpenAIView {
    format: "openai";
    messages: OpenAIMessage[];
}
/** A view as an Anthropic Messages request's `system` and `messages`. */
export interface AnthropicView {
    format: "anthropic";
    system?: string | AnthropicTextBlock[];
    messages: AnthropicMessage[];
}
/** A view as an OpenAI Responses request's `instructions` and `input` items. */
export interface ResponsesView {
    format: "responses";
    instructions?: string;
    input: { [key: string]: Json }[];
}
/** A view as a Gemini `generateContent` request's `systemInstruction` and `contents`. */
export interface GeminiView {
    format: "gemini";
    systemInstruction?: { parts: { [key: string]: Json }[] };
    contents: { role: "user" | "model"; parts: { [key: string]: Json }[] }[];
}
/** A view as Vercel AI SDK `ModelMessage`s (the system prompt first). */
export interface AiSdkView {
    format: "ai-sdk";
    messages: { role: "system" | "user" | "assistant" | "tool"; content: string | { [key: string]: Json }[]; [key: string]: Json }[];
}
/** A view as LangChain message dicts (`{type, content, tool_calls...}`, the system prompt first). */
export interface LangChainView {
    format: "langchain";
    messages: { type: "system" | "human" | "ai" | "tool"; content: string | { [key: string]: Json }[]; [key: string]: Json }[];
}
/** A view in one of the seven shapes, with what rendering it in that shape left out. */
export type RenderedView = (
| CtxkitView
| OpenAIView
| AnthropicView
| ResponsesView
| GeminiView
| AiSdkView
| LangChainView
) & {
    /**
     * Pieces of provider-bound state (reasoning signatures, encrypted reasoning, Gemini thought
     * parts, another format's provider fields) that this shape cannot carry and the view dropped;
     * 0 in the ctxkit shape and when every message came from this shape.
     */
    dropped_state: number;
};



/** What a repair changed. */
export interface RepairReport {
    /** Results dropped: orphaned, duplicated, or answering an unknown id. */
    dropped_results: number;
    /** Results moved up to their call from later in the same exchange. */
    moved_results: number;
    /** Placeholder results inserted for calls without one. */
    missing_results: number;
    /** Blank results given a short placeholder. */
    empty_results: number;
    /** Tool-call ids rewritten because they repeated or broke `^[a-zA-Z0-9_-]+$`. */
    renamed_ids: number;
    /** Blank messages dropped. */
    dropped_blank: number;
    /** Whether a leading user message was inserted. */
    inserted_leading_user: boolean;
}

/** The repaired messages and what the repair changed. */
export interface Repaired {
    messages: Message[];
    report: RepairReport;
}



/** When and how tool outputs are offloaded. */
export interface OffloadPolicy {
    /** Outputs over this many bytes are offloaded (default 10,000). */
    threshold_bytes: number;
    /** Never offloaded (default `read_file`, `write_file`, `edit_file`); the paging tool and the history tools never are, whatever this says. */
    excluded_tools: string[];
    /** The tool the model pages the file with, and its parameters (default `read_file`, `offset`, `limit`). */
    paging_tool: string;
    offset_param: string;
    limit_param: string;
    head_max_lines: number;
    head_max_bytes: number;
    tail_max_lines: number;
    tail_max_bytes: number;
    /** Relative to the working directory, `/`-separated (default `.ctxkit/tool_results`). */
    folder: string;
    /** An absolute folder the reference names the file under, for an agent whose tools run elsewhere (default empty: the relative path). */
    reference_root: string;
    /** A shell command that pages the file, `{path}` in it, for an agent whose only reader is its shell (default empty: call `paging_tool`). */
    paging_command: string;
}

/** The input of `planOffload`. */
export interface OffloadInput {
    /** The `seq` the result has (or will have) in the log (`engine.nextSeq` before appending it). */
    seq: number;
    /** The session's name (sanitized into a folder name). */
    session: string;
    /** The tool result message. */
    result: Message;
    /** The tool that produced it (default: the message's `name`). */
    tool_name?: string | null;
    policy?: Partial<OffloadPolicy>;
}

/** What to do with one big tool output: write `content` to `relative_path`, then keep `reference` instead of the output. */
export interface OffloadPlan {
    file_name: string;
    relative_path: string;
    content: string;
    bytes: number;
    lines: number;
    is_error: boolean;
    head: string;
    tail: string;
    reference: Message;
}



/** Where an Engine writes offloaded outputs: paths are relative to the working directory. */
export interface OffloadWriter {
    /** Writes `content` to `path` (throw to keep the output in the log instead). */
    write(path: string, content: string): void;
    /** Reads what `write` wrote (for `read_offload`). */
    read(path: string): string;
}

/** The options of `engine.setOffload`. */
export interface OffloadOptions {
    /** The session's name: outputs go under `<folder>/<session>/` (sanitized). */
    session: string;
    /** Writes and reads the files. */
    writer: OffloadWriter;
    /** When and how to offload (defaults: over 10,000 bytes, paged with `read_file` when `agent_tools` has it, else with the Engine's own `read_offload`). */
    policy?: Partial<OffloadPolicy>;
    /** The agent's tools: the references page with `read_file` only when it is one of them. */
    agent_tools?: string[];
}



/** `compactIfIdle`'s options: a turn's (`prepare`'s) and the idle time. */
export type IdleOptions = PrepareOptions & {
    /** Seconds since the session's last model call (the caller's clock). */
    idle_seconds: number;
    /** The provider's cache lifetime in use, in seconds (default 300). */
    ttl_seconds?: number;
};

/** What an idle check decided (the core's `IdleDecision`). */
export type IdleDecision =
| { action: "compact"; budget: Budget; expired: boolean }
| { action: "wait"; seconds: number }
| { action: "skip"; reason: { kind: "off" } | { kind: "no_lifetime" } | { kind: "below_floor"; view_tokens: number; floor_tokens: number } };

/** What `compactIfIdle` did: the decision, the view it measured, and the compaction's turn. */
export interface IdleResult {
    decision: IdleDecision;
    view_tokens: number;
    result: TurnResultOf<"ctxkit"> | null;
}



/**
 * A session kept in wasm memory: its log, checkpoints and nudge counters.
 */
export class Engine {
    free(): void;
    [Symbol.dispose](): void;
    /**
     * Appends messages to the log (`format`: the shape they are in, default `"ctxkit"`) and
     * returns the `seq` each stored message got. Nothing is appended when any message is bad.
     * With an offload set (`setOffload`), big tool outputs are written through its writer and
     * stored as references.
     */
    append(messages: readonly Message[] | readonly OpenAIMessageInput[] | readonly AnthropicMessageInput[] | readonly unknown[], format?: MessageFormat): number[];
    /**
     * Compaction ahead of the cache's expiry, for the loop's timer while the user is away:
     * `options` are `prepare`'s plus `idle_seconds` (since the last model call, by the
     * caller's clock) and `ttl_seconds` (the cache lifetime in use, default 300). In the last
     * `policy.idle_margin_percent` of the lifetime, a session whose next view is above the
     * idle floor is compacted now (asking `summarize`), so the next turn writes the small
     * prefix; otherwise `decision` says how long to wait or why not, and nothing changes.
     */
    compactIfIdle(options: IdleOptions): Promise<IdleResult>;
    /**
     * Executes a call of one of the history tools and returns its tool message (ctxkit shape,
     * answering the call's id; `is_error` when the call's arguments were wrong). Throws for a
     * call of another tool.
     */
    executeTool(call: ExecutableToolCall, options?: ExecuteToolOptions): Message;
    /**
     * An engine from a state `toJSON()` gave (the object, or its JSON text). The state is
     * checked: entries in increasing `seq` order, checkpoints moving forward within the log.
     */
    static fromJSON(state: EngineState | string): Engine;
    /**
     * The history tools to offer the model, in ctxkit's shape (`{name, description,
     * parameters}`), or ready for an OpenAI or Anthropic `tools` array.
     */
    historyTools(format?: ToolFormat): ToolDefinition[] | Json[];
    /**
     * An empty session whose estimates are for `options.family` (default `"openai"`).
     */
    constructor(options?: EngineOptions);
    /**
     * This turn's view, asking `options.summarize` for a summary when the turn needs one;
     * falls back to the extractive summary when it throws, rejects or returns something
     * unusable, or does not settle within `options.summarize_timeout_ms` (default 120,000; the
     * result's `summary.fallback_reason` says why). Rejects, leaving the engine as it was, on
     * bad options.
     */
    prepare(options?: PrepareOptions & { format?: "ctxkit" }): Promise<TurnResultOf<"ctxkit">>;
    /**
     * What `read_history` answers for the seqs `from` to `to` (default `from + 9`; at most 40
     * messages): the messages as a transcript, bounded, saying where to continue.
     */
    readHistory(from: number, to?: number): string;
    /**
     * Records the real input tokens the API reported for the view whose stats are given:
     * later views are counted from that number plus estimates of what was appended since.
     * `usage` is a count, or the provider's usage object as it came back with `shape` naming
     * it (`"anthropic"`, `"openai"`, `"ai-sdk"`): its whole input is counted, uncached + cache
     * reads + cache writes. A count outside the plausible band of the estimate is refused
     * (the answer says why, and the next views' `stats.refused_usage`); bad input throws.
     */
    recordUsage(stats: ViewStats, usage: number | Record<string, unknown>, shape?: UsageShape): UsageVerdict;
    /**
     * What `search_history` answers for `query` (at most `limit` hits, default 10, at most
     * 25): the hits with their seq and a snippet, exact matches first, in the log and in the
     * outputs the `setOffload` writer reads back (a hit there gives the `read_offload` call
     * that pages to its line). Throws on a blank or too long query.
     */
    searchHistory(query: string, limit?: number): string;
    /**
     * Makes `append` offload big tool outputs through `options.writer` (see the module doc);
     * `null` turns it off. The session name and policy are checked now.
     */
    setOffload(options: OffloadOptions | null): void;
    /**
     * The whole state as a plain object (`JSON.stringify(engine)` uses it).
     */
    toJSON(): EngineState;
    /**
     * This turn's view, without an LLM: a needed summary is made by the extractive
     * summarizer. Advances the turn (nudge counters) and keeps any checkpoint it made.
     */
    view(options?: TurnInputs & { format?: "ctxkit" }): TurnResultOf<"ctxkit">;
    /**
     * The tokenizer family of the session.
     */
    readonly family: ModelFamily;
    /**
     * Why the last `append` kept outputs in the log instead of offloading them (the writer
     * threw), one line each; empty when every planned output was written.
     */
    readonly lastOffloadErrors: string[];
    /**
     * The checkpoint views start from, or `null`.
     */
    readonly latestCheckpoint: Checkpoint | null;
    /**
     * How many messages the log holds.
     */
    readonly length: number;
    /**
     * The `seq` the next appended message will get (for `planOffload`).
     */
    readonly nextSeq: number;
}

/**
 * Advances the nudge state by one turn and returns this turn's reminders.
 */
export function advanceNudges(input: NudgeInput): NudgeOutcome;

/**
 * Builds the system prompt from its parts. Throws when the date is not a real `YYYY-MM-DD`
 * date.
 */
export function buildSystemPrompt(parts: PromptParts): string;

/**
 * The defaults of every option object.
 */
export function defaults(): Defaults;

/**
 * Estimated tokens of a text, a message, or a list of messages, for a model family (default
 * `"openai"`).
 */
export function estimateTokens(input: string | Message | Message[], family?: ModelFamily): number;

/**
 * Summarizes messages without an LLM, merging the previous summary if one is given.
 */
export function extractiveSummary(messages: Message[], options?: ExtractiveOptions): string;

/**
 * Reads an Anthropic Messages request (`{system?, messages}`) or a bare `messages` array into
 * ctxkit messages: each `tool_result` block becomes its own tool message.
 */
export function fromAnthropic(request: AnthropicRequestInput | readonly AnthropicMessageInput[]): Message[];

/**
 * Reads Chat Completions `messages` (an array, or a request body holding one) into ctxkit
 * messages.
 */
export function fromOpenAI(messages: readonly OpenAIMessageInput[] | OpenAIRequestInput): Message[];

/**
 * Why `entry` is quarantined (kept out of every precis until `approved`), or `undefined`:
 * text from a tool's output, an extraction or a document that addresses the model.
 */
export function memoryQuarantine(entry: MemoryEntry): string | undefined;

/**
 * For each of `messages` (in `format`, default `"ctxkit"`), the fingerprints (16 hex digits)
 * of the ctxkit messages it reads as: one for most messages, several for a framework message
 * that holds several (an AI SDK tool message with two results), none for one that holds
 * nothing.
 */
export function messageFingerprints(messages: readonly unknown[], format?: MessageFormat): string[][];

/**
 * Plans the offload of one tool result: `null` when it stays as it is (not a tool result,
 * not over the threshold, or from an excluded tool).
 */
export function planOffload(input: OffloadInput): OffloadPlan | null;

/**
 * Plans one turn over a whole log: a ready view in the asked format, or a summary request.
 */
export function planTurn(input: PlanInput): Plan;

/**
 * Renders the memory precis: one markdown line per memory, best first, within the bounds.
 */
export function renderPrecis(entries: MemoryEntry[], options?: Partial<PrecisOptions>): string;

/**
 * Repairs a message list so that both providers accept it: every tool call gets exactly one
 * result right after its assistant message (a placeholder when it was lost), orphaned and
 * duplicate results are dropped, ids are made unique and valid, and the conversation starts
 * with a user message.
 */
export function repairToolPairs(messages: Message[]): Repaired;

/**
 * Turns a summarizer's answer to a request from `planTurn` into a checkpoint, or, when there
 * is no answer or it is unusable (empty, over the request's token limit), makes the
 * extractive summary instead and says why.
 */
export function summaryCheckpoint(input: SummaryCheckpointInput): SummaryCheckpoint;

/**
 * Writes ctxkit messages as an Anthropic request's `{system?, messages}`. Throws on a tool
 * message without `tool_call_id` or tool call arguments that are not a JSON object.
 */
export function toAnthropic(messages: Message[]): AnthropicRequest;

/**
 * Writes ctxkit messages as Chat Completions `messages`. What OpenAI has no place for
 * (thinking, Anthropic blocks, `is_error`) is dropped.
 */
export function toOpenAI(messages: Message[]): OpenAIMessage[];

/**
 * Lists what `provider` would reject in `request`: for `"openai"` a Chat Completions
 * `messages` array or request body, for `"anthropic"` a Messages request or its `messages`,
 * for `"responses"` a Responses request or its `input`, for `"gemini"` a `generateContent`
 * request or its `contents`.
 * Any value is accepted (a value of the wrong shape is itself a violation).
 */
export function validate(request: unknown, provider: Provider): Violation[];

/**
 * The version of the package (the workspace version it was built from).
 */
export function version(): string;

export type InitInput = string | { readonly href: string } | { readonly url: string } | { arrayBuffer(): Promise<ArrayBuffer> } | ArrayBuffer | ArrayBufferView | WebAssembly.Module;

export interface InitOutput {
    readonly memory: WebAssembly.Memory;
    readonly __wbg_engine_free: (a: number, b: number) => void;
    readonly advanceNudges: (a: any) => [number, number, number];
    readonly buildSystemPrompt: (a: any) => [number, number, number, number];
    readonly defaults: () => [number, number, number];
    readonly engine_append: (a: number, b: any, c: any) => [number, number, number];
    readonly engine_compactIfIdle: (a: number, b: any) => any;
    readonly engine_executeTool: (a: number, b: any, c: any) => [number, number, number];
    readonly engine_family: (a: number) => [number, number, number, number];
    readonly engine_fromJSON: (a: any) => [number, number, number];
    readonly engine_historyTools: (a: number, b: any) => [number, number, number];
    readonly engine_lastOffloadErrors: (a: number) => [number, number, number];
    readonly engine_latestCheckpoint: (a: number) => [number, number, number];
    readonly engine_length: (a: number) => [number, number, number];
    readonly engine_new: (a: any) => [number, number, number];
    readonly engine_nextSeq: (a: number) => [number, number, number];
    readonly engine_prepare: (a: number, b: any) => any;
    readonly engine_readHistory: (a: number, b: any, c: any) => [number, number, number, number];
    readonly engine_recordUsage: (a: number, b: any, c: any, d: any) => [number, number, number];
    readonly engine_searchHistory: (a: number, b: any, c: any) => [number, number, number, number];
    readonly engine_setOffload: (a: number, b: any) => [number, number];
    readonly engine_toJSON: (a: number) => [number, number, number];
    readonly engine_view: (a: number, b: any) => [number, number, number];
    readonly estimateTokens: (a: any, b: any) => [number, number, number];
    readonly extractiveSummary: (a: any, b: any) => [number, number, number, number];
    readonly fromAnthropic: (a: any) => [number, number, number];
    readonly fromOpenAI: (a: any) => [number, number, number];
    readonly memoryQuarantine: (a: any) => [number, number, number, number];
    readonly messageFingerprints: (a: any, b: any) => [number, number, number];
    readonly planOffload: (a: any) => [number, number, number];
    readonly planTurn: (a: any) => [number, number, number];
    readonly renderPrecis: (a: any, b: any) => [number, number, number, number];
    readonly repairToolPairs: (a: any) => [number, number, number];
    readonly summaryCheckpoint: (a: any) => [number, number, number];
    readonly toAnthropic: (a: any) => [number, number, number];
    readonly toOpenAI: (a: any) => [number, number, number];
    readonly validate: (a: any, b: any) => [number, number, number];
    readonly version: () => [number, number];
    readonly wasm_bindgen_6af0989f91f3bffe___convert__closures_____invoke___js_sys_a21cd03a535d5db3___Function_fn_wasm_bindgen_6af0989f91f3bffe___JsValue_____wasm_bindgen_6af0989f91f3bffe___sys__Undefined___js_sys_a21cd03a535d5db3___Function_fn_wasm_bindgen_6af0989f91f3bffe___JsValue_____wasm_bindgen_6af0989f91f3bffe___sys__Undefined_______true_: (a: number, b: number, c: any, d: any) => void;
    readonly wasm_bindgen_6af0989f91f3bffe___convert__closures_____invoke___wasm_bindgen_6af0989f91f3bffe___JsValue__core_145b0e69e5e9023b___result__Result_____wasm_bindgen_6af0989f91f3bffe___JsError___true_: (a: number, b: number, c: any) => [number, number];
    readonly __wbindgen_malloc: (a: number, b: number) => number;
    readonly __wbindgen_realloc: (a: number, b: number, c: number, d: number) => number;
    readonly __wbindgen_free: (a: number, b: number, c: number) => void;
    readonly __wbindgen_exn_store: (a: number) => void;
    readonly __externref_table_alloc: () => number;
    readonly __wbindgen_externrefs: WebAssembly.Table;
    readonly __wbindgen_destroy_closure: (a: number, b: number) => void;
    readonly __externref_table_dealloc: (a: number) => void;
    readonly __wbindgen_start: () => void;
}

export type SyncInitInput = ArrayBuffer | ArrayBufferView | WebAssembly.Module;

/**
 * Instantiates the given `module`, which can either be bytes or
 * a precompiled `WebAssembly.Module`.
 *
 * @param {{ module: SyncInitInput }} module - Passing `SyncInitInput` directly is deprecated.
 *
 * @returns {InitOutput}
 */
export function initSync(module: { module: SyncInitInput } | SyncInitInput): InitOutput;

/**
 * If `module_or_path` is {RequestInfo} or {URL}, makes a request and
 * for everything else, calls `WebAssembly.instantiate` directly.
 *
 * @param {{ module_or_path: InitInput | Promise<InitInput> }} module_or_path - Passing `InitInput` directly is deprecated.
 *
 * @returns {Promise<InitOutput>}
 */
export default function __wbg_init (module_or_path?: { module_or_path: InitInput | Promise<InitInput> } | InitInput | Promise<InitInput>): Promise<InitOutput>;

// The WebAssembly types the init functions name, declared so that the typings need no `dom`
// lib (they merge with the DOM's or @types/node's own declarations when those are present).
declare global {
  namespace WebAssembly {
    interface Module {}
    interface Memory {}
    interface Table {}
  }
}

/** An offload writer that keeps the files in memory; `files` holds them by path. */
export interface MemoryOffloadStore extends OffloadWriter {
  files: Map<string, string>;
}

/** An offload writer that keeps the files in a `Map` (browsers, tests): pass it to `engine.setOffload`. */
export function memoryOffloadStore(): MemoryOffloadStore;
