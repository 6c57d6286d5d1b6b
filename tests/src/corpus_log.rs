//! Logs of any length shaped like the corpus's Claude Code session, for benchmarks: the
//! session's messages repeated, with tool-call ids made unique per repetition, and the
//! checkpoint a running session would have (its tail under the trigger).

use ctxkit_core::compaction::Budget;
use ctxkit_core::compaction::{extractive_summary, ExtractiveLimits};
use ctxkit_core::compaction::{summary_message, Checkpoint, SummaryMethod};
use ctxkit_core::import::import_claude_code;
use ctxkit_core::model::Entry;
use ctxkit_core::tokens::{estimate_message, ModelFamily};
use ctxkit_core::Message;

const SESSION: &str = "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl";

/// The corpus session's messages.
pub fn session_messages() -> Vec<Message> {
    let text = std::fs::read_to_string(crate::corpus_dir().join(SESSION)).unwrap_or_default();
    import_claude_code(&text)
        .map(|session| session.messages)
        .unwrap_or_default()
}

/// `length` entries made by repeating `messages`, ids suffixed per repetition.
pub fn repeated_log(messages: &[Message], length: usize, family: ModelFamily) -> Vec<Entry> {
    let mut out = Vec::with_capacity(length);
    let mut round = 0;
    while out.len() < length && !messages.is_empty() {
        for message in messages.iter().take(length - out.len()) {
            let mut message = message.clone();
            for call in &mut message.tool_calls {
                call.id = format!("{}_{round}", call.id);
            }
            if let Some(id) = &mut message.tool_call_id {
                *id = format!("{id}_{round}");
            }
            out.push(message);
        }
        round += 1;
    }
    Entry::number(out, 1, family)
}

/// The checkpoint a running session would have: covering all but the newest entries whose
/// tokens, with the summary, stay under the low-water mark; its summary is the extractive
/// summary of (at most) the 300 entries before the cut.
pub fn steady_checkpoint(
    log: &[Entry],
    budget: &Budget,
    family: ModelFamily,
) -> Option<Checkpoint> {
    let mut kept = 0u64;
    let mut cut = log.len();
    for (index, entry) in log.iter().enumerate().rev() {
        if kept + entry.tokens > budget.low_water() * 9 / 10 {
            break;
        }
        kept += entry.tokens;
        cut = index;
    }
    // Start the tail at an assistant or user message, as a real cut would.
    while cut < log.len()
        && log
            .get(cut)
            .is_some_and(|e| e.message.role == ctxkit_core::Role::Tool)
    {
        cut += 1;
    }
    let through = log.get(cut.checked_sub(1)?)?.seq;
    let covered: Vec<Message> = log[cut.saturating_sub(300)..cut]
        .iter()
        .map(|e| e.message.clone())
        .collect();
    let mut checkpoint = Checkpoint {
        through_seq: through,
        summary: extractive_summary(&covered, None, &ExtractiveLimits::default()),
        method: SummaryMethod::Extractive,
        active_tasks: None,
        tokens: 0,
        made_at_turn: 1,
        pinned: Vec::new(),
        dropped_facts: Default::default(),
        compaction_block: None,
        restore: None,
    };
    checkpoint.tokens = estimate_message(&summary_message(&checkpoint), family);
    Some(checkpoint)
}
