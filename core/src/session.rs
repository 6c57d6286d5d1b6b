//! A session in memory: the log, its checkpoints, the nudge state and the last real usage,
//! with the per-turn protocol around [`plan_turn`].
//!
//! Both shells keep a session this way (the wasm `Engine` in memory, the native engine loaded
//! from and saved to SQLite), so the rules live here once: sequence numbers are assigned on
//! append and never reused, checkpoints only move forward, the turn's protocol is
//! plan → (summary request → checkpoint → plan again) → ready, and a failed or unusable
//! summary falls back to the extractive one. Every method is pure computation on the
//! session's own data; a method that fails leaves the session as it was.

use serde::{Deserialize, Serialize};

use crate::budget::Budget;
use crate::checkpoint::{Checkpoint, SummaryMethod};
use crate::error::{CoreError, Result};
use crate::log::Entry;
use crate::message::Message;
use crate::nudge::NudgeState;
use crate::plan::{plan_turn, Plan, Policy, ReadyView, TurnInput, ViewStats};
use crate::summary_request::{summary_checkpoint, SummaryRequest};
use crate::todo::TodoItem;
use crate::tokens::{ModelFamily, UsageAnchor};
use crate::view::View;

/// One session's state, serializable as a whole (to keep it in IndexedDB, a file, a row).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Session {
    /// The tokenizer family the cached estimates were computed for.
    pub family: ModelFamily,
    /// The complete log, in `seq` order.
    pub entries: Vec<Entry>,
    /// Every checkpoint, oldest first (the view uses the last).
    pub checkpoints: Vec<Checkpoint>,
    /// The nudge counters, carried from turn to turn.
    pub nudge_state: NudgeState,
    /// The last real usage the API reported.
    pub usage_anchor: Option<UsageAnchor>,
}

/// The settings of one turn, besides the session itself.
#[derive(Debug, Clone, Copy)]
pub struct TurnSettings<'x> {
    /// The system prompt of this turn.
    pub system_prompt: &'x str,
    /// The token budget.
    pub budget: Budget,
    /// The policy (its `family` should match the session's).
    pub policy: &'x Policy,
    /// The agent's todo list.
    pub todos: &'x [TodoItem],
}

impl Session {
    /// An empty session whose estimates are for `family`.
    pub fn new(family: ModelFamily) -> Self {
        Session {
            family,
            ..Session::default()
        }
    }

    /// Checks a session that came from outside (a file, a browser's storage) before it is
    /// used: entries in strictly increasing `seq` order, checkpoints moving forward and
    /// covering only logged messages. Returns it unchanged when it holds, else an error naming
    /// the entry or checkpoint at fault.
    pub fn validated(session: Session) -> Result<Session> {
        let Session {
            family,
            entries,
            checkpoints,
            nudge_state,
            usage_anchor,
        } = session;
        let mut checked = Session::new(family);
        checked.append_entries(entries)?;
        for (index, checkpoint) in checkpoints.into_iter().enumerate() {
            checked
                .add_checkpoint(checkpoint)
                .map_err(|error| match error {
                    CoreError::InvalidInput { problem, .. } => {
                        CoreError::invalid(format!("checkpoints[{index}].through_seq"), problem)
                    }
                })?;
        }
        checked.nudge_state = nudge_state;
        checked.usage_anchor = usage_anchor;
        Ok(checked)
    }

    /// The `seq` the next appended message gets (1 for an empty log). A store may load only
    /// the entries after the latest checkpoint, so the checkpoint counts too.
    pub fn next_seq(&self) -> u64 {
        let last_entry = self.entries.last().map_or(0, |entry| entry.seq);
        let last_checkpoint = self.latest_checkpoint().map_or(0, |c| c.through_seq);
        last_entry.max(last_checkpoint).saturating_add(1)
    }

    /// The checkpoint the view starts from.
    pub fn latest_checkpoint(&self) -> Option<&Checkpoint> {
        self.checkpoints.last()
    }

    /// Appends `messages`, numbering them and caching their estimates; returns their entries.
    pub fn append(&mut self, messages: impl IntoIterator<Item = Message>) -> &[Entry] {
        let start = self.entries.len();
        let first = self.next_seq();
        self.entries
            .extend(Entry::number(messages, first, self.family));
        self.entries.get(start..).unwrap_or_default()
    }

