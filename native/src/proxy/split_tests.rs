//! Tests of `split`: the fields in order as sent, errors with their byte, and the list's
//! elements taken from a recent request only where the bytes are the same.

use super::*;
use crate::proxy::body::Split;
use crate::proxy::seen::KEPT_LISTS;

fn split(body: &str, seen: &SeenLists) -> Result<Split, String> {
    split_at(body.as_bytes(), "messages", "an array of messages", seen)
}

fn items(split: &Split) -> Vec<String> {
    match &split.listed {
        Some(Listed::Items(list)) => list.iter().map(str::to_owned).collect(),
        other => panic!("not a list: {other:?}"),
    }
}

fn names(split: &Split) -> Vec<(&str, &str)> {
    split
        .fields
        .iter()
        .map(|(name, value)| (name.as_str(), value.get()))
        .collect()
}

#[test]
fn fields_keep_their_order_and_bytes_and_any_whitespace_is_read() {
    let body = " {\n \"model\" : \"m\" , \"messages\" : [ 1 , {\"a\" : [true]} ,\"x\"\n] ,\
                \"n\":-1.5e3,\"t\":{\"k\":null}} \n";
    let split = split(body, &SeenLists::default()).unwrap();
    assert_eq!(
        names(&split),
        [
            ("model", "\"m\""),
            ("messages", "null"),
            ("n", "-1.5e3"),
            ("t", "{\"k\":null}")
        ]
    );
    assert_eq!(items(&split), ["1", "{\"a\" : [true]}", "\"x\""]);
    let empty = self::split("{\"messages\":[ ]}", &SeenLists::default()).unwrap();
    assert!(items(&empty).is_empty());
    assert!(self::split("{}", &SeenLists::default())
        .unwrap()
        .listed
        .is_none());
}

#[test]
fn a_malformed_body_is_refused_with_what_was_expected_and_where() {
    let seen = SeenLists::default();
    let refused = |body: &str| split(body, &seen).unwrap_err();
    assert_eq!(
        refused("[1]"),
        "the body is not a JSON object: expected '{' at byte 0"
    );
    assert_eq!(
        refused("{\"a\":1 \"b\":2}"),
        "the body is not a JSON object: expected ',' or '}' at byte 7"
    );
    assert_eq!(
        refused("{\"a\":1,}"),
        "the body is not a JSON object: expected a field name in quotes at byte 7"
    );
    assert_eq!(
        refused("{\"a\" 1}"),
        "the body is not a JSON object: expected ':' at byte 5"
    );
    assert_eq!(
        refused("{\"a\":1"),
        "the body is not a JSON object: expected ',' or '}', found the end of the body"
    );
    assert_eq!(
        refused("{\"a\":1} x"),
        "the body is not a JSON object: trailing characters at byte 8"
    );
    assert!(refused("{\"a\":tru}").starts_with("the body is not a JSON object: expected ident"));
    assert!(refused("{\"a\":tru}").ends_with("in the value at byte 5"));
    assert_eq!(
        refused("{\"messages\":{}}"),
        "messages: expected an array of messages (found an object at byte 12)"
    );
    assert_eq!(
        refused("{\"messages\":[1,]}"),
        "messages: expected an array of messages (expected value at line 1 column 1, in the \
         value at byte 15)"
    );
    assert_eq!(
        refused("{\"messages\":[1 2]}"),
        "messages: expected an array of messages (expected ',' or ']' at byte 15)"
    );
    assert!(refused("{\"messages\":[1,\"\\x\"]}").starts_with("messages: expected"));
    // Nothing malformed was kept for the next request.
    assert!(seen.is_empty());
}

#[test]
fn a_re_sent_history_is_taken_from_the_last_request_where_its_bytes_are_the_same() {
    let seen = SeenLists::default();
    let first = "{\"model\":\"m\",\"messages\":[{\"n\":1},{\"n\":2},{\"n\":3}]}";
    let split_first = split(first, &seen).unwrap();
    assert_eq!(split_first.parsed, "{\"n\":1},{\"n\":2},{\"n\":3}".len());
    // The same history and one more message: only the separator and the new one are parsed.
    let second = "{\"model\":\"m\",\"messages\":[{\"n\":1},{\"n\":2},{\"n\":3},{\"n\":4}]}";
    let split_second = split(second, &seen).unwrap();
    assert_eq!(split_second.parsed, ",{\"n\":4}".len());
    assert_eq!(
        items(&split_second),
        ["{\"n\":1}", "{\"n\":2}", "{\"n\":3}", "{\"n\":4}"]
    );
    // The superseded list is dropped: one kept.
    assert_eq!(seen.len(), 1);
    // A changed last message: the elements before it are known, it is parsed as sent.
    let edited = "{\"messages\":[{\"n\":1},{\"n\":2},{\"n\":3},{\"n\":44}],\"model\":\"m\"}";
    let split_edited = split(edited, &seen).unwrap();
    assert_eq!(split_edited.parsed, ",{\"n\":44}".len());
    assert_eq!(items(&split_edited)[3], "{\"n\":44}");
    assert_eq!(seen.len(), 2);
    // A different first message shares nothing.
    let other = "{\"messages\":[{\"n\":9},{\"n\":2}]}";
    assert_eq!(
        split(other, &seen).unwrap().parsed,
        "{\"n\":9},{\"n\":2}".len()
    );
}

#[test]
fn a_known_prefix_never_hides_a_malformed_rest() {
    let seen = SeenLists::default();
    split("{\"messages\":[{\"n\":1},{\"n\":2}]}", &seen).unwrap();
    // The same bytes up to the middle of the second element, then broken.
    assert!(split("{\"messages\":[{\"n\":1},{\"n\":2]}", &seen)
        .unwrap_err()
        .starts_with("messages: expected an array of messages"));
    // Cut right after a known element: the array must still be closed.
    assert!(split("{\"messages\":[{\"n\":1},{\"n\":2}", &seen).is_err());
    // Bytes after the known elements that are not a separator.
    assert!(split("{\"messages\":[{\"n\":1},{\"n\":2}x]}", &seen).is_err());
}

#[test]
fn kept_lists_are_bounded() {
    let seen = SeenLists::default();
    for conversation in 0..KEPT_LISTS + 5 {
        split(
            &format!("{{\"messages\":[{{\"c\":{conversation}}}]}}"),
            &seen,
        )
        .unwrap();
    }
    assert_eq!(seen.len(), KEPT_LISTS);
}
