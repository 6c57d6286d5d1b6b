//! The tagged enums' hand-written readers against serde's derived ones, input by input.

use super::*;
use crate::convert::decode;
use crate::readers::tests::same;
use serde::de::DeserializeOwned;
use serde_json::json;

/// `read` and the derived reader agree on `input`: the same value, or errors with the same
/// problem (the text after the path). The paths differ on purpose below the tag (the module's
/// doc), so the callers check the hand-written reader's paths themselves.
fn agree<T: DeserializeOwned + PartialEq + std::fmt::Debug>(
    read: fn(Value, &str) -> Result<T>,
    input: &Value,
) {
    let hand = read(input.clone(), "x").map_err(|error| error.to_string());
    let derived = decode::<T>(input.clone(), "x").map_err(|error| error.to_string());
    match (&hand, &derived) {
        (Err(hand), Err(derived)) => {
            let problem = |error: &str| {
                error
                    .split_once(": ")
                    .map(|(_, problem)| problem.to_owned())
            };
            assert_eq!(
                problem(hand),
                problem(derived),
                "{input}: {hand} / {derived}"
            );
        }
        _ => assert_eq!(hand, derived, "{input}"),
    }
}

/// The error `read` gives for `input`, as text (`ok` when it reads).
fn error<T>(read: fn(Value, &str) -> Result<T>, input: Value) -> String {
    read(input, "x")
        .err()
        .map_or("ok".to_owned(), |error| error.to_string())
}

/// `base` and its variations: each field (but `tag`) removed, given a value of each kind
/// (arrays and objects too, but not an image's `source` given as an array or an object, nor an
/// opaque part's `provider` given as an object: their differences on purpose),
/// and unknown fields before and after the others.
fn variations(base: &Value, tag: &str) -> Vec<Value> {
    let mut inputs = vec![base.clone()];
    let Value::Object(fields) = base else {
        return inputs;
    };
    for key in fields.keys().filter(|key| *key != tag) {
        let mut without = fields.clone();
        without.remove(key);
        inputs.push(Value::Object(without));
        let kinds = [
            json!(7),
            json!(-2),
            json!(1.5),
            json!("s"),
            json!(null),
            json!(true),
        ];
        let shapes = [json!([1]), json!({"n": 1})];
        let string_only = key == "provider";
        for kind in kinds
            .iter()
            .chain(shapes.iter().filter(|_| key != "source"))
        {
            if string_only && !kind.is_string() {
                continue;
            }
            let mut bad = fields.clone();
            bad.insert(key.clone(), kind.clone());
            inputs.push(Value::Object(bad.clone()));
            bad.insert("aa".to_owned(), json!(1));
            inputs.push(Value::Object(bad));
        }
    }
    for extra in ["aa", "zz"] {
        let mut more = fields.clone();
        more.insert(extra.to_owned(), json!(1));
        inputs.push(Value::Object(more));
    }
    inputs
}

fn parts() -> Vec<Value> {
    vec![
        json!({"type": "text", "text": "hi"}),
        json!({"type": "image", "source": {"type": "url", "url": "https://a/b.png"}, "detail": "low"}),
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}),
        json!({"type": "thinking", "thinking": "t", "signature": "s"}),
        json!({"type": "opaque", "provider": "anthropic", "block": {"type": "x", "n": [1]}}),
    ]
}

#[test]
fn content_reads_as_derived() {
    let mut inputs = vec![
        json!("text"),
        json!(null),
        json!([]),
        json!(true),
        json!(5),
        json!(-1.5),
        json!({"type": "text", "text": "hi"}),
        json!([5]),
        json!(["s"]),
        json!([null]),
        json!([true]),
        json!([{"text": "hi"}]),
        json!([{"type": 5}]),
        json!([{"type": null, "text": "hi"}]),
        json!([{"type": "txt", "zz": 1}]),
        json!([{"type": "text", "text": "a"}, {"type": "nope"}]),
        json!([{"type": "image", "source": {"type": "png", "url": "u"}}]),
        json!([{"type": "image", "source": {"url": "u"}}]),
        json!([{"type": "image", "source": "u"}]),
        json!([{"type": "opaque", "provider": "x", "block": 1}]),
        json!([{"type": "opaque", "provider": {"gemini": null}, "block": 1}]),
    ];
    for part in parts() {
        inputs.extend(
            variations(&part, "type")
                .into_iter()
                .map(|part| json!([part])),
        );
        inputs.push(json!([part.clone(), part]));
    }
    let source = json!({"type": "base64", "media_type": "image/png", "data": "AA=="});
    for source in variations(&source, "type") {
        inputs.push(json!([{"type": "image", "source": source}]));
    }
    for source in variations(&json!({"type": "url", "url": "u"}), "type") {
        inputs.push(json!([{"type": "image", "source": source}]));
    }
    for input in &inputs {
        agree(content, input);
    }
    // Where the tag is wrong, or the value is not an object, the paths are the derived ones.
    for input in [
        json!(true),
        json!([5]),
        json!([{"text": "hi"}]),
        json!([{"type": 5}]),
        json!([{"type": "txt"}]),
        json!([{"type": "text", "text": "a"}, {"type": "nope"}]),
    ] {
        same(content, input);
    }
}