    /// Appends entries that already carry their seq and estimate (loaded from a store), after
    /// checking that their seqs continue the log.
    pub fn append_entries(&mut self, entries: Vec<Entry>) -> Result<()> {
        let mut last = self.next_seq().checked_sub(1).filter(|last| *last > 0);
        for entry in &entries {
            if last.is_some_and(|last| entry.seq <= last) {
                return Err(CoreError::invalid(
                    format!("entries[seq {}]", entry.seq),
                    format!(
                        "seq must increase, but {} follows {}",
                        entry.seq,
                        last.unwrap_or_default()
                    ),
                ));
            }
            last = Some(entry.seq);
        }
        self.entries.extend(entries);
        Ok(())
    }

    /// Stores a checkpoint after checking that it moves forward and covers only logged messages.
    pub fn add_checkpoint(&mut self, checkpoint: Checkpoint) -> Result<()> {
        if let Some(latest) = self.latest_checkpoint() {
            if checkpoint.through_seq <= latest.through_seq {
                return Err(CoreError::invalid(
                    "checkpoint.through_seq",
                    format!(
                        "must be after the latest checkpoint's {}, got {}",
                        latest.through_seq, checkpoint.through_seq
                    ),
                ));
            }
        }
        let last = self.next_seq().saturating_sub(1);
        if checkpoint.through_seq > last {
            return Err(CoreError::invalid(
                "checkpoint.through_seq",
                format!(
                    "covers seq {} but the log ends at {last}",
                    checkpoint.through_seq
                ),
            ));
        }
        self.checkpoints.push(checkpoint);
        Ok(())
    }

    /// Plans this turn (see [`plan_turn`]).
    pub fn plan<'s>(&'s self, settings: &TurnSettings<'_>) -> Result<Plan<'s>> {
        plan_turn(&TurnInput {
            log: &self.entries,
            checkpoint: self.latest_checkpoint(),
            system_prompt: settings.system_prompt,
            budget: settings.budget,
            policy: settings.policy,
            nudge_state: self.nudge_state,
            usage_anchor: self.usage_anchor.as_ref(),
            todos: settings.todos,
        })
    }

    /// Turns a summarizer's answer to `request` into a checkpoint and stores it. A missing
    /// answer (no LLM, or it failed) or an unusable one (empty, oversized) falls back to the
    /// extractive summary (see [`summary_checkpoint`]); the returned method says which was
    /// used, and the reason for a fallback is returned beside it.
    pub fn complete_summary(
        &mut self,
        request: &SummaryRequest,
        answer: Option<&str>,
        policy: &Policy,
    ) -> Result<(SummaryMethod, Option<CoreError>)> {
        let (checkpoint, fallback_reason) = summary_checkpoint(
            request,
            answer,
            &self.entries,
            &policy.extractive,
            self.family,
        )?;
        let method = checkpoint.method;
        self.add_checkpoint(checkpoint)?;
        Ok((method, fallback_reason))
    }

    /// Keeps what a ready view hands back: its truncation checkpoint (if any) and the nudge
    /// state for the next turn. Call once per turn, after sending the view.
    pub fn finish_turn(
        &mut self,
        new_checkpoint: Option<Checkpoint>,
        next_nudge_state: NudgeState,
    ) -> Result<()> {
        if let Some(checkpoint) = new_checkpoint {
            self.add_checkpoint(checkpoint)?;
        }
        self.nudge_state = next_nudge_state;
        Ok(())
    }

    /// Records the real input tokens the API reported for the view described by `stats`.
    pub fn record_usage(&mut self, stats: &ViewStats, input_tokens: u64) {
        self.usage_anchor = Some(stats.usage_anchor(input_tokens));
    }

    /// Runs a whole turn without an LLM: plan, answer any summary request extractively, plan
    /// again, and keep what the view hands back. Returns the view's messages (system prompt
    /// first) and stats.
    pub fn prepare_offline(
        &mut self,
        settings: &TurnSettings<'_>,
    ) -> Result<(Vec<Message>, ViewStats)> {
        let turn = self.prepare_with(settings, None, |view| {
            Ok::<_, CoreError>(view.to_messages())
        })?;
        Ok((turn.rendered, turn.stats))
    }

