//! Recording what came back from the model and the tools (the usage the API reported is
//! `usage.rs`; an append under an idempotency key, `keyed.rs`).
//!
//! Two ways to record messages, both offloading first (a tool result over the threshold goes
//! to a file, its reference goes to the log):
//! - [`Engine::record_batch`]: the whole batch in one transaction, all or nothing. When another
//!   writer appended to the session between reading where its log ends and writing (a lost
//!   race, [`crate::Error::SeqConflict`]), the batch's offload files are removed, the log's
//!   end is read again, the batch is renumbered and offloaded again, and the append retried,
//!   at most [`APPEND_ATTEMPTS`] times, each after a random wait in a window that doubles
//!   (`race_backoff`). On any failure every offload file it wrote is removed,
//!   so nothing of a failed batch remains. The CLI's `append` uses it.
//! - [`Engine::record`]: each message appended in its own transaction with its offload
//!   record, so a crash loses at most the message being written, and on an error the earlier
//!   messages stay recorded (the caller sees which from the error).
//!
//! When an append fails, the files written for it are removed again.
//!
//! Neither loads the session: an append reads where the log ends from the session's head, and
//! the name of the tool behind a tool result (for the offload exclusions) from the batch, the
//! cached tail, or else the store's one call with that id (`tool_names`), so appending to a
//! session of any length reads no more than a session of ten messages.

use std::path::Path;

use ctxkit_core::model::Entry;
use ctxkit_core::offload::OffloadPolicy;
use ctxkit_core::turn::tool_name_for_result;
use ctxkit_core::{Message, Role};

use ctxkit_core::turn::Session;

use super::keyed::Keyed;
use super::{Engine, Event, WarningKind};
use crate::error::{Error, Result};
use crate::offload::{offload_tool_output, OffloadOutcome, PendingOffload};
use crate::store::{Appended, OffloadRecord, SessionImport};

/// How many times [`Engine::record_batch`] tries to append a batch that keeps losing the race
/// to other writers (waiting at most about 6.6 s in all between them, about half that on
/// average: a busy session's writers are spread out well before then).
pub const APPEND_ATTEMPTS: usize = 32;

/// A batch offloaded and numbered, ready to append.
struct PreparedBatch {
    entries: Vec<Entry>,
    /// The offload records to store.
    records: Vec<OffloadRecord>,
    /// Their files, still pending (to commit once stored, to discard if the append fails).
    pending: Vec<PendingOffload>,
    /// Outputs that could not be offloaded (kept in the log).
    warnings: Vec<String>,
}

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
    /// True when the batch was not stored now because its idempotency key was stored already
    /// ([`Engine::record_batch_keyed`]): `recorded` are the seqs stored then.
    pub repeated: bool,
}

impl Engine {
    /// Records `messages` (the assistant's answer, tool results, the next user message) at
    /// the end of `session`'s log: each offloaded if the policy says so, then appended in its
    /// own transaction. On an error, the messages before the failing one stay recorded, and a
    /// race lost to another writer is not retried ([`crate::Error::SeqConflict`]). To store a
    /// batch whole or not at all, use [`Engine::record_batch`].
    pub fn record(&mut self, session: &str, messages: Vec<Message>) -> Result<RecordOutcome> {
        let mut outcome = RecordOutcome {
            recorded: Vec::with_capacity(messages.len()),
            events: Vec::new(),
            repeated: false,
        };
        for message in messages {
            let recorded = self.record_one(session, message, &mut outcome.events)?;
            outcome.recorded.push(recorded);
        }
        Ok(outcome)
    }

    /// Records `messages` at the end of `session`'s log in one transaction: each offloaded
    /// if the policy says so, then all appended together, or, on any failure, none (and no
    /// offload file of theirs stays). A race lost to another writer is retried (see the
    /// module doc). With `create_missing`, a session that does not exist is created in the
    /// same transaction.
    pub fn record_batch(
        &mut self,
        session: &str,
        messages: Vec<Message>,
        create_missing: bool,
    ) -> Result<RecordOutcome> {
        self.record_batch_with(session, &messages, create_missing, None)
    }

