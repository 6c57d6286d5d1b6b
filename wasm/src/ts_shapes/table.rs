//! The mapping table: every type `pkg/dist/ctxkit.d.ts` declares, with the Rust type it mirrors
//! and the serde direction, or the reason it mirrors none. One row per TS type (a `Type.field`
//! row maps the type of a field, such as the `Partial<…>` an input takes); the second argument
//! of each row says where the values cross the boundary, and is copied into the shapes file.
//!
//! - [`input`]: what JS passes in, read by `Deserialize` (`#[serde(default)]` fields optional).
//! - [`output`]: what JS gets back, written by `Serialize` (`skip_serializing_if` fields
//!   optional, `Option` fields present and nullable).
//! - [`both`]: both directions, where serde reads and writes the same shape (checked).
//! - [`exempt`]: no serde type behind it.
//!
//! A type used both ways whose two shapes differ is mapped in the direction its declaration is
//! written for, and the row says why the other direction is still served.

use ctxkit_core::compaction::{
    Budget, Checkpoint, ClearPolicy, DroppedFacts, ExtractiveLimits, FactKind, Fallback,
    FallbackKind, LlmCall, PinnedFact, Policy, RestoreLimits, Strategy, SummaryMethod, SummaryMode,
    SummaryRequest, Tier, TodoItem, TodoStatus, ViewStats,
};
use ctxkit_core::memory::{
    MemoryEntry, MemoryScope, MemorySource, NudgeKind, NudgePolicy, NudgeState, PrecisOptions,
};
use ctxkit_core::model::{ImageSource, Part, Provider, ProviderFields, Role, ToolCall};
use ctxkit_core::offload::{OffloadPlan, OffloadPolicy};
use ctxkit_core::prompt::{FrozenParts, OffloadGuidance, PromptParts, Skill};
use ctxkit_core::recall::ToolDefinition;
use ctxkit_core::text::TranscriptLimits;
use ctxkit_core::tokens::{ModelFamily, RefusedUsage, UsageAnchor, UsageShape};
use ctxkit_core::turn::SummarizerBreaker;
use ctxkit_core::wire::breakpoints::{BreakpointReason, CacheBreakpoint};
use ctxkit_core::wire::{RepairReport, Violation, WireFormat};
use ctxkit_core::{Entry, Message, Session};

use super::{both, exempt, input, output, Row};
use crate::view::JsTurnInputs;

const WIRE_FORMAT: &str = "a provider's wire format, read and written as JSON by the core's converters (ctxkit_core::wire), not through a serde type; tests/tests/all/wire_*.rs and pkg/test/fixtures.test.mjs check them on the fixtures";
const READ_BY_KEY: &str = "read key by key (plan.rs, nudge.rs: the log message by message, so an error names the message), not through a serde type; pkg/test/ts_shapes.test.mjs calls the function to check which keys it reads, requires and lets be null (the values' types are mapped here)";
const VIEW: &str = "a view rendered by view.rs (render, render_cached): `format`, `system` and `messages` set on a JS object, or the core's wire renderer's JSON with `format` added; no serde type";

/// Every row (see the module documentation).
pub(crate) fn rows() -> Vec<Row> {
    [message_rows(), plan_rows(), engine_rows(), function_rows()]
        .into_iter()
        .flatten()
        .collect()
}

