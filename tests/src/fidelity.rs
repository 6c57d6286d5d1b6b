//! Replaying a transcript turn by turn through the core (as an agent loop would: one turn
//! before each assistant message, extractive summaries) and measuring what its checkpoints
//! kept: the corpus fidelity test and the fidelity report both use it.

use ctxkit_core::compaction::pinned::{checkpoint_fidelity, CheckpointFidelity};
use ctxkit_core::compaction::PinnedFact;
use ctxkit_core::{Budget, Message, ModelFamily, Policy, Role, Session, TurnInputs};

/// The session after replaying `messages` with a window of `window` tokens.
pub fn replay(messages: &[Message], window: u64, family: ModelFamily) -> Session {
    let mut session = Session::new(family);
    let policy = Policy {
        family,
        ..Policy::default()
    };
    let budget = Budget::for_window(window);
    let inputs = TurnInputs::new("You are a coding agent.", budget, &policy);
    for message in messages {
        if message.role == Role::Assistant {
            // The turn whose answer this message is.
            let _ = session.prepare_offline(&inputs);
        }
        session.append([message.clone()]);
    }
    let _ = session.prepare_offline(&inputs);
    session
}

/// True when `fact`'s text occurs in some message of `session`'s log (its text, or a tool
/// call's arguments), whitespace runs compared as one space: what a history search over the
/// complete log finds. A fact pinned head and tail (`… `) or cut (`…`) is looked for by its
/// head.
pub fn in_log(session: &Session, fact: &PinnedFact) -> bool {
    let needle = flat(
        fact.text
            .split(" … ")
            .next()
            .unwrap_or_default()
            .trim_end_matches('…'),
    );
    session.entries.iter().any(|entry| {
        let message = &entry.message;
        flat(&message.text_content()).contains(&needle)
            || message
                .tool_calls
                .iter()
                .any(|call| call.arguments.contains(needle.as_str()))
    })
}

fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What each checkpoint of `session` kept.
pub fn fidelity(session: &Session) -> Vec<CheckpointFidelity> {
    checkpoint_fidelity(&session.entries, &session.checkpoints, |fact| {
        in_log(session, fact)
    })
}