    /// [`Engine::record_batch`], under the idempotency key `key` when given (see
    /// [`super::keyed`]): a lost race is retried (renumbered) unless the key names the seq the
    /// batch must follow.
    pub(super) fn record_batch_with(
        &mut self,
        session: &str,
        messages: &[Message],
        create_missing: bool,
        key: Option<&Keyed>,
    ) -> Result<RecordOutcome> {
        let renumber = key.is_none_or(|key| key.after.is_none());
        let mut attempt = 1;
        loop {
            match self.try_record_batch(session, messages, create_missing, key) {
                Err(error)
                    if renumber
                        && attempt < APPEND_ATTEMPTS
                        && lost_race(&error, create_missing) =>
                {
                    attempt += 1;
                    std::thread::sleep(race_backoff(attempt));
                }
                other => return other,
            }
        }
    }

    fn try_record_batch(
        &mut self,
        session: &str,
        messages: &[Message],
        create_missing: bool,
        key: Option<&Keyed>,
    ) -> Result<RecordOutcome> {
        let now = self.clock.now_unix();
        let (exists, first_seq, family) = match self.store.session_head(session) {
            Ok(head) => (true, head.last_seq.saturating_add(1), head.family),
            Err(Error::NoSuchSession(_)) if create_missing => (false, 1, self.config.policy.family),
            Err(error) => return Err(error),
        };
        // A batch that names the seq it follows is numbered from there, wherever the log ends.
        let first_seq = key
            .and_then(|key| key.after)
            .map_or(first_seq, |after| after.saturating_add(1));
        let tool_names = self.tool_names(session, messages, first_seq, exists)?;
        let batch = self.prepare_batch(session, messages, &tool_names, first_seq, family);
        let create = (!exists).then_some(family);
        let stored = self.store_batch(session, &batch, key, create, now);
        let stored = match stored {
            Ok(Appended::Repeated {
                first_seq,
                last_seq,
            }) => {
                for pending in batch.pending {
                    pending.discard();
                }
                return self.repeated(session, &batch.entries, first_seq, last_seq);
            }
            other => other,
        };
        if let Err(error) = stored {
            for pending in batch.pending {
                // Nothing refers to the file: remove it (in the folder held since it was
                // written, so a folder swapped for a link meanwhile cannot lead the removal
                // elsewhere), so a retry can write it anew.
                pending.discard();
            }
            self.sessions.remove(session);
            return Err(error);
        }
        self.commit_offloads(batch.pending);
        self.cache_appended(session, first_seq, &batch.entries);
        let mut outcome = RecordOutcome {
            recorded: Vec::with_capacity(batch.entries.len()),
            events: Vec::new(),
            repeated: false,
        };
        for warning in batch.warnings {
            let event = Event::warning(Some(session), WarningKind::OffloadFailed, warning);
            self.emit(&mut outcome.events, event);
        }
        for entry in &batch.entries {
            let record = batch
                .records
                .iter()
                .find(|record| record.seq == entry.seq)
                .cloned();
            if let Some(record) = &record {
                let event = Event::Offloaded {
                    session: session.to_owned(),
                    seq: entry.seq,
                    relative_path: record.relative_path.clone(),
                    bytes: record.bytes,
                };
                self.emit(&mut outcome.events, event);
            }
            outcome.recorded.push(RecordedMessage {
                seq: entry.seq,
                tokens: entry.tokens,
                offload: record,
            });
        }
        Ok(outcome)
    }

