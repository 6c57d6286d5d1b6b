//! A session in memory: the log, its checkpoints, the nudge state and the last real usage.
//!
//! Both shells keep a session this way (the wasm `Engine` in memory, the native engine loaded
//! from and saved to a store), so the rules live here once: sequence numbers are assigned on
//! append and never reused, checkpoints only move forward and cover only logged messages, and a
//! turn's changes ([`TurnChanges`]) are applied all at once. Every method is pure computation
//! on the session's own data; a method that fails leaves the session as it was. Turns are run
//! by the [`TurnDriver`].

use serde::{Deserialize, Serialize};

use crate::compaction::{Budget, Checkpoint, Policy, TodoItem, ViewStats};
use crate::error::{CoreError, Result};
use crate::memory::NudgeState;
use crate::model::{Entry, Message};
use crate::prompt::FrozenParts;
use crate::tokens::{check_usage, ModelFamily, RefusedUsage, UsageAnchor};
use crate::turn::{BackgroundSlot, SummarizerBreaker, TurnChanges, TurnDriver, TurnStep};

/// One session's state, serializable as a whole (to keep it in IndexedDB, a file, a row).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// The last reported usage the calibration refused (outside the plausible band of the
    /// estimate), kept until one is taken; every view's stats report it. Absent when none was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused_usage: Option<RefusedUsage>,
    /// The summarizer's circuit breaker ([`crate::turn::breaker`]): timeouts in a row and the
    /// compactions still to skip. Absent when closed with no timeout counted.
    #[serde(skip_serializing_if = "SummarizerBreaker::is_closed_and_clear")]
    pub summarizer_breaker: SummarizerBreaker,
    /// The system prompt's parts frozen with the latest checkpoint
    /// ([`crate::prompt::freeze_prompt`]), for a shell that keeps the whole session as one
    /// value (the JS engine's state); the native stores keep them in a table of their own.
    /// Absent before a turn froze any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frozen_prompt: Option<FrozenParts>,
}

/// A turn's inputs, besides the session itself.
#[derive(Debug, Clone, Copy)]
pub struct TurnInputs<'x> {
    /// The system prompt of this turn (see [`crate::prompt`]); never stored in the log.
    pub system_prompt: &'x str,
    /// The system prompt of a view planned from a checkpoint this turn makes, when the caller
    /// freezes the prompt between compactions ([`crate::prompt::freeze_prompt`]): the one built
    /// from the parts read this turn. `None`: [`TurnInputs::system_prompt`] in every case.
    /// The turn's result says which one its view holds
    /// ([`crate::TurnResult::prompt_refreshed`]).
    pub refreshed_system_prompt: Option<&'x str>,
    /// The token budget.
    pub budget: Budget,
    /// The policy (the turn plans for the session's family whatever it says: see
    /// [`crate::turn::policy_for_session`]).
    pub policy: &'x Policy,
    /// The agent's todo list (its active items are frozen into a checkpoint made this turn).
    pub todos: &'x [TodoItem],
    /// Ask for memory extraction before a summary ([`TurnStep::NeedExtraction`]): set it when
    /// the caller has an LLM and wants memories kept.
    pub extract_memories: bool,
    /// The session's background compaction slot, as the caller holds it (see
    /// [`crate::turn::background_request`]): a ready checkpoint is used at the trigger, when
    /// still current, instead of a summary call.
    pub background: BackgroundSlot<'x>,
    /// The provider's cache of the previous request has expired (the time since the last call
    /// exceeds its lifetime: Anthropic's and OpenAI's five minutes): the next call rewrites the
    /// whole prefix anyway, so the turn compacts from the policy's lower cold trigger
    /// ([`crate::compaction::Policy::cold_trigger_percent`]). The caller knows when it last
    /// called the model; the core has no clock.
    pub cache_expired: bool,
    /// The caller asks an LLM when the turn needs a summary: the session's
    /// [`SummarizerBreaker`] applies (while open, the turn compacts without asking). A turn
    /// without one (a view, a preview) neither reads nor changes the breaker.
    pub has_summarizer: bool,
}

impl<'x> TurnInputs<'x> {
    /// The inputs of a turn with no todo list and no memory extraction.
    pub fn new(system_prompt: &'x str, budget: Budget, policy: &'x Policy) -> Self {
        TurnInputs {
            system_prompt,
            refreshed_system_prompt: None,
            budget,
            policy,
            todos: &[],
            extract_memories: false,
            background: BackgroundSlot::Idle,
            cache_expired: false,
            has_summarizer: false,
        }
    }
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
            refused_usage,
            summarizer_breaker,
            frozen_prompt,
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
                    other => other,
                })?;
        }
        checked.nudge_state = nudge_state;
        checked.usage_anchor = usage_anchor;
        checked.refused_usage = refused_usage;
        checked.summarizer_breaker = summarizer_breaker;
        checked.frozen_prompt = frozen_prompt;
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

    /// Applies what a turn decided: its checkpoint, then its nudge state. All or nothing.
    pub fn apply(&mut self, changes: &TurnChanges) -> Result<()> {
        if let Some(checkpoint) = &changes.checkpoint {
            self.add_checkpoint(checkpoint.clone())?;
        }
        self.nudge_state = changes.nudge_state;
        Ok(())
    }

    /// Records the real input tokens the API reported for the view described by `stats`, when
    /// they are plausible for it ([`check_usage`]): it becomes the calibration anchor. A count
    /// outside the band is refused: the anchor stays as it was, the refusal is kept (and shown
    /// in the next views' stats) and returned.
    pub fn record_usage(
        &mut self,
        stats: &ViewStats,
        input_tokens: u64,
    ) -> std::result::Result<(), RefusedUsage> {
        match check_usage(stats.total_tokens, stats.budget_tokens, input_tokens) {
            Ok(()) => {
                self.usage_anchor = Some(stats.usage_anchor(input_tokens));
                self.refused_usage = None;
                Ok(())
            }
            Err(refused) => {
                self.refused_usage = Some(refused);
                Err(refused)
            }
        }
    }

    /// Runs a whole turn without an LLM (every summary is extractive) and keeps what it
    /// decided. Returns the view's messages (system prompt first) and stats.
    pub fn prepare_offline(
        &mut self,
        inputs: &TurnInputs<'_>,
    ) -> Result<(Vec<Message>, ViewStats)> {
        let mut turn = TurnDriver::start(inputs)?;
        let messages = loop {
            match turn.step(self)? {
                TurnStep::NeedExtraction(_) => turn.answer_extraction(None)?,
                TurnStep::NeedSummary(_) => turn.answer_summary(self, None)?,
                TurnStep::Ready(view) => break view.to_messages(),
            }
        };
        let (result, _) = turn.finish(self)?;
        Ok((messages, result.stats))
    }
}