/// The rows of wire.rs and history.rs: messages, wire formats and the history tools.
fn message_rows() -> Vec<Row> {
    vec![
        // wire.rs: messages.
        exempt("Json", "any JSON value (serde_json::Value: an opaque block, a tool call's input)"),
        both::<Role>("Role", "Message.role"),
        both::<Provider>("Provider", "an opaque part's provider, and validate()'s argument"),
        both::<ImageSource>("ImageSource", "an image part's source, in messages in and out"),
        both::<Part>("Part", "the parts of a message's content, in and out"),
        exempt("Content", "`string | Part[]` (an untagged enum), no fields: Part is checked, and Message.content checks the `null` that reading accepts"),
        both::<ProviderFields>("ProviderFields", "Message.provider_fields and ToolCall.provider_fields, in and out"),
        both::<ToolCall>("ToolCall", "Message.tool_calls, in and out"),
        input::<Message>("Message", "read by every function that takes messages; written (views, toJSON, fromOpenAI...) always with `content`, which `content?` allows"),
        exempt("OpenAIContentPart", WIRE_FORMAT),
        exempt("OpenAIToolCall", WIRE_FORMAT),
        exempt("OpenAIMessage", WIRE_FORMAT),
        exempt("OpenAIRequest", WIRE_FORMAT),
        exempt("AnthropicBlock", WIRE_FORMAT),
        exempt("AnthropicMessage", WIRE_FORMAT),
        exempt("AnthropicRequest", WIRE_FORMAT),
        exempt("OpenAITextPart", WIRE_FORMAT),
        exempt("OpenAIMessageInput", WIRE_FORMAT),
        exempt("OpenAIRequestInput", WIRE_FORMAT),
        exempt("AnthropicTextBlock", WIRE_FORMAT),
        exempt("AnthropicMessageInput", WIRE_FORMAT),
        exempt("AnthropicRequestInput", WIRE_FORMAT),
        exempt("ViewOfFormat", VIEW),
        exempt("Engine", "an interface merged with the Engine class wasm-bindgen declares: view and prepare narrowed by format (pkg/test/types/sdk.ts checks them)"),
        exempt("TurnResultOf", "a RenderedView of one format with stats, summary and extraction: TurnResult narrowed by `format` (each part is checked here)"),
        // history.rs: the history tools.
        output::<ToolDefinition>("ToolDefinition", "historyTools() in ctxkit's shape (the default format)"),
        exempt("ToolFormat", "a string union read by history.rs (historyTools' format), no serde type; pkg/test/history.test.mjs calls it with each value and a bad one"),
        exempt("ExecutableToolCall", "one of three call shapes (ctxkit's ToolCall, OpenAI's, an Anthropic tool_use block) told apart key by key in history.rs, not through a serde type; pkg/test/history.test.mjs executes each"),
        exempt("ExecuteToolOptions", "holds a function (read_file), which serde cannot read; its data fields are read by history.rs's ExecuteOptions (deny_unknown_fields)"),
    ]
}

