//! Replaying a transcript turn by turn through the core (as an agent loop would: one turn
//! before each assistant message, extractive summaries) and measuring what its checkpoints
//! kept: the corpus fidelity test and the fidelity report both use it.

use ctxkit_core::recall::finds_fact;
use ctxkit_core::{Budget, Message, ModelFamily, Policy, Role, Session, TurnInputs};
use ctxkit_lab::fidelity::{checkpoint_fidelity, CheckpointFidelity};

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

/// What each checkpoint of `session` kept, a dropped fact counted as found again when
/// `search_history` over the log finds it.
pub fn fidelity(session: &Session) -> Vec<CheckpointFidelity> {
    checkpoint_fidelity(&session.entries, &session.checkpoints, |fact| {
        finds_fact(&session.entries, fact)
    })
}
