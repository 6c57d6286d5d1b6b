//! The per-turn pipeline without a session: `planTurn` and `summaryCheckpoint`.
//!
//! `planTurn` takes a whole log and everything else a turn needs and returns either a ready
//! view (with its stats, the next nudge state and possibly a truncation checkpoint to keep) or
//! a summary request. The caller answers a request (an LLM from its `system` and `prompt`),
//! turns the answer into a checkpoint with `summaryCheckpoint` (which falls back to the
//! extractive summary when there is no usable answer), and plans again with it; the second
//! plan is always ready. `planTurn` is one step of the core's turn driver over a session made
//! of exactly this state; the `Engine` class runs the whole driver on a session it keeps, and
//! is what most callers want (each turn then crosses the boundary with only its new messages).
//!
//! The log is numbered from `first_seq` (default 1) and estimated for the policy's family on
//! every call: the cost grows with the log, which is another reason to prefer `Engine`.

use ctxkit_core::compaction::{summary_checkpoint, Checkpoint, Policy, SummaryRequest, ViewStats};
use ctxkit_core::memory::NudgeState;
use ctxkit_core::model::Entry;
use ctxkit_core::tokens::UsageAnchor;
use ctxkit_core::{CoreError, Session, TurnDriver, TurnStep};
use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsError, JsValue};

use crate::convert::{
    fail, object, read_json, set, take, take_decoded, to_js, to_js_sorted, Result,
};
use crate::readers::{read_messages, summary_request};
use crate::view::{render, JsTurnInputs};

#[wasm_bindgen(typescript_custom_section)]
const PLAN_TYPES: &str = r#"
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
"#;

/// What `planTurn` returns (TS `Plan`), before the ready view is set on it as `view`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum PlanOutput<'r> {
    /// A view to send, with what to keep for the next turn.
    Ready {
        stats: &'r ViewStats,
        next_nudge_state: NudgeState,
        new_checkpoint: Option<Box<Checkpoint>>,
    },
    /// Ask for a summary first.
    Summarize { request: &'r SummaryRequest },
}

/// What `summaryCheckpoint` returns (TS `SummaryCheckpoint`).
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct SummaryCheckpointOutput {
    checkpoint: Checkpoint,
    fallback_reason: Option<String>,
}

/// Plans one turn over a whole log: a ready view in the asked format, or a summary request.
#[wasm_bindgen(js_name = planTurn, unchecked_return_type = "Plan")]
pub fn plan_js(
    #[wasm_bindgen(unchecked_param_type = "PlanInput")] input: JsValue,
) -> Result<JsValue, JsError> {
    plan_from(&input).map_err(fail("planTurn"))
}

fn plan_from(input: &JsValue) -> Result<JsValue> {
    let mut fields = object(read_json(input, "input")?, "input", "an object (PlanInput)")?;
    let log = take(&mut fields, "log").ok_or_else(|| CoreError::invalid("input.log", "missing"))?;
    let log = read_messages(log, "input.log")?;
    let first_seq: u64 = take_decoded(&mut fields, "first_seq")?.unwrap_or(1);
    let checkpoint: Option<Checkpoint> = take(&mut fields, "checkpoint")
        .map(|json| crate::readers::checkpoint(json, "input.checkpoint"))
        .transpose()?;
    let nudge_state: NudgeState = take(&mut fields, "nudge_state")
        .map(|json| crate::readers::nudge_state(json, "input.nudge_state"))
        .transpose()?
        .unwrap_or_default();
    let usage_anchor: Option<UsageAnchor> = take(&mut fields, "usage_anchor")
        .map(|json| crate::readers::usage_anchor(json, "input.usage_anchor"))
        .transpose()?;
    let mut options = JsTurnInputs::read(Value::Object(fields), "input", None)?;
    // Stateless: the parts given are the parts used.
    crate::frozen::resolve(&mut options, None)?;

    // One step of the core's turn driver over a session holding exactly this state.
    let family = options.policy.family;
    let session = Session {
        family,
        entries: Entry::number(log, first_seq, family),
        checkpoints: checkpoint.into_iter().collect(),
        nudge_state,
        usage_anchor,
        ..Session::default()
    };
    let inputs = options.inputs();
    let mut turn = TurnDriver::start(&inputs)?;
    let view = match turn.step(&session)? {
        TurnStep::NeedSummary(request) => {
            return to_js(&PlanOutput::Summarize { request: &request })
        }
        TurnStep::NeedExtraction(_) => {
            return Err(CoreError::invalid(
                "plan",
                "planTurn asks for no memory extraction",
            ))
        }
        TurnStep::Ready(mut view) => {
            let items = crate::stand_in::stand_in(&mut view, options.format, &turn, &session, None);
            render(&view, options.format, &options.breakpoints(&turn), &items)?
        }
    };
    let (result, changes) = turn.result()?;
    let out = to_js(&PlanOutput::Ready {
        stats: &result.stats,
        next_nudge_state: changes.nudge_state,
        new_checkpoint: changes.checkpoint.map(Box::new),
    })?;
    set(&out, "view", &view)?;
    Ok(out)
}

/// Turns a summarizer's answer to a request from `planTurn` into a checkpoint, or, when there
/// is no answer or it is unusable (empty, over the request's token limit), makes the
/// extractive summary instead and says why.
#[wasm_bindgen(js_name = summaryCheckpoint, unchecked_return_type = "SummaryCheckpoint")]
pub fn summary_checkpoint_js(
    #[wasm_bindgen(unchecked_param_type = "SummaryCheckpointInput")] input: JsValue,
) -> Result<JsValue, JsError> {
    (|| {
        let mut fields = object(
            read_json(&input, "input")?,
            "input",
            "an object (SummaryCheckpointInput)",
        )?;
        let request = take(&mut fields, "request")
            .map(|request| summary_request(request, "input.request"))
            .transpose()?
            .ok_or_else(|| CoreError::invalid("input.request", "missing"))?;
        let answer: Option<String> = take_decoded(&mut fields, "answer")?;
        let log =
            take(&mut fields, "log").ok_or_else(|| CoreError::invalid("input.log", "missing"))?;
        let log = read_messages(log, "input.log")?;
        let first_seq: u64 = take_decoded(&mut fields, "first_seq")?.unwrap_or(1);
        let policy: Policy = take(&mut fields, "policy")
            .map(|json| crate::readers::policy(json, "input.policy"))
            .transpose()?
            .unwrap_or_default();
        if let Some(key) = fields.keys().next() {
            return Err(CoreError::invalid(
                format!("input.{key}"),
                "unknown field (expected one of `request`, `answer`, `log`, `first_seq`, `policy`)",
            ));
        }
        let entries = Entry::number(log, first_seq, policy.family);
        let (checkpoint, refused) = summary_checkpoint(
            &request,
            answer.as_deref(),
            &entries,
            &policy.extractive,
            policy.family,
        )?;
        to_js_sorted(&SummaryCheckpointOutput {
            checkpoint,
            fallback_reason: refused.map(|reason| reason.to_string()),
        })
    })()
    .map_err(fail("summaryCheckpoint"))
}
