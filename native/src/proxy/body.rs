//! A request body as the proxy keeps it: its top-level fields in the agent's order, each value
//! exactly as sent, and the one list the view replaces (`messages`, or Responses' `input`)
//! split into its raw elements (`split` reads it), so only the elements the proxy needs are
//! converted. The body for the upstream is those fields written back byte for byte, with the
//! list's value replaced.
//!
//! Guarantees: a body that is not a JSON object is refused with the reason and the byte; a list
//! field of the wrong type is refused naming the field and what it takes; nothing here panics.

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::Value;

use super::seen::SeenLists;
use super::split;

/// The top-level fields, in order, each exactly as sent.
pub(super) type Fields = Vec<(String, Box<RawValue>)>;

/// A body's fields and its raw messages ([`split_body`]).
pub(super) type RawBody = (Fields, RawList);

/// A JSON array's elements, each exactly as sent, kept as one shared text (the array as sent,
/// or the elements one after another) and where each element lies in it: splitting a long
/// history costs one copy of the array and two numbers per element, not an allocation per
/// message, and a split or a clone copies no text. Two lists are equal when their elements are.
#[derive(Debug, Clone, Default)]
pub struct RawList {
    text: Arc<str>,
    spans: Vec<(usize, usize)>,
}

impl PartialEq for RawList {
    fn eq(&self, other: &RawList) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for RawList {}

impl RawList {
    /// The list whose elements lie at `spans` (byte ranges) in `text`.
    pub(super) fn from_parts(text: String, spans: Vec<(usize, usize)>) -> RawList {
        RawList {
            text: Arc::from(text),
            spans,
        }
    }

    /// Its text and where each element lies in it.
    pub(super) fn parts(&self) -> (&Arc<str>, &[(usize, usize)]) {
        (&self.text, &self.spans)
    }

    /// The list of `items` (each a JSON value's text).
    pub fn of<'a>(items: impl IntoIterator<Item = &'a str> + Clone) -> RawList {
        // Sized first, so the text is copied once.
        let (count, bytes) = items
            .clone()
            .into_iter()
            .fold((0, 0), |(count, bytes), item| {
                (count + 1, bytes + item.len())
            });
        let mut text = String::with_capacity(bytes + count);
        let mut spans = Vec::with_capacity(count);
        for item in items {
            if !text.is_empty() {
                // Written as an array's elements are, so a run of them is one's inside.
                text.push(',');
            }
            let start = text.len();
            text.push_str(item);
            spans.push((start, text.len()));
        }
        RawList::from_parts(text, spans)
    }

    /// A list whose elements are `runs` of this one's (each range of indexes one element: the
    /// text from its first element's start to its last's end, the separators between them
    /// included: an array's inside), sharing this list's text. A range out of bounds or empty
    /// is left out.
    pub fn runs(&self, runs: &[std::ops::Range<usize>]) -> RawList {
        let spans = runs
            .iter()
            .filter_map(|run| {
                let first = self.spans.get(run.start)?;
                let last = self.spans.get(run.end.checked_sub(1)?)?;
                (run.start < run.end).then_some((first.0, last.1))
            })
            .collect();
        RawList {
            text: Arc::clone(&self.text),
            spans,
        }
    }

    /// How many elements.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The element at `index`, as sent.
    pub fn get(&self, index: usize) -> Option<&str> {
        let (start, end) = *self.spans.get(index)?;
        self.text.get(start..end)
    }

    /// The elements in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.spans
            .iter()
            .map(|&(start, end)| self.text.get(start..end).unwrap_or_default())
    }

    /// The elements from `at` on, taken out of this list (which keeps those before).
    pub fn split_off(&mut self, at: usize) -> RawList {
        let rest = self.spans.split_off(at.min(self.spans.len()));
        RawList {
            text: Arc::clone(&self.text),
            spans: rest,
        }
    }
}

/// The value of the list field: its elements as sent, or a string (Responses' `input` may be
/// one).
#[derive(Debug)]
pub(super) enum Listed {
    /// An array's elements, each exactly as sent.
    Items(RawList),
    /// A string.
    Text(String),
}

/// A body split at its list field (`split::split_at`).
#[derive(Debug)]
pub(super) struct Split {
    /// The fields in order; the list field's value is a `null` placeholder (the view replaces
    /// it).
    pub fields: Fields,
    /// The list field's value, when the body has it.
    pub listed: Option<Listed>,
    /// How many bytes of the list field were parsed; the rest was known byte for byte from a
    /// recent request ([`SeenLists`]).
    pub parsed: usize,
    /// The reader's notes kept for the list's first elements, those a recent request sent
    /// byte for byte (`SeenLists::note`).
    pub notes: Vec<u8>,
    /// The list's id among the kept lists, to give it notes.
    pub kept_as: Option<u64>,
}

