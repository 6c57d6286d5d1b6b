//! A request body as the proxy keeps it: its top-level fields in the agent's order, each value
//! exactly as sent, and the one list the view replaces (`messages`, or Responses' `input`)
//! split into its raw elements in the same pass, so a long history is scanned once and only
//! the elements the proxy needs are parsed. The body for the upstream is those fields written
//! back byte for byte, with the list's value replaced.
//!
//! Guarantees: a body that is not a JSON object is refused with serde's reason; a list field of
//! the wrong type is refused naming the field and what it takes; nothing here panics.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

/// The top-level fields, in order, each exactly as sent.
pub(super) type Fields = Vec<(String, Box<RawValue>)>;

/// A body's fields and its raw messages ([`split_body`]).
pub(super) type RawBody = (Fields, RawList);

/// A JSON array's elements, each exactly as sent, kept as one text and where each element
/// lies in it: splitting a long history costs one copy of the array and two numbers per
/// element, not an allocation per message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawList {
    text: String,
    spans: Vec<(usize, usize)>,
}

impl RawList {
    /// The list of `items` (each a JSON value's text).
    pub fn of<'a>(items: impl IntoIterator<Item = &'a str> + Clone) -> RawList {
        // Sized first, so the text is copied once.
        let (count, bytes) = items
            .clone()
            .into_iter()
            .fold((0, 0), |(count, bytes), item| {
                (count + 1, bytes + item.len())
            });
        let mut list = RawList {
            text: String::with_capacity(bytes),
            spans: Vec::with_capacity(count),
        };
        for item in items {
            let start = list.text.len();
            list.text.push_str(item);
            list.spans.push((start, list.text.len()));
        }
        list
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
        let rest: Vec<(usize, usize)> = self.spans.split_off(at.min(self.spans.len()));
        let from = rest.first().map_or(self.text.len(), |span| span.0);
        let text = self.text.split_off(from);
        let spans = rest
            .iter()
            .map(|&(start, end)| (start - from, end - from))
            .collect();
        RawList { text, spans }
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

/// A body split at its list field ([`split_at`]).
#[derive(Debug)]
pub(super) struct Split {
    /// The fields in order; the list field's value is a `null` placeholder (the view replaces
    /// it).
    pub fields: Fields,
    /// The list field's value, when the body has it.
    pub listed: Option<Listed>,
}

/// What a `messages` that is not an array is refused with.
pub(super) const NOT_AN_ARRAY: &str = "messages: expected an array of messages";

/// Splits `body` at its field `key` (see the module doc); `expecting` says what that field
/// takes, for the error.
pub(super) fn split_at(body: &[u8], key: &'static str, expecting: &str) -> Result<Split, String> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let prefix = format!("{key}: ");
    let refused = |error: serde_json::Error| match error.to_string() {
        text if text.starts_with(&prefix) => text,
        text => format!("the body is not a JSON object: {text}"),
    };
    let split = ByKey { key, expecting }
        .deserialize(&mut deserializer)
        .map_err(refused)?;
    deserializer.end().map_err(refused)?;
    Ok(split)
}

/// A Messages or Chat Completions body's fields in order (`messages`'s value a `null`
/// placeholder) and its raw messages, not parsed: a request re-sends the whole history, and
/// only the new messages (and two held ones, to match) are read. A body that is not a JSON
/// object, has no `messages` array or an empty one is refused.
pub(super) fn split_body(body: &[u8]) -> Result<RawBody, String> {
    let Split { fields, listed } = split_at(body, "messages", "an array of messages")?;
    let messages = match listed {
        None => return Err("the body has no `messages` field".to_owned()),
        Some(Listed::Text(_)) => return Err(NOT_AN_ARRAY.to_owned()),
        Some(Listed::Items(messages)) => messages,
    };
    if messages.is_empty() {
        return Err("messages: empty; a request needs at least one message".to_owned());
    }
    Ok((fields, messages))
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

/// The seed that reads a body's fields, splitting `key`'s value.
struct ByKey<'a> {
    key: &'static str,
    expecting: &'a str,
}

impl<'de> DeserializeSeed<'de> for ByKey<'_> {
    type Value = Split;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Split, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ByKey<'_> {
    type Value = Split;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Split, A::Error> {
        let mut fields = Vec::new();
        let mut listed = None;
        while let Some(name) = map.next_key::<String>()? {
            if name == self.key {
                let value = map.next_value_seed(ListSeed).map_err(|error| {
                    serde::de::Error::custom(format_args!(
                        "{}: expected {} ({error})",
                        self.key, self.expecting
                    ))
                })?;
                listed = Some(value);
                let placeholder =
                    RawValue::from_string("null".to_owned()).map_err(serde::de::Error::custom)?;
                fields.push((name, placeholder));
            } else {
                fields.push((name, map.next_value::<Box<RawValue>>()?));
            }
        }
        Ok(Split { fields, listed })
    }
}

/// The seed that reads the list field: an array's raw elements, or a string.
struct ListSeed;

impl<'de> DeserializeSeed<'de> for ListSeed {
    type Value = Listed;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Listed, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ListSeed {
    type Value = Listed;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array or a string")
    }
    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Listed, E> {
        Ok(Listed::Text(text.to_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Listed, A::Error> {
        // Each element borrowed from the body (no allocation), then copied once, all together.
        let mut items: Vec<&'de RawValue> = Vec::new();
        while let Some(item) = seq.next_element::<&'de RawValue>()? {
            items.push(item);
        }
        Ok(Listed::Items(RawList::of(
            items.iter().map(|item| item.get()),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_split_in_place_and_refused_when_not_an_array() {
        let body = br#"{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"user","content":[]}],"system":"s"}"#;
        let (fields, messages) = split_body(body).unwrap();
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
        assert!(split_body(br#"{"messages":"hi"}"#)
            .unwrap_err()
            .starts_with(NOT_AN_ARRAY));
        assert!(split_body(br#"{"messages":3}"#)
            .unwrap_err()
            .starts_with(NOT_AN_ARRAY));
        assert!(split_body(b"{not json")
            .unwrap_err()
            .starts_with("the body is not a JSON object"));
        assert!(split_body(br#"{"messages":[]} x"#)
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
    }

    #[test]
    fn a_string_list_is_kept_as_text() {
        let split = split_at(br#"{"input":"hello","model":"m"}"#, "input", "x").unwrap();
        assert!(matches!(split.listed, Some(Listed::Text(text)) if text == "hello"));
        assert_eq!(
            body_with(&split.fields, "input", b"[1]"),
            br#"{"input":[1],"model":"m"}"#
        );
    }
}
