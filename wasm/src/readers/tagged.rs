//! Hand-written readers of the internally tagged enums read from JS: a message's content
//! (`Content`: text, `null`, or an array of `Part`s, an image's `ImageSource` among them) and
//! the policy's `Strategy`.
//!
//! Why: serde's derived reader of an internally tagged enum first buffers the whole object
//! into serde's own tree of values, then reads the variant from that tree: a second reader of
//! every field type, and the tree's, compiled into the .wasm (about 40 KB of code, 13 KB of the
//! gzipped module). Here the tag is taken from the object and the variant's fields are read
//! with [`Fields`], as every other hand-written reader reads its fields (docs/performance.md,
//! "Size").
//!
//! Errors: the derived readers' messages (`unknown variant `txt`, expected one of ...`,
//! `invalid type: string "x", expected internally tagged enum Part`, `missing`, `unknown
//! field (expected `text`)`), in the same order: the tag's error first (it was read while
//! buffering), then the first field in key order whose value does not read or that is unknown,
//! then the first required field that is absent. The tests compare them with the derived
//! readers' input by input. Differences, on purpose:
//! - an error below the tag names the field (`content[0].text: missing`,
//!   `policy.strategy.zz: unknown field (expected `keep_last`)`). The derived readers found it
//!   after the buffered object was read, so they named the object, or, inside an array, the
//!   next element or the array itself (`content.text: missing` for the last part), and an
//!   unknown field without its key;
//! - an object given as an array of the tag and the fields' values (serde's sequence form,
//!   never documented) is refused as any non-object (`invalid type: sequence, expected
//!   internally tagged enum Part`), as the other hand-written readers refuse it;
//! - an image source's tag given as a variant index (`"type": 0`, which the derived reader took
//!   from its buffer) is refused as a part's own tag is (`expected variant identifier`);
//! - an opaque part's `provider` given as an object (serde's `{"openai": null}` form) is read by
//!   serde_json's enum reader, so one without exactly one key has its error rather than that of
//!   serde's buffer (`invalid value: map, expected map with a single key`).

use ctxkit_core::compaction::Strategy;
use ctxkit_core::model::{Content, ImageSource, Part, Provider};
use ctxkit_core::CoreError;
use serde::de::{Error as _, Unexpected};
use serde_json::Value;

use super::records::present;
use super::{list, Fields};
use crate::convert::{decode, describe, join, Result};

/// A message's `Content`: a string is its text, `null` empty text, an array its parts.
pub(crate) fn content(value: Value, at: &str) -> Result<Content> {
    match value {
        Value::String(text) => Ok(Content::Text(text)),
        Value::Null => Ok(Content::default()),
        Value::Array(_) => list(value, at, part).map(Content::Parts),
        other => Err(invalid_type(
            &other,
            at,
            "a string or an array of content parts",
        )),
    }
}

/// A `Part`, tagged by `type`; unknown fields are refused, as derived.
pub(crate) fn part(value: Value, at: &str) -> Result<Part> {
    const VARIANTS: &[&str] = &["text", "image", "thinking", "opaque"];
    let (variant, mut f) = tagged(value, at, "type", "internally tagged enum Part", VARIANTS)?;
    match variant {
        0 => {
            let text = f.required("text");
            f.finish_denying(&["text"]).map(|()| Part::Text { text })
        }
        1 => {
            let source = f.required_with("source", image_source);
            let detail = f.or_default("detail");
            f.finish_denying(&["source", "detail"])?;
            Ok(Part::Image {
                source: present(source, at, "source")?,
                detail,
            })
        }
        2 => {
            let thinking = f.required("thinking");
            let signature = f.required("signature");
            f.finish_denying(&["thinking", "signature"])
                .map(|()| Part::Thinking {
                    thinking,
                    signature,
                })
        }
        _ => {
            let provider = f.required_with("provider", provider);
            let block = f.required("block");
            f.finish_denying(&["provider", "block"])?;
            Ok(Part::Opaque {
                provider: present(provider, at, "provider")?,
                block,
            })
        }
    }
}