/// The rows of plan.rs: budget, policy, the turn's state and results.
fn plan_rows() -> Vec<Row> {
    vec![
        // plan.rs: budget and policy.
        output::<Budget>("Budget", "defaults().budget"),
        input::<Budget>("BudgetOptions", "TurnInputs.budget: every field defaults"),
        both::<Strategy>("Strategy", "Policy.strategy, in and out"),
        both::<SummaryMode>("SummaryMode", "Policy.summary_mode, in and out"),
        output::<TranscriptLimits>("TranscriptLimits", "Policy.transcript as defaults() writes it"),
        output::<ExtractiveLimits>("ExtractiveLimits", "Policy.extractive as defaults() writes it"),
        output::<ClearPolicy>("ClearPolicy", "defaults().clear_tool_results, Policy.clear_tool_results"),
        output::<RestoreLimits>("RestoreLimits", "defaults().policy.restore, Policy.restore"),
        output::<NudgePolicy>("NudgePolicy", "Policy.nudges as defaults() writes it"),
        output::<Policy>("Policy", "defaults().policy"),
        input::<Policy>("PolicyOptions", "TurnInputs.policy, SummaryCheckpointInput.policy: every field defaults"),
        input::<TranscriptLimits>("PolicyOptions.transcript", "a Partial<TranscriptLimits>: every field defaults"),
        input::<ExtractiveLimits>("PolicyOptions.extractive", "a Partial<ExtractiveLimits>: every field defaults"),
        input::<ClearPolicy>("PolicyOptions.clear_tool_results", "a Partial<ClearPolicy>: every field defaults"),
        input::<RestoreLimits>("PolicyOptions.restore", "a Partial<RestoreLimits>: every field defaults"),
        input::<NudgePolicy>("PolicyOptions.nudges", "a Partial<NudgePolicy>: every field defaults"),
        // plan.rs: the turn's state and results.
        both::<TodoItem>("TodoItem", "TurnInputs.todos"),
        both::<TodoStatus>("TodoItem.status", "a todo item's status"),
        both::<SummaryMethod>("SummaryMethod", "Checkpoint.method, ViewStats.checkpoint_method, SummaryOutcome.method"),
        both::<Checkpoint>("Checkpoint", "latestCheckpoint, Plan.new_checkpoint, EngineState; read back by planTurn and fromJSON"),
        both::<PinnedFact>("PinnedFact", "Checkpoint.pinned, SummaryRequest.pinned"),
        both::<FactKind>("FactKind", "PinnedFact.kind"),
        output::<DroppedFacts>("DroppedFacts", "Checkpoint.dropped_facts, SummaryRequest.dropped_facts, ViewStats.dropped_facts; read back by fromJSON and summaryCheckpoint, where every count defaults to 0"),
        output::<SummaryRequest>("SummaryRequest", "Plan's request and the summarizer's argument; summaryCheckpoint reads it back (where its `null`s may also be absent)"),
        output::<NudgeState>("NudgeState", "Plan.next_nudge_state, NudgeOutcome.next, EngineState.nudge_state; inputs take a Partial<NudgeState>"),
        input::<NudgeState>("PlanInput.nudge_state", "a Partial<NudgeState>: every field defaults"),
        both::<NudgeKind>("NudgeKind", "ViewStats.nudges, NudgeOutcome.kinds"),
        output::<UsageAnchor>("UsageAnchor", "EngineState.usage_anchor; read back by fromJSON and planTurn (where its `null`s may also be absent)"),
        both::<Tier>("Tier", "ViewStats.tier"),
        output::<CacheBreakpoint>("CacheBreakpoint", "ViewStats.cache_breakpoints"),
        output::<BreakpointReason>("BreakpointReason", "CacheBreakpoint.reason"),
        output::<ViewStats>("ViewStats", "a turn's stats; recordUsage reads them back (where its `null`s may also be absent)"),
        exempt("PlanInput", READ_BY_KEY),
        output::<crate::plan::PlanOutput<'static>>("Plan", "planTurn's result")
            .shell_field(Some("ready"), "view", false, "the view, rendered by view::render and set on the result"),
        exempt("SummaryCheckpointInput", READ_BY_KEY),
        output::<crate::plan::SummaryCheckpointOutput>("SummaryCheckpoint", "summaryCheckpoint's result"),
    ]
}

