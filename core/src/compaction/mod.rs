//! Layer 2, compaction: what of the log a view shows when it no longer fits.
//!
//! [`plan_turn`] is the per-turn pipeline. It measures the view against the [`Budget`] and,
//! past the trigger, runs the tiers in order: clearing old tool results ([`ClearPolicy`]),
//! then the [`Strategy`] (a [`SummaryRequest`] answered by an LLM or by the extractive
//! summarizer, or a sliding window), then truncation. Every view is repaired (tool pairs)
//! before it is returned, and its [`ViewStats`] say what happened.
//!
//! Compaction is data: a summary is requested as a [`SummaryRequest`] and kept as a
//! [`Checkpoint`] beside the log, which is never changed. Checkpoints only move forward, and
//! a turn compacts at most once (a checkpoint records the turn that made it), so the plan after
//! an answered request is always ready.

pub(crate) mod budget;
pub(crate) mod cache_safe;
pub(crate) mod checkpoint;
pub(crate) mod clearing;
mod cut_search;
pub(crate) mod extractive;
pub mod fallback;
pub(crate) mod owned_goal;
pub mod pinned;
pub(crate) mod plan;
pub(crate) mod policy;
pub(crate) mod responses_answer;
pub(crate) mod restore;
pub(crate) mod server_compaction;
pub(crate) mod stand_in;
pub(crate) mod stats;
pub(crate) mod summary_request;
pub(crate) mod tiers;
pub(crate) mod todo;
pub(crate) mod truncation;
pub(crate) mod workdir;

pub use budget::{fill_window_defaults, Budget, COST_LOW_WATER_TOKENS, COST_TRIGGER_TOKENS};
pub use cache_safe::{cache_safe_instruction, cache_safe_messages};
pub use checkpoint::{
    anthropic_summary_message, checkpoint_from_answer, checkpoint_from_summary,
    checkpoint_messages, checkpoint_restore_message, responses_compaction_block,
    responses_compaction_item, responses_summary_items, summary_message, with_pinned, Checkpoint,
    SummaryMethod, RESPONSES_ITEM_PREFIX, SUMMARY_HEADER,
};
pub use clearing::{clear_old_tool_results, cleared_placeholder, ClearPolicy};
/// The text signals the extractive summarizer reads (a call's key argument, a failure's telling
/// line, stated decisions, code identifiers), public so that `ctxkit-lab`'s probes and
/// measures read a log the same way.
pub use extractive::{
    decision_sentences, identifiers, key_argument, one_line, sentences, telling_line, WRITTEN_KEYS,
};
pub use extractive::{
    extractive_summary, extractive_summary_with, file_paths_in_arguments, ExtractiveLimits,
    SECTIONS, STATE_SECTIONS,
};
pub use fallback::{Fallback, FallbackKind, LlmCall};
pub use owned_goal::{
    goal_section, is_owned_heading, model_body, owned_summary, MODEL_GOAL_HEADING,
};
pub use pinned::{DroppedFacts, FactKind, PinnedFact};
pub use plan::{plan_turn, Plan, PlanInput, ReadyView};
pub use policy::{Policy, Strategy, SummaryMode};
pub use responses_answer::parse_responses_compaction_answer;
pub use restore::{
    is_restore_message, restore_block, restore_budget, restore_message, RestoreLimits,
    RESTORE_HEADER,
};
pub use server_compaction::{
    anthropic_conversation, cached_conversation, compaction_body, keep_compaction_block,
    parse_compaction_answer, responses_compaction_body, view_checkpoint, CompactionAnswer,
    CompactionProblem, CompactionUsage, COMPACTION_BETA,
};
pub use stand_in::{
    responses_conversation, splice_responses_items, summary_stand_in, SummaryStandIn,
    RESPONSES_ITEM_MARKER,
};
pub use stats::{Tier, ViewStats};
pub use summary_request::{
    answer_extractively, covered_entries, summary_checkpoint, summary_output_tokens,
    summary_request, SummaryCaps, SummaryRequest, SUMMARIZER_SYSTEM, SUMMARY_OUTPUT_CAP,
};
pub use todo::{render_active_tasks, TodoItem, TodoStatus};
pub use truncation::{
    cut_message, cut_to_fit, truncation_summary, MIN_MESSAGE_TOKENS, REMOVED_CONTENT,
};
pub use workdir::{
    declared_working_directory, relative_to, relativize_text, working_directory, WORKDIR_LABEL,
};