#[test]
fn content_errors_name_the_field() {
    for (input, expected) in [
        (json!([{"type": "text"}]), "x[0].text: missing"),
        (
            json!([{"type": "text", "text": 5}, {"type": "text", "text": "b"}]),
            "x[0].text: invalid type: number `5`, expected a string",
        ),
        (
            json!([{"type": "text", "text": "a", "zz": 1}]),
            "x[0].zz: unknown field (expected `text`)",
        ),
        (
            json!([{"type": "text", "text": "a"}, {"type": "thinking", "thinking": "t"}]),
            "x[1].signature: missing",
        ),
        (
            json!([{"type": "image", "source": {"type": "url"}}]),
            "x[0].source.url: missing",
        ),
        (
            json!([{"type": "image", "source": {"type": "png"}}]),
            "x[0].source.type: unknown variant `png`, expected `base64` or `url`",
        ),
        (
            json!([{"type": "opaque", "provider": "x", "block": 1}]),
            "x[0].provider: unknown variant `x`, expected one of `openai`, `anthropic`, \
             `responses`, `gemini`, `ai-sdk`, `langchain`",
        ),
        // The differences on purpose (the module's doc).
        (
            json!([["text", "hi"]]),
            "x[0]: invalid type: sequence, expected internally tagged enum Part",
        ),
        (
            json!([{"type": "image", "source": ["url", "u"]}]),
            "x[0].source: invalid type: sequence, expected internally tagged enum ImageSource",
        ),
        (
            json!([{"type": "image", "source": {"type": 1, "url": "u"}}]),
            "x[0].source.type: invalid type: number `1`, expected variant identifier",
        ),
        (
            json!([{"type": "opaque", "provider": {"openai": 1}, "block": 1}]),
            "x[0].provider.openai: invalid type: number `1`, expected unit",
        ),
    ] {
        assert_eq!(error(content, input.clone()), expected, "{input}");
    }
    // What the derived reader said for the first three, and took for the sequence forms.
    assert_eq!(
        error(decode::<Content>, json!([{"type": "text"}])),
        "x.text: missing"
    );
    assert_eq!(
        error(
            decode::<Content>,
            json!([{"type": "text", "text": "a", "zz": 1}])
        ),
        "x: unknown field (expected `text`)"
    );
    assert_eq!(error(decode::<Content>, json!([["text", "hi"]])), "ok");
}

#[test]
fn strategy_reads_as_derived() {
    let mut inputs = vec![
        json!({"kind": "summarize"}),
        json!({"kind": "truncate"}),
        json!({"kind": "off"}),
        json!({"kind": "off", "keep_last": "x", "zz": 1}),
        json!({"kind": "window"}),
        json!({"kind": 3}),
        json!({"kind": null}),
        json!({}),
        json!({"keep_last": 5}),
        json!("summarize"),
        json!(null),
        json!(5),
        json!(true),
    ];
    inputs.extend(variations(
        &json!({"kind": "sliding_window", "keep_last": 5}),
        "kind",
    ));
    inputs.push(json!({"kind": "sliding_window", "keep_last": 5_000_000_000_u64}));
    for input in &inputs {
        agree(strategy, input);
    }
    for input in [
        json!({"kind": "window"}),
        json!({"kind": 3}),
        json!({}),
        json!("summarize"),
        json!({"kind": "sliding_window"}),
        json!({"kind": "off", "zz": 1}),
    ] {
        same(strategy, input);
    }
    for (input, expected) in [
        (
            json!({"kind": "sliding_window", "keep_last": "5"}),
            "x.keep_last: invalid type: string \"5\", expected a non-negative integer",
        ),
        (
            json!({"kind": "sliding_window", "keep_last": 5, "zz": 1}),
            "x.zz: unknown field (expected `keep_last`)",
        ),
        (
            json!(["sliding_window", 5]),
            "x: invalid type: sequence, expected internally tagged enum Strategy",
        ),
    ] {
        assert_eq!(error(strategy, input.clone()), expected, "{input}");
    }
}