    /// Stores `batch` in one transaction: under `key` when given; appended to the session, or,
    /// with `create` (the family of a session that does not exist), in a session created
    /// holding it.
    fn store_batch(
        &mut self,
        session: &str,
        batch: &PreparedBatch,
        key: Option<&Keyed>,
        create: Option<ctxkit_core::tokens::ModelFamily>,
        now: i64,
    ) -> Result<Appended> {
        let (entries, records) = (&batch.entries, &batch.records);
        match (key, create) {
            (Some(key), create) => self
                .store
                .append_keyed(session, &key.key, create, entries, records, now),
            (None, None) => self
                .store
                .append(session, entries, records, now)
                .map(|()| Appended::Stored),
            (None, Some(family)) => {
                let mut new = Session::new(family);
                new.entries.clone_from(entries);
                let import = SessionImport {
                    name: session,
                    session: &new,
                    offloads: records,
                };
                self.store
                    .import_sessions(&[import], &[], &self.project, now)
                    .map(|_| Appended::Stored)
            }
        }
    }

    /// Numbers `messages` from `first_seq` and offloads what the policy says (writing the
    /// files), each tool result with its tool's name from `tool_names` (see
    /// [`Engine::tool_names`]).
    fn prepare_batch(
        &self,
        session: &str,
        messages: &[Message],
        tool_names: &[Option<String>],
        first_seq: u64,
        family: ctxkit_core::tokens::ModelFamily,
    ) -> PreparedBatch {
        let mut batch = PreparedBatch {
            entries: Vec::with_capacity(messages.len()),
            records: Vec::new(),
            pending: Vec::new(),
            warnings: Vec::new(),
        };
        for ((message, seq), tool_name) in messages.iter().zip(first_seq..).zip(tool_names) {
            let outcome = offload_if_due(
                self.config.offload.as_ref(),
                &self.workdir,
                session,
                seq,
                message.clone(),
                tool_name.as_deref(),
            );
            batch.records.extend(outcome.record);
            batch.pending.extend(outcome.pending);
            batch.warnings.extend(outcome.warning);
            batch.entries.push(Entry::new(seq, outcome.message, family));
        }
        batch
    }

    /// The name of the tool behind each of `messages` (to be logged from `first_seq`) that is
    /// a tool result the offload policy may offload: its call looked for among the batch's
    /// earlier messages, then in the cached tail of the session, then (when the session
    /// `exists`) in the store, within the core's [`ctxkit_core::turn::CALL_LOOKBACK`] (a read
    /// of the calls that hold the id, never of the log). `None` for every other message, and
    /// for all of them when offloading is off (nothing else uses the name).
    fn tool_names(
        &self,
        session: &str,
        messages: &[Message],
        first_seq: u64,
        exists: bool,
    ) -> Result<Vec<Option<String>>> {
        let mut names = Vec::with_capacity(messages.len());
        for (index, (message, seq)) in messages.iter().zip(first_seq..).enumerate() {
            let call_id = match (&self.config.offload, message.role, &message.tool_call_id) {
                (Some(_), Role::Tool, Some(id)) => id,
                _ => {
                    names.push(None);
                    continue;
                }
            };
            let earlier = messages.get(..index).unwrap_or_default();
            let in_memory = tool_name_in(earlier, call_id).or_else(|| {
                // The cached tail only while it ends where this batch begins (else it is stale).
                let cached = self
                    .sessions
                    .get(session)
                    .filter(|cached| exists && cached.session.next_seq() == first_seq)?;
                tool_name_for_result(&cached.session.entries, call_id).map(str::to_owned)
            });
            let name = match in_memory {
                Some(name) => Some(name),
                None if exists => self.store.call_tool_name(session, seq, call_id)?,
                None => None,
            };
            names.push(name);
        }
        Ok(names)
    }

    /// After `entries` (from `first_seq`) were appended: the cached tail follows when it ended
    /// right before them; else it is dropped (the next turn reads the tail again).
    fn cache_appended(&mut self, session: &str, first_seq: u64, entries: &[Entry]) {
        let Some(cached) = self.sessions.get_mut(session) else {
            return;
        };
        if cached.session.next_seq() != first_seq
            || cached.session.append_entries(entries.to_vec()).is_err()
        {
            self.sessions.remove(session);
        }
    }