/// What a `messages` that is not an array is refused with.
pub(super) const NOT_AN_ARRAY: &str = "messages: expected an array of messages";

/// A Messages or Chat Completions body's fields in order (`messages`'s value a `null`
/// placeholder) and its raw messages, not parsed: a request re-sends the whole history, and
/// only the new messages (and two held ones, to match) are read. A body that is not a JSON
/// object, has no `messages` array or an empty one is refused. Also how many bytes of
/// `messages` were parsed (see [`Split::parsed`]).
pub(super) fn split_body(body: &[u8], seen: &SeenLists) -> Result<(RawBody, usize), String> {
    let Split {
        fields,
        listed,
        parsed,
        ..
    } = split::split_at(body, "messages", "an array of messages", seen)?;
    let messages = match listed {
        None => return Err("the body has no `messages` field".to_owned()),
        Some(Listed::Text(_)) => return Err(NOT_AN_ARRAY.to_owned()),
        Some(Listed::Items(messages)) => messages,
    };
    if messages.is_empty() {
        return Err("messages: empty; a request needs at least one message".to_owned());
    }
    Ok(((fields, messages), parsed))
}

/// The raw value of the top-level field `name`.
pub(super) fn field<'a>(fields: &'a [(String, Box<RawValue>)], name: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.get())
}

/// The body for the upstream: `fields` byte for byte, in order, with `key`'s value replaced by
/// `list` (a JSON array, written by the caller).
pub(super) fn body_with(fields: &[(String, Box<RawValue>)], key: &str, list: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096 + list.len());
    out.push(b'{');
    for (index, (name, value)) in fields.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        // A key re-encoded is the same key; serde_json escapes it as JSON requires.
        out.extend_from_slice(Value::String(name.clone()).to_string().as_bytes());
        out.push(b':');
        if name == key {
            out.extend_from_slice(list);
        } else {
            out.extend_from_slice(value.get().as_bytes());
        }
    }
    out.push(b'}');
    out
}

/// [`body_with`] for `messages`.
pub(super) fn body_with_messages(fields: &[(String, Box<RawValue>)], messages: &[u8]) -> Vec<u8> {
    body_with(fields, "messages", messages)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_split_in_place_and_refused_when_not_an_array() {
        let body = br#"{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"user","content":[]}],"system":"s"}"#;
        let (fields, messages) = split_body(body, &SeenLists::default()).unwrap().0;
        let raw: Vec<&str> = messages.iter().collect();
        assert_eq!(
            raw,
            [
                r#"{"role":"user","content":"hi"}"#,
                r#"{"role":"user","content":[]}"#
            ]
        );
        let upstream = body_with_messages(&fields, b"[]");
        assert_eq!(upstream, br#"{"model":"m","messages":[],"system":"s"}"#);
        assert!(split_body(br#"{"messages":"hi"}"#, &SeenLists::default())
            .unwrap_err()
            .starts_with(NOT_AN_ARRAY));
        assert!(split_body(br#"{"messages":3}"#, &SeenLists::default())
            .unwrap_err()
            .starts_with(NOT_AN_ARRAY));
        assert!(split_body(b"{not json", &SeenLists::default())
            .unwrap_err()
            .starts_with("the body is not a JSON object"));
        assert!(split_body(br#"{"messages":[]} x"#, &SeenLists::default())
            .unwrap_err()
            .starts_with("the body is not a JSON object"));
    }

    #[test]
    fn a_raw_list_keeps_each_element_and_splits_where_asked() {
        let mut list = RawList::of([r#"{"a":1}"#, "[2, 3]", r#""é""#]);
        assert_eq!(list.len(), 3);
        assert_eq!(list.get(1), Some("[2, 3]"));
        assert_eq!(list.get(3), None);
        let rest = list.split_off(1);
        assert_eq!(list.iter().collect::<Vec<_>>(), [r#"{"a":1}"#]);
        assert_eq!(rest.iter().collect::<Vec<_>>(), ["[2, 3]", r#""é""#]);
        let mut all = rest.clone();
        assert!(all.split_off(9).is_empty());
        assert_eq!(all, rest);
        let whole = RawList::of([r#"{"a":1}"#, "[2, 3]", r#""é""#]);
        let runs = whole.runs(&[0..1, 1..3, 2..9, 2..2]);
        assert_eq!(
            runs.iter().collect::<Vec<_>>(),
            [r#"{"a":1}"#, r#"[2, 3],"é""#]
        );
    }

    #[test]
    fn a_string_list_is_kept_as_text() {
        let split = split::split_at(
            br#"{"input":"hello","model":"m"}"#,
            "input",
            "x",
            &SeenLists::default(),
        )
        .unwrap();
        assert!(matches!(split.listed, Some(Listed::Text(text)) if text == "hello"));
        assert_eq!(
            body_with(&split.fields, "input", b"[1]"),
            br#"{"input":[1],"model":"m"}"#
        );
    }
}
