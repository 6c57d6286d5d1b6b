//! A request body read field by field: the top-level object's punctuation read here, each
//! field's name and value parsed (so validated) by serde_json, and the list field
//! (`messages`, Responses' `input`) split into its raw elements, where the elements a recent
//! request already sent byte for byte ([`SeenLists`]) are taken as they were split then and
//! only the rest are parsed. A turn that re-sends a long history costs a comparison of its
//! bytes and the parse of its new messages, not a parse of the whole history.
//!
//! Guarantees: the fields come back in order, each value exactly as sent; a body that is not a
//! JSON object (bad punctuation, a bad value, trailing bytes) is refused naming what was
//! expected and the byte where; a list field that is neither an array nor a string is refused
//! naming what it is; nothing here panics.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::body::{Listed, RawList, Split};
use super::seen::SeenLists;

/// Splits `body` at its field `key` (see the module doc); `expecting` says what that field
/// takes, for the error. The list is looked up in and then added to `seen`.
pub(super) fn split_at(
    body: &[u8],
    key: &'static str,
    expecting: &str,
    seen: &SeenLists,
) -> Result<Split, String> {
    let not_object = |what: String| format!("the body is not a JSON object: {what}");
    let mut cursor = Cursor { bytes: body, at: 0 };
    cursor.expect(b'{', "'{'").map_err(not_object)?;
    let mut fields = Vec::new();
    let mut listed = None;
    let mut parsed = 0;
    let mut notes = Vec::new();
    let mut kept_as = None;
    if !cursor.eat(b'}') {
        loop {
            cursor.skip_whitespace();
            if cursor.peek() != Some(b'"') {
                return Err(not_object(cursor.expected("a field name in quotes")));
            }
            let name: String = cursor.value().map_err(not_object)?;
            cursor.expect(b':', "':'").map_err(not_object)?;
            if name == key {
                let read = read_list(&mut cursor, seen)
                    .map_err(|error| format!("{key}: expected {expecting} ({error})"))?;
                listed = Some(read.listed);
                parsed += read.parsed;
                notes = read.notes;
                kept_as = read.kept_as;
                let placeholder =
                    RawValue::from_string("null".to_owned()).map_err(|error| error.to_string())?;
                fields.push((name, placeholder));
            } else {
                let value: &RawValue = cursor.value().map_err(not_object)?;
                fields.push((name, value.to_owned()));
            }
            if cursor.eat(b',') {
                continue;
            }
            cursor.expect(b'}', "',' or '}'").map_err(not_object)?;
            break;
        }
    }
    cursor.skip_whitespace();
    if cursor.at < body.len() {
        return Err(not_object(format!(
            "trailing characters at byte {}",
            cursor.at
        )));
    }
    Ok(Split {
        fields,
        listed,
        parsed,
        notes,
        kept_as,
    })
}

/// The list field's value as read.
struct ReadList {
    listed: Listed,
    /// Its bytes parsed (not known from a kept list).
    parsed: usize,
    /// The notes kept for its first elements (those a kept list repeated).
    notes: Vec<u8>,
    /// Its id among the kept lists (an array's).
    kept_as: Option<u64>,
}

/// The list field's value at the cursor: an array's elements, or a string.
fn read_list(cursor: &mut Cursor, seen: &SeenLists) -> Result<ReadList, String> {
    cursor.skip_whitespace();
    match cursor.peek() {
        Some(b'"') => {
            let start = cursor.at;
            let text: String = cursor.value()?;
            Ok(ReadList {
                listed: Listed::Text(text),
                parsed: cursor.at - start,
                notes: Vec::new(),
                kept_as: None,
            })
        }
        Some(b'[') => {
            cursor.at += 1;
            read_items(cursor, seen)
        }
        other => Err(format!(
            "found {} at byte {}",
            what_starts_with(other),
            cursor.at
        )),
    }
}

/// An array's elements, the cursor just after its `[`: those a kept list repeats are taken
/// from it, the rest parsed; the cursor ends after the `]`.
fn read_items(cursor: &mut Cursor, seen: &SeenLists) -> Result<ReadList, String> {
    let start = cursor.at;
    let rest = cursor.bytes.get(start..).unwrap_or_default();
    let known = seen.known(rest);
    let known_len = known.as_ref().map_or(0, |known| known.len());
    let mut spans = known.as_ref().map(|k| k.spans.clone()).unwrap_or_default();
    cursor.at = start + known_len;
    let mut first = spans.is_empty();
    loop {
        if cursor.eat(b']') {
            break;
        }
        if !first {
            cursor.expect(b',', "',' or ']'")?;
            cursor.skip_whitespace();
        }
        let begin = cursor.at;
        let element: &RawValue = cursor.value()?;
        spans.push((begin - start, begin - start + element.get().len()));
        first = false;
    }
    let end = cursor.at - 1;
    // The new part's bytes: serde_json validated each element, the rest is ASCII punctuation
    // and whitespace this reader checked.
    let new = std::str::from_utf8(cursor.bytes.get(start + known_len..end).unwrap_or_default())
        .map_err(|error| format!("not UTF-8 ({error})"))?;
    let mut text = String::with_capacity(end - start);
    if let Some(known) = &known {
        text.push_str(known.text.get(..known_len).unwrap_or_default());
    }
    text.push_str(new);
    let list = RawList::from_parts(text, spans);
    let notes = known.as_ref().map(|k| k.notes.clone()).unwrap_or_default();
    let superseded = known.filter(|known| known.whole).map(|known| known.from);
    let kept_as = seen.remember(&list, notes.clone(), superseded);
    Ok(ReadList {
        listed: Listed::Items(list),
        parsed: end - start - known_len,
        notes,
        kept_as: Some(kept_as),
    })
}

/// What a value starting with `byte` is, for an error.
fn what_starts_with(byte: Option<u8>) -> &'static str {
    match byte {
        None => "the end of the body",
        Some(b'{') => "an object",
        Some(b'-' | b'0'..=b'9') => "a number",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        Some(_) => "something that is not JSON",
    }
}

/// A position in a body.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.at += 1;
        }
    }

    /// The next byte, not taken.
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// Takes `byte` (after whitespace) when it is next.
    fn eat(&mut self, byte: u8) -> bool {
        self.skip_whitespace();
        let next = self.peek() == Some(byte);
        if next {
            self.at += 1;
        }
        next
    }

    /// Takes `byte` (after whitespace), or says `what` was expected where.
    fn expect(&mut self, byte: u8, what: &str) -> Result<(), String> {
        if self.eat(byte) {
            Ok(())
        } else {
            Err(self.expected(what))
        }
    }

    fn expected(&self, what: &str) -> String {
        match self.peek() {
            Some(_) => format!("expected {what} at byte {}", self.at),
            None => format!("expected {what}, found the end of the body"),
        }
    }

    /// The JSON value at the cursor (after whitespace), parsed by serde_json as a `T`; the
    /// cursor ends just after it.
    fn value<T: Deserialize<'a>>(&mut self) -> Result<T, String> {
        self.skip_whitespace();
        let at = self.at;
        let rest = self.bytes.get(at..).unwrap_or_default();
        let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<T>();
        match values.next() {
            Some(Ok(value)) => {
                self.at = at + values.byte_offset();
                Ok(value)
            }
            Some(Err(error)) => Err(format!("{error}, in the value at byte {at}")),
            None => Err(self.expected("a value")),
        }
    }
}

#[cfg(test)]
#[path = "split_tests.rs"]
mod tests;
