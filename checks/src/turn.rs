//! The turn driver (`Session::prepare_offline`, which runs `TurnDriver` with extractive
//! summaries) on arbitrary logs, budgets and policies.

use ctxkit_core::compaction::{Budget, Policy, TodoItem};
use ctxkit_core::{Message, Session, TurnInputs};
use serde::Deserialize;

/// A fuzzed turn: JSON with every field optional.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct FuzzTurn {
    log: Vec<Message>,
    /// Messages appended after the first turn, before the second.
    more: Vec<Message>,
    system: String,
    budget: Budget,
    policy: Policy,
    todos: Vec<TodoItem>,
    /// The caller says the provider's cache has expired (the lower cold trigger applies).
    cache_expired: bool,
}

/// The largest window a fuzzed turn may ask for: estimates and plans grow with the log, not
/// the window, but a window this size already holds any log a fuzzer writes.
const MAX_WINDOW: u64 = 10_000_000;

/// Runs two turns (a log, then more messages) on a session.
///
/// Invariants: a turn that succeeds gives a view both providers accept (after the driver's own
/// repair: nothing else is applied here), whose stats say it fits only when its total is within
/// the budget; the log is never changed by a turn (the session's messages are the ones
/// appended, in order); a checkpoint never covers more than the log.
pub fn check_turn(data: &[u8]) {
    let Ok(mut turn) = serde_json::from_slice::<FuzzTurn>(data) else {
        return;
    };
    turn.budget.context_window = turn.budget.context_window.min(MAX_WINDOW);
    let mut session = Session::new(turn.policy.family);
    session.append(turn.log.clone());
    let mut appended = turn.log.clone();
    for round in 0..2 {
        if round == 1 {
            session.append(turn.more.clone());
            appended.extend(turn.more.iter().cloned());
        }
        let mut inputs = TurnInputs::new(&turn.system, turn.budget, &turn.policy);
        inputs.todos = &turn.todos;
        inputs.cache_expired = turn.cache_expired;
        if let Ok((view, stats)) = session.prepare_offline(&inputs) {
            let what = format!("turn {}", round + 1);
            crate::assert_valid_for_both(&view, &what);
            if stats.fits {
                assert!(
                    stats.total_tokens <= stats.budget_tokens,
                    "{what}: fits, but {} tokens are over the budget of {}",
                    stats.total_tokens,
                    stats.budget_tokens
                );
            }
        }
        let logged: Vec<&Message> = session.entries.iter().map(|entry| &entry.message).collect();
        let expected: Vec<&Message> = appended.iter().collect();
        assert!(logged == expected, "a turn changed the log");
        let last = session.entries.last().map_or(0, |entry| entry.seq);
        for checkpoint in &session.checkpoints {
            assert!(
                checkpoint.through_seq <= last,
                "a checkpoint covers seq {} of a log ending at {last}",
                checkpoint.through_seq
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_committed_seed_is_a_turn_that_summarizes() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fuzz/corpus/turn/seed-slice-summarize.json"
        );
        let data = std::fs::read(path).unwrap_or_else(|error| panic!("{path}: {error}"));
        let turn: FuzzTurn = serde_json::from_slice(&data).unwrap();
        let mut session = Session::new(turn.policy.family);
        session.append(turn.log.clone());
        let inputs = TurnInputs::new(&turn.system, turn.budget, &turn.policy);
        let (view, stats) = session.prepare_offline(&inputs).unwrap();
        assert!(stats.fits && !view.is_empty());
        assert_eq!(
            session.checkpoints.len(),
            1,
            "the seed reaches the summary path"
        );
        check_turn(&data);
    }
}
