//! Sizing a cut: the largest head + tail of a message whose estimate fits a token target.
//!
//! A message is cut by bytes (head and tail of each text around
//! [`CUT_MARKER`](super::truncation::CUT_MARKER)) but must fit in tokens, and no fixed
//! bytes-per-token ratio is right for every text: the ratio of the whole text guesses wrong for
//! a kept head and tail that read differently from the middle. So [`cut_to_tokens`] searches the
//! byte room, measuring each candidate with the estimator: a gallop from the ratio's guess, then
//! a bisection, keeping the largest candidate that fits. That is O(log n) estimates, each of a
//! candidate at most about twice the size of the answer, never of the whole message; the parsed
//! tool-call arguments are parsed once, not once per candidate.
//!
//! The room is shared by water-filling ([`fair_shares`]): texts and arguments smaller than an
//! equal share are kept whole and what they leave goes to the bigger ones, so a short text next
//! to a huge one does not waste its share.
//!
//! Deterministic, UTF-8 safe (every cut is [`cut_middle`]'s), never panics.

use super::truncation::{CUT_MARKER, REMOVED_CONTENT};
use crate::model::{Content, Message, Part, ToolCall};
use crate::text::{cut_middle, head_bytes};
use crate::tokens::{estimate_message, ModelFamily};

/// The note that replaces an image in a cut message.
const IMAGE_REMOVED: &str = "[image removed to fit the context window]";

/// A message ready to be cut at any room: its tool-call arguments parsed once.
pub(crate) struct Prepared<'m> {
    message: &'m Message,
    /// Each call's arguments as JSON, `None` when they are not JSON (cut as text).
    arguments: Vec<Option<serde_json::Value>>,
}

impl<'m> Prepared<'m> {
    pub(crate) fn new(message: &'m Message) -> Self {
        let arguments = message
            .tool_calls
            .iter()
            .map(|call| serde_json::from_str(&call.arguments).ok())
            .collect();
        Prepared { message, arguments }
    }

    /// The bytes the room is shared among: every text part and every call's arguments.
    fn piece_lengths(&self) -> Vec<usize> {
        let texts = match &self.message.content {
            Content::Text(text) => vec![text.len()],
            Content::Parts(parts) => parts
                .iter()
                .filter_map(|part| match part {
                    Part::Text { text } => Some(text.len()),
                    _ => None,
                })
                .collect(),
        };
        let calls = self.message.tool_calls.iter().map(|c| c.arguments.len());
        texts.into_iter().chain(calls).collect()
    }

    /// The message with its texts and arguments cut to about `room` bytes in all (see
    /// [`super::truncation::cut_message`]). Copies only what it keeps.
    pub(crate) fn cut(&self, room: usize) -> Message {
        let message = self.message;
        let lengths = self.piece_lengths();
        let mut shares = fair_shares(&lengths, room).into_iter();
        let mut next_share = || shares.next().unwrap_or(0);
        let content = match &message.content {
            Content::Text(text) => Content::Text(cut_middle(text, next_share(), CUT_MARKER)),
            Content::Parts(parts) => Content::Parts(
                parts
                    .iter()
                    .filter_map(|part| match part {
                        Part::Text { text } => Some(Part::Text {
                            text: cut_middle(text, next_share(), CUT_MARKER),
                        }),
                        Part::Image { .. } => Some(Part::Text {
                            text: IMAGE_REMOVED.to_owned(),
                        }),
                        // Cutting would break their signature.
                        Part::Thinking { .. } | Part::Opaque { .. } => None,
                    })
                    .collect(),
            ),
        };
        let tool_calls = message
            .tool_calls
            .iter()
            .zip(&self.arguments)
            .map(|(call, parsed)| ToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: cut_arguments(&call.arguments, parsed.as_ref(), next_share()),
                provider_fields: call.provider_fields.clone(),
            })
            .collect();
        // A tiny room cuts text to nothing, and a cut drops thinking and provider blocks: a
        // message that said something still says what happened (providers reject empty
        // messages, and the model should know something was there).
        let content = if content.is_blank() && !message.content.is_blank() {
            Content::Text(REMOVED_CONTENT.to_owned())
        } else {
            content
        };
        Message {
            role: message.role,
            content,
            tool_calls,
            tool_call_id: message.tool_call_id.clone(),
            is_error: message.is_error,
            name: message.name.clone(),
            provider_fields: message.provider_fields.clone(),
        }
    }
}

