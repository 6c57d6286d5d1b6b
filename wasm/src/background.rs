//! Background compaction in the JS `Engine`: a `prepare` past the policy's soft threshold
//! (`policy.background_percent`) starts the `summarize` promise for the summary request the
//! core made ([`background_request`]) and returns its view without awaiting it; when the promise
//! settles, its answer becomes a checkpoint (made by the core, [`background_checkpoint`]) kept
//! beside the session, and the first `prepare` that reaches the trigger uses it instead of a
//! summary call (the core's driver decides whether it still applies).
//!
//! Guarantees, as the native engine's: at most one request in flight per engine; a summarizer
//! that fails (throws, rejects, times out, answers no usable string) drops the request, and the
//! trigger then compacts synchronously as without it; a checkpoint that stopped being current
//! (another compaction reached the session meanwhile) is dropped; no borrow of the session is
//! held while the promise runs. The state lives in memory: `toJSON()` does not carry it.

use std::cell::RefCell;
use std::rc::Rc;

use ctxkit_core::turn::{
    background_checkpoint, background_request, BackgroundCheckpoint, BackgroundSlot, Session,
};

use crate::summarize::{ask, ProviderConversations, Summarizer};
use crate::view::JsTurnInputs;

/// The engine's background compaction.
#[derive(Debug, Default)]
pub(crate) enum Background {
    /// Nothing in flight, nothing ready.
    #[default]
    Idle,
    /// A `summarize` promise started by an earlier `prepare` has not settled.
    InFlight,
    /// A checkpoint waiting for the trigger.
    Ready(BackgroundCheckpoint),
}

/// The engine's background cell, shared with the promise that fills it.
pub(crate) type BackgroundCell = Rc<RefCell<Background>>;

/// What the driver is to read for this turn, owned (so no borrow of the cell is held across
/// the turn's awaits): `(ready checkpoint, a request in flight)`. Nothing when the turn cannot
/// use background compaction (no summarizer, or the policy does not ask for it).
pub(crate) fn current(
    cell: &BackgroundCell,
    options: &JsTurnInputs,
    summarizer: &Summarizer,
) -> (Option<BackgroundCheckpoint>, bool) {
    if !enabled(options, summarizer) {
        return (None, false);
    }
    match &*cell.borrow() {
        Background::Idle => (None, false),
        Background::InFlight => (None, true),
        Background::Ready(ready) => (Some(ready.clone()), false),
    }
}

/// The slot the driver reads, from [`current`]'s answer.
pub(crate) fn slot(current: &(Option<BackgroundCheckpoint>, bool)) -> BackgroundSlot<'_> {
    match current {
        (Some(ready), _) => BackgroundSlot::Ready(ready),
        (None, true) => BackgroundSlot::InFlight,
        (None, false) => BackgroundSlot::Idle,
    }
}

/// After a finished turn: lets a used or stale checkpoint go, then, when nothing is in flight
/// or waiting, starts the `summarize` promise for the background request the core asks for, if
/// any, without awaiting it. True when one was started.
pub(crate) fn after_turn(
    cell: &BackgroundCell,
    session: &Rc<RefCell<Session>>,
    options: &JsTurnInputs,
    summarizer: &Summarizer,
) -> bool {
    let Some(summarize) = summarizer
        .function
        .clone()
        .filter(|_| enabled(options, summarizer))
    else {
        return false;
    };
    let (request, conversations) = {
        let Ok(borrowed) = session.try_borrow() else {
            return false;
        };
        let mut state = cell.borrow_mut();
        if matches!(&*state, Background::Ready(ready) if !ready.usable(&borrowed)) {
            *state = Background::Idle;
        }
        if !matches!(*state, Background::Idle) {
            return false;
        }
        match background_request(&borrowed, &options.inputs()) {
            Ok(Some(request)) => {
                *state = Background::InFlight;
                let conversations = ProviderConversations::of(&request, &borrowed);
                (request, conversations)
            }
            _ => return false,
        }
    };
    let (cell, session, options) = (Rc::clone(cell), Rc::clone(session), options.clone());
    let (timeout_ms, signal) = (summarizer.timeout_ms, summarizer.signal.clone());
    wasm_bindgen_futures::spawn_local(async move {
        let answer = ask(&summarize, &request, &conversations, timeout_ms, &signal).await;
        // A background checkpoint keeps the summary's text only (no compaction block); an
        // opaque Responses item has none, so its checkpoint is the extractive summary.
        let ready = answer.ok().and_then(|reply| {
            let borrowed = session.try_borrow().ok()?;
            background_checkpoint(&request, reply.text(), &borrowed, &options.inputs()).ok()
        });
        // Only this promise moves the cell out of InFlight.
        *cell.borrow_mut() = ready.map_or(Background::Idle, Background::Ready);
    });
    true
}

fn enabled(options: &JsTurnInputs, summarizer: &Summarizer) -> bool {
    summarizer.function.is_some() && options.policy.background_percent.is_some()
}