/// The rows of view.rs and engine.rs: turn options, views and the Engine.
fn engine_rows() -> Vec<Row> {
    vec![
        // view.rs: turn options and views.
        both::<WireFormat>("ViewFormat", "TurnInputs.format"),
        input::<JsTurnInputs>("TurnInputs", "the options of Engine.view and planTurn"),
        exempt("CtxkitView", VIEW),
        exempt("OpenAIView", VIEW),
        exempt("AnthropicView", VIEW),
        exempt("ResponsesView", VIEW),
        exempt("GeminiView", VIEW),
        exempt("AiSdkView", VIEW),
        exempt("LangChainView", VIEW),
        exempt("RenderedView", VIEW),
        // engine.rs: the Engine.
        input::<crate::engine::EngineOptions>("EngineOptions", "new Engine()'s options"),
        both::<WireFormat>("MessageFormat", "Engine.append's format"),
        both::<Entry>("Entry", "EngineState.entries"),
        output::<Session>("EngineState", "toJSON(); fromJSON() reads it back (where every field defaults)"),
        output::<crate::turn_result::SummaryOutput>("SummaryOutcome", "TurnResult.summary"),
        output::<RefusedUsage>("RefusedUsage", "ViewStats.refused_usage and EngineState.refused_usage (read back by fromJSON)"),
        output::<SummarizerBreaker>("SummarizerBreaker", "EngineState.summarizer_breaker (read back by fromJSON)"),
        output::<FrozenParts>("FrozenParts", "EngineState.frozen_prompt (read back by fromJSON)"),
        output::<Fallback>("Fallback", "ViewStats.fallbacks; the adapters' fallback events carry its fields"),
        both::<LlmCall>("LlmCall", "Fallback.call"),
        both::<FallbackKind>("FallbackKind", "Fallback.kind"),
        output::<crate::usage::UsageVerdict>("UsageVerdict", "what recordUsage returns"),
        input::<UsageShape>("UsageShape", "recordUsage's shape argument"),
        exempt("TurnResult", "a RenderedView with `stats` (ViewStats) and `summary` (SummaryOutcome, or null) set on it by turn_result.rs finish, and `extraction` (ExtractionResult, or null) by prepare.rs; each is checked here"),
        exempt("Summarizer", "a JS function type"),
        exempt("SummarizerRequest", "SummaryRequest (checked) plus anthropic_compaction and responses_compaction, set by summarize.rs"),
        exempt("AnthropicCompactionRequest", "a JSON object made by summarize.rs: the beta header and the core's compaction_body (an Anthropic request body)"),
        exempt("AnthropicCompactionAnswer", "the summarizer's answer, read by summarize.rs (read_reply): its one field is the provider's response, parsed by the core"),
        exempt("ResponsesCompactionRequest", "a JSON object made by summarize.rs: the core's responses_compaction_body (a Responses request body ending in compaction_trigger)"),
        exempt("ResponsesCompactionAnswer", "the summarizer's answer, read by summarize.rs (read_reply): its one field is the Responses response, parsed by the core"),
        exempt("Extractor", "a JS function type"),
        exempt("AbortSignalLike", "a JS object (the DOM's or Node's AbortSignal), passed through to the callbacks, never read by serde"),
        exempt("CallbackContext", "a JS object made by summarize.rs (call_with_deadline) around the signal"),
        output::<ctxkit_core::memory::ExtractionRequest>("ExtractionRequest", "the argument of prepare's extract"),
        output::<ctxkit_core::memory::MemoryDraft>("MemoryDraft", "ExtractionOutcome.drafts"),
        output::<ctxkit_core::memory::RejectedDraft>("RejectedDraft", "ExtractionOutcome.rejected"),
        output::<ctxkit_core::memory::ExtractionOutcome>("ExtractionOutcome", "ExtractionResult.outcome"),
        output::<crate::prepare::ExtractionResult>("ExtractionResult", "TurnResult.extraction, from prepare"),
    ]
}