    fn record_one(
        &mut self,
        session: &str,
        message: Message,
        events: &mut Vec<Event>,
    ) -> Result<RecordedMessage> {
        let now = self.clock.now_unix();
        let head = self.store.session_head(session)?;
        let (seq, family) = (head.last_seq.saturating_add(1), head.family);
        let tool_name = self
            .tool_names(session, std::slice::from_ref(&message), seq, true)?
            .pop()
            .flatten();
        let offloaded = offload_if_due(
            self.config.offload.as_ref(),
            &self.workdir,
            session,
            seq,
            message,
            tool_name.as_deref(),
        );
        let OffloadOutcome {
            message,
            record,
            pending,
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
            if let Some(pending) = pending {
                // Nothing refers to the file: remove it, so a retry can write it anew.
                pending.discard();
            }
            self.sessions.remove(session);
            return Err(error);
        }
        self.commit_offloads(pending);
        let recorded = RecordedMessage {
            seq,
            tokens: entry.tokens,
            offload: record.clone(),
        };
        self.cache_appended(session, seq, std::slice::from_ref(&entry));
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

    /// After the transaction that recorded their rows committed: the `pending` files are the
    /// rows' alone (each pending mark dropped, [`PendingOffload::commit`]), unless this engine
    /// keeps them pending until another store holds the rows
    /// ([`Engine::keep_offloads_pending`]).
    fn commit_offloads(&self, pending: impl IntoIterator<Item = PendingOffload>) {
        if self.offloads_pending {
            return;
        }
        for file in pending {
            file.commit();
        }
    }
}

/// How long a batch that lost the race waits before its attempt `attempt` (2 or more): a
/// random share of a window that doubles from 4 ms to 256 ms. Writers that collided then spread
/// out instead of colliding again in step: on PostgreSQL a commit holds the session's row
/// through its WAL flush, and every writer that read the log's end meanwhile loses (8 CLI
/// appenders on 2 sessions lost 8 attempts in a row for 1.7% of their appends without it; with
/// a window capped at 64 ms one append in a full test run under load still lost 16 in a row,
/// so the window keeps doubling to 256 ms, and a batch gets [`APPEND_ATTEMPTS`], 32, attempts:
/// they wait at most about 6.6 s in all).
fn race_backoff(attempt: usize) -> std::time::Duration {
    use std::hash::BuildHasher;
    let window_micros = 1_000u64 << attempt.clamp(2, 8);
    // RandomState's keys are random per thread and change with every instance.
    let random = std::collections::hash_map::RandomState::new().hash_one(attempt);
    std::time::Duration::from_micros(random % window_micros)
}

/// Whether `error` says another writer got there first, so the batch can be renumbered and
/// tried again: it appended to the session, or (when creating it) created it.
fn lost_race(error: &Error, create_missing: bool) -> bool {
    match error {
        Error::SeqConflict { .. } => true,
        Error::SessionExists(_) => create_missing,
        _ => false,
    }
}

/// The name of the tool whose call `call_id` is among `messages`, newest first.
fn tool_name_in(messages: &[Message], call_id: &str) -> Option<String> {
    messages
        .iter()
        .rev()
        .filter(|message| message.role == Role::Assistant)
        .flat_map(|message| message.tool_calls.iter())
        .find(|call| call.id == call_id)
        .map(|call| call.name.clone())
}

/// `message` offloaded to a file when it is a tool result and `policy` (the engine's; `None`:
/// offloading off) says so, else kept as it is. Both record paths decide through here.
fn offload_if_due(
    policy: Option<&OffloadPolicy>,
    workdir: &Path,
    session: &str,
    seq: u64,
    message: Message,
    tool_name: Option<&str>,
) -> OffloadOutcome {
    match policy {
        Some(policy) if message.role == Role::Tool => {
            offload_tool_output(workdir, session, seq, message, tool_name, policy)
        }
        _ => OffloadOutcome {
            message,
            record: None,
            pending: None,
            warning: None,
        },
    }
}
