//! How both backends assemble what they read into the core's types, kept once so a loaded
//! session, a search of the log and a read of it mean the same on SQLite and PostgreSQL: a
//! turn's session (the core's turn-tail rule), a whole session, the history search's two passes
//! and their outcome, and the name of the tool behind a tool result (looked up among the
//! assistant messages before it).
//!
//! A backend answers the reads ([`SessionReads`], over one transaction of its own, so what is
//! assembled is one snapshot; a search's [`SearchReads`] may instead be statements bounded by
//! one seq); nothing here touches a database.

use ctxkit_core::compaction::Checkpoint;
use ctxkit_core::memory::NudgeState;
use ctxkit_core::model::Entry;
use ctxkit_core::recall::{
    merge_hits, offload_match, read_entries, HistoryHit, HistoryMessage, ReadRequest,
    SearchOutcome, SearchRequest,
};
use ctxkit_core::tokens::{ModelFamily, UsageAnchor};
use ctxkit_core::turn::{turn_tail_after, Session, CALL_LOOKBACK};
use ctxkit_core::{Message, Role};

use super::columns::entry_from_parts;
use super::HistoryRead;
use crate::error::Result;

/// How many assistant messages before a tool result are read to find the call it answers.
pub(crate) const CALL_LOOKBACK_MESSAGES: u64 = 64;

/// What a history search reads of one session (its name fixed by the implementation): the
/// passes and the calls of the tool results they found. A backend may read them in one
/// transaction, or in statements that each see the log up to the same seq (the log is only
/// ever appended to, so that is one snapshot of it).
pub(crate) trait SearchReads {
    /// The session's name, for messages.
    fn name(&self) -> &str;
    /// One pass's reads: the messages whose searchable text holds every one of `needles` under
    /// the search's case fold (the core's [`ctxkit_core::recall::contains_folded`]), newest
    /// first, at most `wanted`; and the same for the session's offloaded outputs: those whose
    /// full text holds every one of `needles`, newest first, at most `wanted`, each as the
    /// message it was offloaded from (its reference), the output's path and its full text.
    /// Asked together, so a backend over a network reads both in one round trip.
    fn matching(
        &mut self,
        needles: &[&str],
        wanted: usize,
    ) -> Result<(Vec<Entry>, Vec<OffloadFound>)>;
    /// Where the calls of tool results may be: for each of `results` (a tool result's seq and
    /// the call id it answers, quoted as JSON writes it), those of the `count` assistant
    /// messages before it whose body holds the quoted id, newest first; as the result's seq, the
    /// assistant message's seq and its body, in `results`' order. One read for all of them.
    fn call_candidates(
        &mut self,
        results: &[(u64, String)],
        count: u64,
    ) -> Result<Vec<(u64, u64, String)>>;
}

/// What a backend reads of one session (its name and row fixed by the implementation), inside
/// one transaction: a search's reads, and the rest of the session.
pub(crate) trait SessionReads: SearchReads {
    /// Its family and nudge state.
    fn state(&mut self) -> Result<(ModelFamily, NudgeState)>;
    /// Its latest checkpoint.
    fn latest_checkpoint(&mut self) -> Result<Option<Checkpoint>>;
    /// Every checkpoint, in order.
    fn checkpoints(&mut self) -> Result<Vec<Checkpoint>>;
    /// Its latest usage anchor.
    fn latest_anchor(&mut self) -> Result<Option<UsageAnchor>>;
    /// The entries with `from <= seq <= to`, in order.
    fn entries_between(&mut self, from: u64, to: u64) -> Result<Vec<Entry>>;
}

/// An offloaded output a pass found: the log's entry (its reference), the output's path and
/// its full text.
pub(crate) type OffloadFound = (Entry, String, String);

/// What a turn needs: the latest checkpoint, the entries after it (or after the nudge state's
/// `last_seq`, if earlier: the core's [`turn_tail_after`]), the nudge state and the latest
/// usage anchor.
pub(crate) fn turn_session(reads: &mut impl SessionReads) -> Result<Session> {
    let (family, nudge_state) = reads.state()?;
    let checkpoint = reads.latest_checkpoint()?;
    let after = turn_tail_after(checkpoint.as_ref().map(|c| c.through_seq), &nudge_state);
    let entries = reads.entries_between(after.unwrap_or(0).saturating_add(1), u64::MAX)?;
    Ok(Session {
        family,
        entries,
        checkpoints: checkpoint.into_iter().collect(),
        nudge_state,
        usage_anchor: reads.latest_anchor()?,
        refused_usage: None,
        summarizer_breaker: Default::default(),
        // Kept apart, in the frozen prompt table (`SessionStore::frozen_prompt`).
        frozen_prompt: None,
    })
}

/// The whole session: every entry and every checkpoint.
pub(crate) fn whole_session(reads: &mut impl SessionReads) -> Result<Session> {
    let (family, nudge_state) = reads.state()?;
    let checkpoints = reads.checkpoints()?;
    Ok(Session {
        family,
        entries: reads.entries_between(1, u64::MAX)?,
        checkpoints,
        nudge_state,
        usage_anchor: reads.latest_anchor()?,
        refused_usage: None,
        summarizer_breaker: Default::default(),
        // Kept apart, in the frozen prompt table (`SessionStore::frozen_prompt`).
        frozen_prompt: None,
    })
}