/// The rows of the Engine's offload writer, then the free functions' shapes and wasm-bindgen's own.
fn function_rows() -> Vec<Row> {
    vec![
        // offload_store.rs and pkg/src/extras.mjs: the Engine's offload writer.
        exempt("OffloadWriter", "a JS object of two functions (write, read), called by offload_store.rs"),
        exempt("OffloadOptions", "a JS object holding the writer; its data fields (session, agent_tools, and policy as a Partial<OffloadPolicy>) are read by offload_store.rs's Fields, which refuses unknown keys; pkg/test/offload.test.mjs checks a bad one"),
        exempt("MemoryOffloadStore", "a JS object made by pkg/src/extras.mjs (an OffloadWriter with its Map)"),
        input::<JsTurnInputs>("PrepareOptions", "Engine.prepare's options: the turn options and the summarizer")
            .shell_field(None, "summarize", true, "the summarizer, taken from the object before the rest is read as JSON (prepare.rs read_prepare_options)")
            .shell_field(None, "extract", true, "the memory extractor, taken from the object before the rest is read as JSON (prepare.rs read_prepare_options)")
            .shell_field(None, "signal", true, "the AbortSignal, taken from the object before the rest is read as JSON (prepare.rs read_prepare_options)")
            .shell_field(None, "summarize_timeout_ms", true, "the summarizer's deadline, taken from the JSON before the turn options are read (summarize.rs take_timeout)"),
        // idle.rs.
        output::<ctxkit_core::turn::IdleDecision>("IdleDecision", "IdleResult.decision, from compactIfIdle"),
        exempt("IdleOptions", "PrepareOptions plus idle_seconds and ttl_seconds, which idle.rs split_idle_options takes (whole seconds, 0 or more) before the rest is read as PrepareOptions; pkg/test/idle.test.mjs checks bad ones"),
        exempt("IdleResult", "a JS object made by idle.rs: the decision (IdleDecision, checked here), view_tokens, and the turn (TurnResultOf) or null"),
        // offload.rs.
        output::<OffloadPolicy>("OffloadPolicy", "defaults().offload"),
        input::<crate::offload::Input>("OffloadInput", "planOffload's input"),
        input::<OffloadPolicy>("OffloadInput.policy", "a Partial<OffloadPolicy>: every field defaults"),
        output::<OffloadPlan>("OffloadPlan", "planOffload's result"),
        // precis.rs.
        input::<MemoryEntry>("MemoryEntry", "renderPrecis's entries: every field defaults"),
        both::<MemorySource>("MemoryEntry.source", "who wrote a memory"),
        both::<MemoryScope>("MemoryEntry.scope", "where a memory applies"),
        output::<PrecisOptions>("PrecisOptions", "defaults().precis; renderPrecis takes a Partial<PrecisOptions>"),
        // system_prompt.rs.
        input::<Skill>("Skill", "PromptParts.skills: every field defaults")
            .ts_requires("name", "a skill without a name is left out of the prompt"),
        output::<OffloadGuidance>("OffloadGuidance", "defaults().offload_guidance"),
        input::<PromptParts>("PromptParts", "buildSystemPrompt's parts: every field defaults")
            .ts_requires("date", "buildSystemPrompt throws without a real YYYY-MM-DD date (the core has no clock)"),
        input::<OffloadGuidance>("PromptParts.offload_guidance", "a Partial<OffloadGuidance>: every field defaults"),
        // nudge.rs.
        exempt("NudgeInput", READ_BY_KEY),
        input::<NudgeState>("NudgeInput.state", "a Partial<NudgeState>: every field defaults"),
        input::<NudgePolicy>("NudgeInput.policy", "a Partial<NudgePolicy>: every field defaults"),
        output::<crate::nudge::NudgeOutput>("NudgeOutcome", "advanceNudges's result"),
        // repair.rs, validate.rs, summary.rs, tokens.rs, defaults.rs.
        output::<RepairReport>("RepairReport", "ViewStats.repair, Repaired.report"),
        output::<crate::repair::Repaired<'static>>("Repaired", "repairToolPairs's result"),
        output::<Violation>("Violation", "validate()'s result"),
        input::<crate::summary::Options>("ExtractiveOptions", "extractiveSummary's options"),
        input::<ExtractiveLimits>("ExtractiveOptions.limits", "a Partial<ExtractiveLimits>: every field defaults"),
        both::<ModelFamily>("ModelFamily", "Policy.family, EngineOptions.family, EngineState.family, estimateTokens's family"),
        output::<crate::defaults::Defaults>("Defaults", "defaults()'s result"),
        // wasm-bindgen's own declarations.
        exempt("InitInput", "wasm-bindgen's loader types (web target)"),
        exempt("SyncInitInput", "wasm-bindgen's loader types (web target)"),
        exempt("InitOutput", "wasm-bindgen's loader types (web target): the module's raw exports"),
    ]
}
