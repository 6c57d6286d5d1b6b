//! Every enum read through `crate::model::unit_enum` has, in its `unit_enum_deserialize!`,
//! the names its derived `Serialize` writes, in declaration order. Here, in the top layer,
//! because the enums live in every layer.

use serde_json::{json, Value};

use crate::compaction::{
    FactKind, FallbackKind, LlmCall, SummaryMethod, SummaryMode, Tier, TodoStatus,
};
use crate::memory::{MemoryScope, MemorySource, NudgeKind};
use crate::model::{Provider, Role};
use crate::tokens::ModelFamily;
use crate::wire::breakpoints::BreakpointReason;
use crate::wire::WireFormat;

/// Every variant in `all` writes a name that reads back as that variant, and a name that
/// is not one reads as the derived reader's error, naming the enum's names in order.
fn check<T>(all: &[T], names: &[&str])
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let written: Vec<Value> = all
        .iter()
        .map(|v| serde_json::to_value(v).unwrap())
        .collect();
    let expected: Vec<Value> = names.iter().map(|n| json!(n)).collect();
    assert_eq!(written, expected);
    for (variant, name) in all.iter().zip(names) {
        assert_eq!(&serde_json::from_value::<T>(json!(name)).unwrap(), variant);
    }
    let error = serde_json::from_value::<T>(json!("?"))
        .unwrap_err()
        .to_string();
    let listed: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    assert!(
        error.ends_with(&listed.join(if names.len() == 2 { " or " } else { ", " })),
        "{error}"
    );
}

#[test]
fn model_and_wire_enums_have_their_serde_names() {
    check(
        &[Role::System, Role::User, Role::Assistant, Role::Tool],
        &["system", "user", "assistant", "tool"],
    );
    check(
        &[
            Provider::OpenAi,
            Provider::Anthropic,
            Provider::Responses,
            Provider::Gemini,
            Provider::AiSdk,
            Provider::LangChain,
        ],
        &[
            "openai",
            "anthropic",
            "responses",
            "gemini",
            "ai-sdk",
            "langchain",
        ],
    );
    check(
        &[
            WireFormat::Ctxkit,
            WireFormat::Openai,
            WireFormat::Anthropic,
            WireFormat::Responses,
            WireFormat::Gemini,
            WireFormat::AiSdk,
            WireFormat::LangChain,
        ],
        &[
            "ctxkit",
            "openai",
            "anthropic",
            "responses",
            "gemini",
            "ai-sdk",
            "langchain",
        ],
    );
    check(
        &[
            BreakpointReason::System,
            BreakpointReason::Summary,
            BreakpointReason::PreviousTurn,
            BreakpointReason::LastMessage,
        ],
        &["system", "summary", "previous_turn", "last_message"],
    );
}

#[test]
fn tokens_and_memory_enums_have_their_serde_names() {
    check(
        &[
            ModelFamily::OpenAi,
            ModelFamily::Claude,
            ModelFamily::Claude47,
        ],
        &["openai", "claude", "claude-4.7"],
    );
    check(
        &[
            MemorySource::User,
            MemorySource::Agent,
            MemorySource::Extracted,
            MemorySource::Tool,
            MemorySource::Document,
        ],
        &["user", "agent", "extracted", "tool", "document"],
    );
    check(
        &[MemoryScope::Project, MemoryScope::Global],
        &["project", "global"],
    );
    check(&[NudgeKind::Memory, NudgeKind::Stall], &["memory", "stall"]);
}

#[test]
fn compaction_enums_have_their_serde_names() {
    check(
        &[
            TodoStatus::Pending,
            TodoStatus::InProgress,
            TodoStatus::Completed,
        ],
        &["pending", "in_progress", "completed"],
    );
    check(
        &[
            Tier::Fits,
            Tier::Cleared,
            Tier::Summarized,
            Tier::Window,
            Tier::Truncated,
            Tier::Uncompacted,
        ],
        &[
            "fits",
            "cleared",
            "summarized",
            "window",
            "truncated",
            "uncompacted",
        ],
    );
    check(
        &[SummaryMode::Fresh, SummaryMode::CacheSafe],
        &["fresh", "cache_safe"],
    );
    check(
        &[
            FactKind::Path,
            FactKind::Error,
            FactKind::Request,
            FactKind::Identifier,
            FactKind::Task,
            FactKind::NextStep,
        ],
        &[
            "path",
            "error",
            "request",
            "identifier",
            "task",
            "next_step",
        ],
    );
    check(
        &[LlmCall::Summary, LlmCall::Extraction],
        &["summary", "extraction"],
    );
    check(
        &[
            FallbackKind::Error,
            FallbackKind::Timeout,
            FallbackKind::Refused,
            FallbackKind::Unusable,
            FallbackKind::Stale,
            FallbackKind::Skipped,
        ],
        &[
            "error", "timeout", "refused", "unusable", "stale", "skipped",
        ],
    );
    check(
        &[
            SummaryMethod::Llm,
            SummaryMethod::Extractive,
            SummaryMethod::Truncation,
        ],
        &["llm", "extractive", "truncation"],
    );
}
