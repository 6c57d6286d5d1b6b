//! Background compaction in the native engine: a turn past the policy's soft threshold
//! ([`ctxkit_core::compaction::Policy::background_percent`]) hands the summary request the core
//! made ([`ctxkit_core::turn::background_request`]) to a worker thread that asks the LLM; the
//! next turns pick the answer up without waiting, turn it into a checkpoint with the core
//! ([`ctxkit_core::turn::background_checkpoint`]), and the first turn that reaches the trigger
//! uses it instead of a summary call (the core's driver decides whether it still applies).
//!
//! Guarantees: at most one request in flight per session; the thread only makes the HTTP call
//! (no store, no session: everything it answers is checked by the core on the main thread); a
//! failed call drops the request (the trigger then compacts synchronously, as without a
//! background summary); a checkpoint that stopped being current (another compaction reached
//! the session) is dropped; the background state is held in memory by the engine, so a new
//! process starts without it.

use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::sync::Arc;

use ctxkit_core::compaction::SummaryRequest;
use ctxkit_core::turn::{
    background_checkpoint, background_request, BackgroundCheckpoint, BackgroundSlot, Session,
    TurnInputs,
};

use crate::llm::{Llm, LlmRequest};

/// One session's background compaction.
#[derive(Debug)]
pub(super) enum Job {
    /// A worker thread is asking the LLM; its answer (or nothing, if the call failed) arrives
    /// on `answer`.
    InFlight {
        request: SummaryRequest,
        answer: Receiver<String>,
    },
    /// A checkpoint waiting for the trigger.
    Ready(BackgroundCheckpoint),
}

/// The background jobs of every session the engine has seen.
#[derive(Debug, Default)]
pub(super) struct Jobs {
    jobs: BTreeMap<String, Job>,
}

impl Jobs {
    /// Picks up a finished answer for `name` (without waiting), turning it into a checkpoint
    /// on `session`; a failed call clears the slot.
    pub(super) fn poll(&mut self, name: &str, session: &Session, inputs: &TurnInputs<'_>) {
        let Some(Job::InFlight { request, answer }) = self.jobs.get(name) else {
            return;
        };
        let next = match answer.try_recv() {
            Err(TryRecvError::Empty) => return,
            Err(TryRecvError::Disconnected) => None,
            Ok(text) => background_checkpoint(request, Some(&text), session, inputs)
                .ok()
                .map(Job::Ready),
        };
        match next {
            Some(job) => self.jobs.insert(name.to_owned(), job),
            None => self.jobs.remove(name),
        };
    }

    /// The slot the core's driver reads for `name`.
    pub(super) fn slot(&self, name: &str) -> BackgroundSlot<'_> {
        match self.jobs.get(name) {
            None => BackgroundSlot::Idle,
            Some(Job::InFlight { .. }) => BackgroundSlot::InFlight,
            Some(Job::Ready(ready)) => BackgroundSlot::Ready(ready),
        }
    }

    /// After a finished turn: lets a used or stale checkpoint go, then, when nothing is in
    /// flight or waiting, starts the background request the core asks for, if any. Returns the
    /// request started.
    pub(super) fn after_turn(
        &mut self,
        name: &str,
        session: &Session,
        inputs: &TurnInputs<'_>,
        llm: &Arc<dyn Llm>,
    ) -> Option<SummaryRequest> {
        if let Some(Job::Ready(ready)) = self.jobs.get(name) {
            if !ready.usable(session) {
                self.jobs.remove(name);
            }
        }
        if self.jobs.contains_key(name) {
            return None;
        }
        let request = background_request(session, inputs).ok().flatten()?;
        let (send, answer) = mpsc::channel();
        let llm = Arc::clone(llm);
        let asked = request.clone();
        std::thread::spawn(move || {
            let result = llm.complete(&LlmRequest {
                system: &asked.system,
                prompt: &asked.prompt,
                messages: &asked.cache_safe_messages,
                anthropic_messages: None,
                responses_input: None,
                max_tokens: asked.max_output_tokens,
                // Off the critical path: the client's own deadline bounds it.
                deadline: None,
            });
            // A failed call sends nothing: the slot is cleared when the thread ends.
            if let Ok(text) = result {
                // The receiver is gone only when the engine was dropped: nothing to tell.
                let _ = send.send(text);
            }
        });
        self.jobs.insert(
            name.to_owned(),
            Job::InFlight {
                request: request.clone(),
                answer,
            },
        );
        Some(request)
    }
}