/// `original` cut to the most it can keep with an estimate of at most `target` tokens: the
/// largest room found by the search (see the module doc), or the smallest cut (room 0) when
/// nothing fits. `before` is the estimate of `original`, which seeds the first guess.
pub(crate) fn cut_to_tokens(
    original: &Message,
    before: u64,
    target: u64,
    family: ModelFamily,
) -> Message {
    let prepared = Prepared::new(original);
    let total: usize = prepared.piece_lengths().iter().sum();
    let fits = |room: usize| {
        let cut = prepared.cut(room);
        (estimate_message(&cut, family) <= target).then_some(cut)
    };
    // The whole text's bytes per token give the first guess.
    let guess =
        u128::try_from(total).unwrap_or(u128::MAX) * u128::from(target) / u128::from(before.max(1));
    let guess = usize::try_from(guess)
        .unwrap_or(usize::MAX)
        .clamp(1, total.max(1));
    // `low` fits (with its cut in `best`), `high` does not; 0 stands for "nothing fits yet".
    let (mut low, mut high, mut best) = (0usize, total.saturating_add(1), None);
    let mut room = guess;
    // Gallop: double up from a fitting guess, halve down from one that does not.
    loop {
        match fits(room) {
            Some(cut) => {
                (low, best) = (room, Some(cut));
                if room >= total {
                    break;
                }
                room = room.saturating_mul(2).min(total);
            }
            None => {
                high = room;
                if room == 0 || best.is_some() {
                    break;
                }
                room /= 2;
            }
        }
        if room >= high || (best.is_some() && room <= low) {
            break;
        }
    }
    // Bisect to within a fraction of a percent (a few bytes for a small room).
    while high.saturating_sub(low) > (low / 512).max(8) {
        let middle = low + (high - low) / 2;
        match fits(middle) {
            Some(cut) => (low, best) = (middle, Some(cut)),
            None => high = middle,
        }
    }
    best.unwrap_or_else(|| prepared.cut(0))
}

/// Water-filling: `room` shared among pieces of `lengths` so that a piece shorter than its
/// share keeps all of it and gives the rest to the others, and the longer pieces get equal
/// shares. The shares, in the order of `lengths`, sum to at most `room`.
pub(crate) fn fair_shares(lengths: &[usize], room: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    crate::wire::fields::sort_stable_by(&mut order, |&a, &b| {
        let length = |index: usize| lengths.get(index).copied().unwrap_or(0);
        (length(a), a).cmp(&(length(b), b))
    });
    let mut shares = vec![0; lengths.len()];
    let mut left = room;
    for (done, &index) in order.iter().enumerate() {
        let waiting = order.len().saturating_sub(done).max(1);
        let length = lengths.get(index).copied().unwrap_or(0);
        let share = length.min(left / waiting);
        if let Some(slot) = shares.get_mut(index) {
            *slot = share;
        }
        left = left.saturating_sub(share);
    }
    shares
}