    /// Runs the rest of a turn and renders its view, the steps every shell follows:
    ///
    /// 1. `answered`: a request from an earlier [`Session::plan`] of this turn and what the
    ///    summarizer said about it (`None` when it failed); stored as a checkpoint by
    ///    [`Session::complete_summary`] (an unusable answer falls back to the extractive
    ///    summary). A request that a checkpoint stored meanwhile already covers is stale and
    ///    dropped.
    /// 2. Plan. If a summary is still requested, answer it extractively and plan again.
    /// 3. `render` the ready view (convert it to a wire format, say) while it still borrows the
    ///    log, so no message is copied for it.
    /// 4. Keep what the view hands back ([`Session::finish_turn`]).
    ///
    /// When any step fails, `render` included, the session is left exactly as it was (a
    /// checkpoint stored in step 1 or 2 is taken back) and the error is returned.
    pub fn prepare_with<T, E: From<CoreError>>(
        &mut self,
        settings: &TurnSettings<'_>,
        answered: Option<(&SummaryRequest, Option<&str>)>,
        render: impl FnOnce(&View<'_>) -> std::result::Result<T, E>,
    ) -> std::result::Result<PreparedTurn<T>, E> {
        let checkpoints = self.checkpoints.len();
        let result = self.prepare_steps(settings, answered, render);
        if result.is_err() {
            self.checkpoints.truncate(checkpoints);
        }
        result
    }

    fn prepare_steps<T, E: From<CoreError>>(
        &mut self,
        settings: &TurnSettings<'_>,
        answered: Option<(&SummaryRequest, Option<&str>)>,
        render: impl FnOnce(&View<'_>) -> std::result::Result<T, E>,
    ) -> std::result::Result<PreparedTurn<T>, E> {
        let mut summary = None;
        if let Some((request, answer)) = answered {
            let stale = self
                .latest_checkpoint()
                .is_some_and(|latest| latest.through_seq >= request.through_seq);
            if !stale {
                summary = Some(self.summarize(request, answer, settings.policy)?);
            }
        }
        if let Plan::Summarize(request) = self.plan(settings)? {
            summary = Some(self.summarize(&request, None, settings.policy)?);
        }
        let (rendered, stats, new_checkpoint, next_nudge_state) = match self.plan(settings)? {
            Plan::Ready(ready) => {
                let ReadyView {
                    view,
                    stats,
                    next_nudge_state,
                    new_checkpoint,
                } = *ready;
                (render(&view)?, stats, new_checkpoint, next_nudge_state)
            }
            Plan::Summarize(_) => {
                return Err(CoreError::invalid(
                    "plan",
                    "a second summary request in one turn (this is a bug in ctxkit)",
                )
                .into());
            }
        };
        self.finish_turn(new_checkpoint, next_nudge_state)?;
        Ok(PreparedTurn {
            rendered,
            stats,
            summary,
        })
    }

    fn summarize(
        &mut self,
        request: &SummaryRequest,
        answer: Option<&str>,
        policy: &Policy,
    ) -> Result<SummaryOutcome> {
        let (method, fallback_reason) = self.complete_summary(request, answer, policy)?;
        Ok(SummaryOutcome {
            through_seq: request.through_seq,
            method,
            fallback_reason,
        })
    }
}

/// What [`Session::prepare_with`] hands back.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedTurn<T> {
    /// What `render` made of the view.
    pub rendered: T,
    /// How the view was made.
    pub stats: ViewStats,
    /// The checkpoint this turn stored from a summary, if it stored one.
    pub summary: Option<SummaryOutcome>,
}

/// A summary stored as a checkpoint during a turn.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryOutcome {
    /// The last `seq` the checkpoint covers.
    pub through_seq: u64,
    /// Who wrote it: the LLM, or the extractive summarizer.
    pub method: SummaryMethod,
    /// Why the summarizer's answer was not used, when there was one and it was refused.
    pub fallback_reason: Option<CoreError>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    #[test]
    fn a_session_compacts_offline_and_checkpoints_move_forward() {
        let mut session = Session::new(ModelFamily::OpenAi);
        let budget = Budget {
            context_window: 3_000,
            output_reserve: 0,
            tool_schema_tokens: 0,
            safety_margin: 0,
            ..Budget::default()
        };
        let policy = Policy {
            max_summary_tokens: 300,
            ..Policy::default()
        };
        let settings = TurnSettings {
            system_prompt: "sys",
            budget,
            policy: &policy,
            todos: &[],
        };
        for turn in 0..40 {
            session.append([
                Message::user(format!("step {turn}: look at src/file{turn}.rs")),
                Message::assistant(
                    "",
                    vec![ToolCall::new(
                        format!("c{turn}"),
                        "read_file",
                        format!(r#"{{"path":"src/file{turn}.rs"}}"#),
                    )],
                ),
                Message::tool_result(format!("c{turn}"), "fn main() {}\n".repeat(20), false),
            ]);
            let (messages, stats) = session.prepare_offline(&settings).unwrap();
            assert!(stats.fits, "turn {turn}: {stats:?}");
            assert!(messages.len() > 1);
        }
        assert!(session.checkpoints.len() >= 2);
        assert!(session
            .checkpoints
            .windows(2)
            .all(|pair| pair[0].through_seq < pair[1].through_seq));
        assert_eq!(session.nudge_state.turn, 40);
        assert_eq!(session.next_seq(), 121);

        let stale = session.checkpoints[0].clone();
        let before = session.clone();
        assert!(session.add_checkpoint(stale).is_err());
        assert_eq!(session, before, "a failed call changes nothing");
    }

    fn long_session() -> Session {
        let mut session = Session::new(ModelFamily::OpenAi);
        for turn in 0..30 {
            session.append([
                Message::user(format!("step {turn}: look at src/file{turn}.rs")),
                Message::assistant(
                    "",
                    vec![ToolCall::new(format!("c{turn}"), "read_file", "{}")],
                ),
                Message::tool_result(format!("c{turn}"), "fn main() {}\n".repeat(20), false),
            ]);
        }
        session
    }

    fn small_budget() -> Budget {
        Budget {
            context_window: 3_000,
            output_reserve: 0,
            tool_schema_tokens: 0,
            safety_margin: 0,
            ..Budget::default()
        }
    }

    #[test]
    fn prepare_with_uses_an_answer_falls_back_and_drops_stale_requests() {
        let policy = Policy {
            max_summary_tokens: 300,
            ..Policy::default()
        };
        let settings = TurnSettings {
            system_prompt: "sys",
            budget: small_budget(),
            policy: &policy,
            todos: &[],
        };
        let render = |view: &View<'_>| Ok::<_, CoreError>(view.messages.len());

        let mut session = long_session();
        let Plan::Summarize(request) = session.plan(&settings).unwrap() else {
            panic!("the session is over the trigger");
        };
        let turn = session
            .prepare_with(&settings, Some((&request, Some("## Goal\nsteps"))), render)
            .unwrap();
        let summary = turn.summary.unwrap();
        assert_eq!(summary.method, SummaryMethod::Llm);
        assert_eq!(summary.through_seq, request.through_seq);
        assert_eq!(session.checkpoints.len(), 1);
        assert_eq!(session.checkpoints[0].summary, "## Goal\nsteps");
        assert_eq!(session.nudge_state.turn, 1);

        // The same request again is stale: the checkpoint already covers it.
        let turn = session
            .prepare_with(&settings, Some((&request, Some("## Goal\nagain"))), render)
            .unwrap();
        assert_eq!(turn.summary, None);
        assert_eq!(session.checkpoints.len(), 1);

        let mut fallback = long_session();
        let turn = fallback
            .prepare_with(&settings, Some((&request, Some(""))), render)
            .unwrap();
        let summary = turn.summary.unwrap();
        assert_eq!(summary.method, SummaryMethod::Extractive);
        assert_eq!(
            summary.fallback_reason.map(|e| e.to_string()).as_deref(),
            Some("summary: the summarizer returned an empty summary")
        );
    }

    #[test]
    fn a_failed_render_leaves_the_session_as_it_was() {
        let policy = Policy::default();
        let settings = TurnSettings {
            system_prompt: "sys",
            budget: small_budget(),
            policy: &policy,
            todos: &[],
        };
        let mut session = long_session();
        let before = session.clone();
        let failed = session.prepare_with(&settings, None, |_view: &View<'_>| {
            Err::<(), _>(CoreError::invalid("render", "no"))
        });
        assert_eq!(
            failed.map_err(|e| e.to_string()),
            Err("render: no".to_owned())
        );
        assert_eq!(session, before, "the extractive checkpoint is taken back");
        let (_, stats) = session.prepare_offline(&settings).unwrap();
        assert_eq!(stats.checkpoint_method, Some(SummaryMethod::Extractive));
        assert_eq!(session.checkpoints.len(), 1);
    }

    #[test]
    fn a_session_from_outside_is_checked() {
        let session = long_session();
        assert_eq!(Session::validated(session.clone()), Ok(session.clone()));

        let mut shuffled = session.clone();
        shuffled.entries.swap(3, 4);
        assert_eq!(
            Session::validated(shuffled).map_err(|e| e.to_string()),
            Err("entries[seq 4]: seq must increase, but 4 follows 5".to_owned())
        );

        let mut beyond = session.clone();
        beyond.checkpoints.push(Checkpoint {
            through_seq: 500,
            summary: "s".into(),
            method: SummaryMethod::Extractive,
            active_tasks: None,
            tokens: 1,
            made_at_turn: 1,
        });
        assert_eq!(
            Session::validated(beyond).map_err(|e| e.to_string()),
            Err("checkpoints[0].through_seq: covers seq 500 but the log ends at 90".to_owned())
        );
    }
}
