//! Replaying a transcript turn by turn through the core (as an agent loop would: one turn
//! before each assistant message, extractive summaries) and measuring what its checkpoints
//! kept: the corpus fidelity test and the fidelity report both use it.

use ctxkit_core::compaction::pinned::{checkpoint_fidelity, log_mentions, CheckpointFidelity};
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

/// What each checkpoint of `session` kept.
pub fn fidelity(session: &Session) -> Vec<CheckpointFidelity> {
    checkpoint_fidelity(&session.entries, &session.checkpoints, |fact| {
        log_mentions(&session.entries, fact)
    })
}