/// JSON arguments with long string values cut so the text is about `max_bytes`; arguments that
/// are not JSON are cut as text.
fn cut_arguments(arguments: &str, parsed: Option<&serde_json::Value>, max_bytes: usize) -> String {
    if arguments.len() <= max_bytes {
        return arguments.to_owned();
    }
    let Some(value) = parsed else {
        return cut_middle(arguments, max_bytes, CUT_MARKER);
    };
    let mut lengths = Vec::new();
    string_lengths(value, &mut lengths);
    // What is not a string value (keys, punctuation, numbers) is kept whole.
    let strings: usize = lengths.iter().sum();
    let structure = arguments.len().saturating_sub(strings);
    let shares = fair_shares(&lengths, max_bytes.saturating_sub(structure));
    let cut = cut_strings(value, &mut shares.into_iter());
    serde_json::to_string(&cut).unwrap_or_else(|_| head_bytes(arguments, max_bytes).to_owned())
}

fn string_lengths(value: &serde_json::Value, lengths: &mut Vec<usize>) {
    match value {
        serde_json::Value::String(text) => lengths.push(text.len()),
        serde_json::Value::Array(items) => {
            items.iter().for_each(|item| string_lengths(item, lengths))
        }
        serde_json::Value::Object(map) => {
            map.values().for_each(|item| string_lengths(item, lengths))
        }
        _ => {}
    }
}

/// A copy of `value` with each string value cut to its share (taken in [`string_lengths`]'s
/// order).
fn cut_strings(
    value: &serde_json::Value,
    shares: &mut impl Iterator<Item = usize>,
) -> serde_json::Value {
    match value {
        serde_json::Value::String(text) => {
            let share = shares.next().unwrap_or(0);
            serde_json::Value::String(cut_middle(text, share, CUT_MARKER))
        }
        serde_json::Value::Array(items) => {
            serde_json::Value::Array(items.iter().map(|item| cut_strings(item, shares)).collect())
        }
        serde_json::Value::Object(map) => {
            serde_json::Value::Object(crate::wire::fields::object_of(
                map.iter()
                    .map(|(key, item)| (key.clone(), cut_strings(item, shares))),
            ))
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_give_what_short_pieces_leave_to_long_ones() {
        assert_eq!(fair_shares(&[10, 1_000, 1_000], 610), vec![10, 300, 300]);
        assert_eq!(fair_shares(&[10, 20], 1_000), vec![10, 20]);
        assert_eq!(fair_shares(&[], 100), Vec::<usize>::new());
        assert_eq!(fair_shares(&[5, 5], 0), vec![0, 0]);
        assert!(fair_shares(&[7, 9, 1_000, 3], 101).iter().sum::<usize>() <= 101);
    }

    #[test]
    fn the_search_fills_the_target_from_both_ends() {
        let text: String = (0..200_000).map(|i| format!("w{i} ")).collect();
        let message = Message::user(text.clone());
        let family = ModelFamily::OpenAi;
        let before = estimate_message(&message, family);
        for target in [30, 1_000, 20_000] {
            let cut = cut_to_tokens(&message, before, target, family);
            let after = estimate_message(&cut, family);
            assert!(after <= target, "{after} > {target}");
            assert!(after * 100 >= target * 98, "{after} well under {target}");
            let kept = cut.text_content();
            let (head, tail) = kept.split_once("\n[… ").unwrap();
            assert!(text.starts_with(head) && text.ends_with(tail.split_once("…]\n").unwrap().1));
        }
    }

    #[test]
    fn a_short_text_beside_big_arguments_does_not_waste_the_room() {
        let call = ToolCall::new(
            "c",
            "write",
            serde_json::json!({"path": "a.rs", "content": "x y ".repeat(50_000)}).to_string(),
        );
        let message = Message::assistant("writing it", vec![call]);
        let cut = Prepared::new(&message).cut(10_000);
        assert_eq!(cut.text_content(), "writing it");
        let arguments = &cut.tool_calls[0].arguments;
        assert!(
            arguments.len() > 9_500 && arguments.len() <= 10_000,
            "{}",
            arguments.len()
        );
        let value: serde_json::Value = serde_json::from_str(arguments).unwrap();
        assert_eq!(value["path"], "a.rs");
    }
}
