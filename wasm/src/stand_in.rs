//! The provider's own compaction state in a view: when the view's checkpoint (this turn's or
//! the session's) keeps Anthropic's `compaction` block or OpenAI's Responses `compaction` item,
//! an `"anthropic"` or `"responses"` view carries it in the summary message's place, as the
//! core's [`summary_stand_in`] says; every other format, and a checkpoint without that state,
//! keeps the plaintext summary. A Responses item is not a message: the view carries the core's
//! marker message, and the items returned here replace its rendered item
//! ([`crate::view::render`]).

use std::borrow::Cow;

use ctxkit_core::compaction::{
    keep_compaction_block, summary_message, summary_stand_in, view_checkpoint, Checkpoint,
};
use ctxkit_core::wire::WireFormat;
use ctxkit_core::{Session, TurnDriver, View};
use serde_json::Value;

/// A compaction answer's `(through_seq, text, block)`, kept with the checkpoint it belongs to.
pub(crate) type KeptBlock = (u64, String, String);

/// Puts what stands for the checkpoint's summary message in a `format` view in its place, and
/// returns the Responses input items to splice in after rendering (empty when none). The view
/// is left as it is when its checkpoint keeps no state for that provider.
pub(crate) fn stand_in(
    view: &mut View<'_>,
    format: WireFormat,
    turn: &TurnDriver<'_>,
    session: &Session,
    kept: Option<&KeptBlock>,
) -> Vec<Value> {
    if !matches!(format, WireFormat::Anthropic | WireFormat::Responses) {
        return Vec::new();
    }
    let Some(through) = turn
        .ready_stats()
        .and_then(|stats| stats.checkpoint_through)
    else {
        return Vec::new();
    };
    // This turn's checkpoint, with the answer's block when it is the answer's.
    let pending: Option<Checkpoint> = kept.and_then(|(through_seq, text, block)| {
        let (_, changes) = turn.result().ok()?;
        let mut made = changes.checkpoint?;
        keep_compaction_block(&mut made, *through_seq, text, block.clone()).then_some(made)
    });
    let Some(checkpoint) = view_checkpoint(through, pending.as_ref(), &session.checkpoints) else {
        return Vec::new();
    };
    let Some(replacement) = summary_stand_in(checkpoint, format) else {
        return Vec::new();
    };
    let plain = summary_message(checkpoint);
    match view
        .messages
        .iter_mut()
        .find(|item| item.seq.is_none() && *item.message == plain)
    {
        Some(item) => {
            item.message = Cow::Owned(replacement.message);
            item.tokens = None;
            replacement.responses_items
        }
        None => Vec::new(),
    }
}