/// An opaque part's `Provider`: a name, or serde's `{"name": null}`; another value is
/// `expected string or map`, as the derived reader said it.
fn provider(value: Value, at: &str) -> Result<Provider> {
    match value {
        Value::String(_) | Value::Object(_) => decode(value, at),
        other => Err(invalid_type(&other, at, "string or map")),
    }
}

/// An image's `ImageSource`, tagged by `type`; unknown fields are refused, as derived.
fn image_source(value: Value, at: &str) -> Result<ImageSource> {
    const VARIANTS: &[&str] = &["base64", "url"];
    let expecting = "internally tagged enum ImageSource";
    let (variant, mut f) = tagged(value, at, "type", expecting, VARIANTS)?;
    if variant == 0 {
        let media_type = f.required("media_type");
        let data = f.required("data");
        f.finish_denying(&["media_type", "data"])
            .map(|()| ImageSource::Base64 { media_type, data })
    } else {
        let url = f.required("url");
        f.finish_denying(&["url"])
            .map(|()| ImageSource::Url { url })
    }
}

/// The policy's `Strategy`, tagged by `kind`. As derived, `sliding_window` refuses unknown
/// fields and the variants without fields ignore them.
pub(crate) fn strategy(value: Value, at: &str) -> Result<Strategy> {
    const VARIANTS: &[&str] = &["summarize", "sliding_window", "truncate", "off"];
    let expecting = "internally tagged enum Strategy";
    let (variant, mut f) = tagged(value, at, "kind", expecting, VARIANTS)?;
    match variant {
        0 => Ok(Strategy::Summarize),
        1 => {
            let keep_last = f.required("keep_last");
            f.finish_denying(&["keep_last"])
                .map(|()| Strategy::SlidingWindow { keep_last })
        }
        2 => Ok(Strategy::Truncate),
        _ => Ok(Strategy::Off),
    }
}

/// The variant an object names in its field `tag` (one of `names`, by index) and its other
/// fields; a value that is not an object is `invalid type: <kind>, expected <expecting>`.
/// Not generic, so the .wasm has it once.
#[inline(never)]
fn tagged<'a>(
    value: Value,
    at: &'a str,
    tag: &str,
    expecting: &str,
    names: &'static [&'static str],
) -> Result<(usize, Fields<'a>)> {
    let mut fields = match value {
        Value::Object(fields) => fields,
        other => return Err(invalid_type(&other, at, expecting)),
    };
    let at_tag = join(at, tag);
    let name = match fields.remove(tag) {
        None => return Err(CoreError::invalid(at_tag, "missing")),
        Some(Value::String(name)) => name,
        Some(other) => return Err(invalid_type(&other, &at_tag, "variant identifier")),
    };
    let Some(variant) = names.iter().position(|known| *known == name) else {
        let message = serde_json::Error::unknown_variant(&name, names);
        return Err(describe(at_tag, &message.to_string()));
    };
    Ok((variant, Fields::of(Value::Object(fields), at)?))
}

/// `<at>: invalid type: <what value is>, expected <expected>`, as serde_json words it.
fn invalid_type(value: &Value, at: &str, expected: &str) -> CoreError {
    let unexpected = match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(value) => Unexpected::Bool(*value),
        Value::Number(number) => match (number.as_u64(), number.as_i64()) {
            (Some(value), _) => Unexpected::Unsigned(value),
            (None, Some(value)) => Unexpected::Signed(value),
            (None, None) => Unexpected::Float(number.as_f64().unwrap_or_default()),
        },
        Value::String(text) => Unexpected::Str(text),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    };
    let message = serde_json::Error::invalid_type(unexpected, &expected);
    describe(at.to_owned(), &message.to_string())
}

#[cfg(test)]
mod tests;