/// A history search: the core's two passes (the whole query, then, when that found too few,
/// every word of it), each over the messages and over the offloaded outputs (the core's
/// [`merge_hits`]: a message's hit in its output is kept over its reference's), each at most
/// `limit + 1` newest hits, cut by [`SearchOutcome::from_passes`]; the tools' names looked up
/// for the hits it keeps.
pub(crate) fn search_history(
    reads: &mut impl SearchReads,
    request: &SearchRequest,
) -> Result<SearchOutcome> {
    let wanted = request.limit.saturating_add(1);
    let exact = pass(reads, request, &[request.query.as_str()], wanted, true)?;
    let words = if exact.len() < wanted && request.has_word_pass() {
        let terms: Vec<&str> = request.terms.iter().map(String::as_str).collect();
        pass(
            reads,
            request,
            &terms,
            wanted.saturating_add(exact.len()),
            false,
        )?
    } else {
        Vec::new()
    };
    let mut outcome = SearchOutcome::from_passes(request, exact, words);
    name_calling_tools(reads, outcome.hits.iter_mut().map(|hit| &mut hit.item))?;
    Ok(outcome)
}

/// One pass (`exact`: the whole query; else every word): the messages and the offloaded
/// outputs holding every one of `needles`, merged newest first, at most `wanted`.
fn pass(
    reads: &mut impl SearchReads,
    request: &SearchRequest,
    needles: &[&str],
    wanted: usize,
    exact: bool,
) -> Result<Vec<HistoryHit>> {
    let (messages, offloads) = reads.matching(needles, wanted)?;
    let messages = message_hits(messages, exact);
    let offloads = offloads
        .into_iter()
        .map(|(entry, path, text)| HistoryHit {
            offload: offload_match(&path, &text, request, exact),
            ..message_hit(entry, exact)
        })
        .collect();
    let mut hits = merge_hits(messages, offloads);
    hits.truncate(wanted);
    Ok(hits)
}

/// `entry` as a hit of a pass (`exact` or every word), in its own text.
fn message_hit(entry: Entry, exact: bool) -> HistoryHit {
    HistoryHit {
        item: HistoryMessage {
            seq: entry.seq,
            tool_name: own_tool_name(&entry.message),
            message: entry.message,
        },
        exact,
        offload: None,
    }
}

/// `entries` as hits of a pass.
fn message_hits(entries: Vec<Entry>, exact: bool) -> Vec<HistoryHit> {
    entries
        .into_iter()
        .map(|entry| message_hit(entry, exact))
        .collect()
}

/// A read of the log in `request`'s range, the tools' names looked up; `last_seq` is where the
/// log ends.
pub(crate) fn read_history(
    reads: &mut impl SessionReads,
    request: &ReadRequest,
    last_seq: u64,
) -> Result<HistoryRead> {
    let entries = reads.entries_between(request.from, request.to)?;
    let mut messages = read_entries(&entries, request);
    name_calling_tools(reads, messages.iter_mut())?;
    Ok(HistoryRead { messages, last_seq })
}

/// The name of the tool whose call `call_id` a result at `seq` answers, among the assistant
/// messages of the [`CALL_LOOKBACK`] seqs before it (the core's bound for
/// [`ctxkit_core::turn::tool_name_for_result`]), newest first: only the messages whose body
/// holds the quoted id are read.
pub(crate) fn call_tool_name(
    reads: &mut impl SearchReads,
    seq: u64,
    call_id: &str,
) -> Result<Option<String>> {
    let quoted = serde_json::Value::from(call_id).to_string();
    let lookback = u64::try_from(CALL_LOOKBACK).unwrap_or(u64::MAX);
    let candidates = reads.call_candidates(&[(seq, quoted)], lookback)?;
    let oldest = seq.saturating_sub(lookback);
    for (_, call_seq, body) in candidates.iter().filter(|(_, at, _)| *at >= oldest) {
        let entry = entry_from_parts(reads.name(), *call_seq, body, 0)?;
        if let Some(call) = entry.message.tool_calls.iter().find(|c| c.id == call_id) {
            return Ok(Some(call.name.clone()));
        }
    }
    Ok(None)
}

/// A message's own tool name (a tool result that carries one).
fn own_tool_name(message: &Message) -> Option<String> {
    message
        .name
        .as_deref()
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
}

/// For each tool result of `items` without a tool name: the name of the call it answers, among
/// the last [`CALL_LOOKBACK_MESSAGES`] assistant messages before it, newest first. Only those
/// whose body holds the call id as JSON writes it are read (a body is the message's serde
/// JSON, so the call's message is one of them), all results' at once, and parsed one at a time
/// until the call is found.
fn name_calling_tools<'m>(
    reads: &mut impl SearchReads,
    items: impl Iterator<Item = &'m mut HistoryMessage>,
) -> Result<()> {
    let unnamed: Vec<&mut HistoryMessage> = items
        .filter(|item| {
            item.tool_name.is_none()
                && item.message.role == Role::Tool
                && item.message.tool_call_id.is_some()
        })
        .collect();
    if unnamed.is_empty() {
        return Ok(());
    }
    let results: Vec<(u64, String)> = unnamed
        .iter()
        .map(|item| {
            let id = item.message.tool_call_id.as_deref().unwrap_or_default();
            (item.seq, serde_json::Value::from(id).to_string())
        })
        .collect();
    let candidates = reads.call_candidates(&results, CALL_LOOKBACK_MESSAGES)?;
    for item in unnamed {
        let call_id = item.message.tool_call_id.as_deref().unwrap_or_default();
        for (_, call_seq, body) in candidates.iter().filter(|(seq, _, _)| *seq == item.seq) {
            let entry = entry_from_parts(reads.name(), *call_seq, body, 0)?;
            if let Some(call) = entry.message.tool_calls.iter().find(|c| c.id == call_id) {
                item.tool_name = Some(call.name.clone());
                break;
            }
        }
    }
    Ok(())
}
