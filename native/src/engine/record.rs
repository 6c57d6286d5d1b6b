//! Recording what came back from the model and the tools, and the usage the API reported.
//!
//! Each message is offloaded first (a tool result over the threshold goes to a file, its
//! reference goes to the log) and then appended in its own transaction with its offload
//! record, so a crash loses at most the message being written. When the append fails, the
//! file just written is removed again; the error names the session and the message's index.

use ctxkit_core::compaction::ViewStats;
use ctxkit_core::model::Entry;
use ctxkit_core::turn::tool_name_for_result;
use ctxkit_core::{Message, Role};

use super::{cached_session, Engine, Event, WarningKind};
use crate::error::Result;
use crate::offload::{offload_tool_output, OffloadOutcome};
use crate::store::OffloadRecord;

/// One recorded message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedMessage {
    /// Its seq.
    pub seq: u64,
    /// Its cached estimate (of the reference, when offloaded).
    pub tokens: u64,
    /// Where its output went, when offloaded.
    pub offload: Option<OffloadRecord>,
}

/// What [`Engine::record`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordOutcome {
    /// The messages, in order.
    pub recorded: Vec<RecordedMessage>,
    /// Offloads and warnings.
    pub events: Vec<Event>,
}

impl Engine {
    /// Records `messages` (the assistant's answer, tool results, the next user message) at
    /// the end of `session`'s log: each offloaded if the policy says so, then appended in its
    /// own transaction. On an error, the messages before the failing one stay recorded.
    pub fn record(&mut self, session: &str, messages: Vec<Message>) -> Result<RecordOutcome> {
        let mut outcome = RecordOutcome {
            recorded: Vec::with_capacity(messages.len()),
            events: Vec::new(),
        };
        for message in messages {
            let recorded = self.record_one(session, message, &mut outcome.events)?;
            outcome.recorded.push(recorded);
        }
        Ok(outcome)
    }

    fn record_one(
        &mut self,
        session: &str,
        message: Message,
        events: &mut Vec<Event>,
    ) -> Result<RecordedMessage> {
        let now = self.clock.now_unix();
        let cached = cached_session(self.store.as_ref(), &mut self.sessions, session)?;
        let seq = cached.next_seq();
        let family = cached.family;
        let offloaded = match &self.config.offload {
            Some(policy) if message.role == Role::Tool => {
                let tool_name = message
                    .tool_call_id
                    .as_deref()
                    .and_then(|id| tool_name_for_result(&cached.entries, id))
                    .map(str::to_owned);
                offload_tool_output(
                    &self.workdir,
                    session,
                    seq,
                    message,
                    tool_name.as_deref(),
                    policy,
                )
            }
            _ => OffloadOutcome {
                message,
                record: None,
                path: None,
                warning: None,
            },
        };
        let OffloadOutcome {
            message,
            record,
            path,
            warning,
        } = offloaded;
        if let Some(warning) = warning {
            let event = Event::warning(Some(session), WarningKind::OffloadFailed, warning);
            self.emit(events, event);
        }
        let entry = Entry::new(seq, message, family);
        let records: Vec<OffloadRecord> = record.iter().cloned().collect();
        if let Err(error) = self
            .store
            .append(session, std::slice::from_ref(&entry), &records, now)
        {
            if let Some(path) = &path {
                // Nothing refers to the file: remove it, so a retry can write it anew.
                let _ = std::fs::remove_file(path);
            }
            self.sessions.remove(session);
            return Err(error);
        }
        let recorded = RecordedMessage {
            seq,
            tokens: entry.tokens,
            offload: record.clone(),
        };
        if let Some(cached) = self.sessions.get_mut(session) {
            if cached.session.append_entries(vec![entry]).is_err() {
                self.sessions.remove(session);
            }
        }
        if let Some(record) = record {
            let event = Event::Offloaded {
                session: session.to_owned(),
                seq,
                relative_path: record.relative_path,
                bytes: record.bytes,
            };
            self.emit(events, event);
        }
        Ok(recorded)
    }

    /// Records the real input tokens the API reported for `view`: the calibration anchor of
    /// the next turns. Returns the usage event (also sent to the sink).
    pub fn record_usage(
        &mut self,
        session: &str,
        stats: &ViewStats,
        input_tokens: u64,
    ) -> Result<Event> {
        let now = self.clock.now_unix();
        let anchor = stats.usage_anchor(input_tokens);
        let version = self.store.record_usage(session, &anchor, now)?;
        if let Some(cached) = self.sessions.get_mut(session) {
            cached.session.record_usage(stats, input_tokens);
            cached.usage_version = version;
        }
        let event = Event::TokensReported {
            session: session.to_owned(),
            input_tokens,
            estimated_tokens: stats.total_tokens,
        };
        let mut events = Vec::new();
        self.emit(&mut events, event.clone());
        Ok(event)
    }
}
