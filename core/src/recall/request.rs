//! A history tool call read into a typed request: [`parse_history_call`] takes the tool's name
//! and its JSON arguments as the model wrote them and returns a [`HistoryRequest`], or an error
//! naming the tool and the argument (`search_history.query: empty: ...`) that the shell shows
//! the model as the tool's (failed) result.
//!
//! Guarantees: every bound of [`super::limits`] holds for a request that parsed: the query is
//! non-blank and at most [`QUERY_MAX_BYTES`], a limit is clamped to its range, a read covers at
//! most [`READ_MAX_MESSAGES`] seqs. Unknown arguments are refused (a misspelt `start` must not
//! silently read from seq 1). Numbers may come as JSON integers, integral floats (`5.0`) or
//! decimal strings (`"5"`), as models write them; anything else is an error saying what was
//! found.

use serde_json::{Map, Value};

use super::integer::{parse_i128, show_i128};
use super::limits::{
    OFFLOAD_DEFAULT_LINES, OFFLOAD_MAX_LINES, QUERY_MAX_BYTES, QUERY_MAX_TERMS,
    READ_DEFAULT_MESSAGES, READ_MAX_MESSAGES, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT,
};
use super::tools::{READ_HISTORY, READ_OFFLOAD, SEARCH_HISTORY};
use crate::error::{CoreError, Result};
use crate::text::head_bytes;

/// A search of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRequest {
    /// The text to find, trimmed (the exact pass looks for all of it).
    pub query: String,
    /// Its distinct whitespace-separated words, in order, at most [`QUERY_MAX_TERMS`] (the
    /// every-word pass requires each of them).
    pub terms: Vec<String>,
    /// At most this many hits, from 1 to [`SEARCH_MAX_LIMIT`].
    pub limit: usize,
}

impl SearchRequest {
    /// A search for `query` returning at most `limit` hits (default [`SEARCH_DEFAULT_LIMIT`];
    /// clamped to 1..=[`SEARCH_MAX_LIMIT`]). Errors on a blank or too long query.
    ///
    /// ```
    /// use ctxkit_core::recall::SearchRequest;
    /// let search = SearchRequest::new("  cargo  test cargo ", Some(99)).unwrap();
    /// assert_eq!(search.query, "cargo  test cargo");
    /// assert_eq!(search.terms, ["cargo", "test"]);
    /// assert_eq!(search.limit, 25);
    /// assert!(SearchRequest::new(" ", None).is_err());
    /// ```
    pub fn new(query: &str, limit: Option<i128>) -> Result<Self> {
        let at = format!("{SEARCH_HISTORY}.query");
        let query = query.trim();
        if query.is_empty() {
            return Err(CoreError::invalid(
                at,
                "empty: give the text to find (a path, an error message, an identifier...)",
            ));
        }
        if query.len() > QUERY_MAX_BYTES {
            return Err(CoreError::invalid(
                at,
                format!(
                    "is {} bytes, more than the {QUERY_MAX_BYTES} a search takes: search for a \
                     shorter, distinctive piece of it (it starts {:?})",
                    query.len(),
                    head_bytes(query, 60)
                ),
            ));
        }
        let mut terms: Vec<String> = Vec::new();
        for term in query.split_whitespace() {
            if terms.len() == QUERY_MAX_TERMS {
                break;
            }
            if !terms.iter().any(|known| known == term) {
                terms.push(term.to_owned());
            }
        }
        Ok(SearchRequest {
            query: query.to_owned(),
            terms,
            limit: clamp_count(limit, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT),
        })
    }

    /// True when the every-word pass can find more than the exact pass: the query is more than
    /// one word (or one word repeated).
    pub fn has_word_pass(&self) -> bool {
        !matches!(self.terms.as_slice(), [only] if *only == self.query)
    }
}

/// A read of the log from `from` to `to`, both included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadRequest {
    /// The first seq (at least 1).
    pub from: u64,
    /// The last seq (at least `from`, at most `from + READ_MAX_MESSAGES - 1`).
    pub to: u64,
    /// The `to` the call asked for, when it was shortened to [`READ_MAX_MESSAGES`].
    pub asked_to: Option<u64>,
}

impl ReadRequest {
    /// A read of `from..=to` (`to` defaults to `from + READ_DEFAULT_MESSAGES - 1`; a range of
    /// more than [`READ_MAX_MESSAGES`] is shortened). A `from` of 0 reads from 1. Errors on a
    /// negative seq or a `to` before `from`.
    ///
    /// ```
    /// use ctxkit_core::recall::ReadRequest;
    /// let read = ReadRequest::new(5, None).unwrap();
    /// assert_eq!((read.from, read.to, read.asked_to), (5, 14, None));
    /// let long = ReadRequest::new(1, Some(500)).unwrap();
    /// assert_eq!((long.to, long.asked_to), (40, Some(500)));
    /// assert!(ReadRequest::new(9, Some(3)).is_err());
    /// ```
    pub fn new(from: i128, to: Option<i128>) -> Result<Self> {
        let from = seq_argument(from, &format!("{READ_HISTORY}.from"))?.max(1);
        let last_allowed = from.saturating_add(READ_MAX_MESSAGES - 1).min(MAX_SEQ);
        let Some(asked) = to else {
            return Ok(ReadRequest {
                from,
                to: from.saturating_add(READ_DEFAULT_MESSAGES - 1).min(MAX_SEQ),
                asked_to: None,
            });
        };
        let asked = seq_argument(asked, &format!("{READ_HISTORY}.to"))?;
        if asked < from {
            return Err(CoreError::invalid(
                format!("{READ_HISTORY}.to"),
                format!("{asked} is before from ({from}): give to >= from"),
            ));
        }
        Ok(if asked > last_allowed {
            ReadRequest {
                from,
                to: last_allowed,
                asked_to: Some(asked),
            }
        } else {
            ReadRequest {
                from,
                to: asked,
                asked_to: None,
            }
        })
    }
}

/// A page of an offloaded output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffloadPageRequest {
    /// The path as the model gave it, trimmed (checked against the offload folder by
    /// [`super::check_offload_path`]).
    pub path: String,
    /// The first line to show, from 1.
    pub offset: u64,
    /// How many lines, from 1 to [`OFFLOAD_MAX_LINES`].
    pub limit: usize,
}

impl OffloadPageRequest {
    /// A page of `path` from line `offset` (default 1; 0 reads from 1) of `limit` lines
    /// (default [`OFFLOAD_DEFAULT_LINES`], clamped to 1..=[`OFFLOAD_MAX_LINES`]).
    pub fn new(path: &str, offset: Option<i128>, limit: Option<i128>) -> Result<Self> {
        let path = path.trim();
        if path.is_empty() {
            return Err(CoreError::invalid(
                format!("{READ_OFFLOAD}.path"),
                "empty: give the path the offload reference shows",
            ));
        }
        let offset = match offset {
            None => 1,
            Some(offset) => seq_argument(offset, &format!("{READ_OFFLOAD}.offset"))?.max(1),
        };
        Ok(OffloadPageRequest {
            path: path.to_owned(),
            offset,
            limit: clamp_count(limit, OFFLOAD_DEFAULT_LINES, OFFLOAD_MAX_LINES),
        })
    }
}

/// One history tool call, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HistoryRequest {
    /// `search_history`.
    Search(SearchRequest),
    /// `read_history`.
    Read(ReadRequest),
    /// `read_offload`.
    Offload(OffloadPageRequest),
}

/// Reads a call of the history tool `name` with `arguments` (the JSON text the model wrote;
/// empty means none). Errors name the tool and the argument.
///
/// ```
/// use ctxkit_core::recall::{parse_history_call, HistoryRequest};
/// let call = parse_history_call("read_history", r#"{"from": "12", "to": 14.0}"#).unwrap();
/// assert!(matches!(call, HistoryRequest::Read(read) if read.from == 12 && read.to == 14));
/// assert_eq!(
///     parse_history_call("read_history", r#"{"start": 1}"#).unwrap_err().to_string(),
///     "read_history.start: unknown argument (read_history takes from, to)"
/// );
/// ```
pub fn parse_history_call(name: &str, arguments: &str) -> Result<HistoryRequest> {
    let (known, tool): (&[&str], &str) = match name {
        SEARCH_HISTORY => (&["query", "limit"], SEARCH_HISTORY),
        READ_HISTORY => (&["from", "to"], READ_HISTORY),
        READ_OFFLOAD => (&["path", "offset", "limit"], READ_OFFLOAD),
        other => {
            return Err(CoreError::invalid(
                "tool_call.name",
                format!(
                    "{:?} is not a history tool ({SEARCH_HISTORY}, {READ_HISTORY}, \
                     {READ_OFFLOAD})",
                    head_bytes(other, 64)
                ),
            ))
        }
    };
    let fields = argument_object(tool, arguments)?;
    if let Some(unknown) = fields.keys().find(|key| !known.contains(&key.as_str())) {
        return Err(CoreError::invalid(
            format!("{tool}.{}", head_bytes(unknown, 64)),
            format!("unknown argument ({tool} takes {})", known.join(", ")),
        ));
    }
    match tool {
        SEARCH_HISTORY => {
            let query = required_string(&fields, tool, "query")?;
            let limit = integer(&fields, tool, "limit")?;
            Ok(HistoryRequest::Search(SearchRequest::new(query, limit)?))
        }
        READ_HISTORY => {
            let Some(from) = integer(&fields, tool, "from")? else {
                return Err(CoreError::invalid(
                    format!("{tool}.from"),
                    "missing: give the first seq to read",
                ));
            };
            let to = integer(&fields, tool, "to")?;
            Ok(HistoryRequest::Read(ReadRequest::new(from, to)?))
        }
        _ => {
            let path = required_string(&fields, tool, "path")?;
            let offset = integer(&fields, tool, "offset")?;
            let limit = integer(&fields, tool, "limit")?;
            Ok(HistoryRequest::Offload(OffloadPageRequest::new(
                path, offset, limit,
            )?))
        }
    }
}

/// The arguments as a JSON object (`{}` for empty text or `null`).
fn argument_object(tool: &str, arguments: &str) -> Result<Map<String, Value>> {
    let at = format!("{tool}.arguments");
    if arguments.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(fields)) => Ok(fields),
        Ok(Value::Null) => Ok(Map::new()),
        Ok(other) => Err(CoreError::invalid(
            at,
            format!("expected a JSON object, found {}", kind(&other)),
        )),
        Err(error) => Err(CoreError::invalid(at, format!("not valid JSON: {error}"))),
    }
}

fn required_string<'a>(fields: &'a Map<String, Value>, tool: &str, key: &str) -> Result<&'a str> {
    match fields.get(key) {
        Some(Value::String(text)) => Ok(text),
        None | Some(Value::Null) => Err(CoreError::invalid(
            format!("{tool}.{key}"),
            "missing: a string is required",
        )),
        Some(other) => Err(CoreError::invalid(
            format!("{tool}.{key}"),
            format!("expected a string, found {}", kind(other)),
        )),
    }
}

/// An optional integer argument: a JSON integer, an integral float or a decimal string.
fn integer(fields: &Map<String, Value>, tool: &str, key: &str) -> Result<Option<i128>> {
    let found = match fields.get(key) {
        None | Some(Value::Null) => return Ok(None),
        Some(value) => value,
    };
    let number = match found {
        Value::Number(number) => number
            .as_i64()
            .map(i128::from)
            .or_else(|| number.as_u64().map(i128::from))
            .or_else(|| number.as_f64().and_then(integral)),
        Value::String(text) => parse_i128(text.trim()),
        _ => None,
    };
    number.map(Some).ok_or_else(|| {
        CoreError::invalid(
            format!("{tool}.{key}"),
            format!("expected an integer, found {}", kind(found)),
        )
    })
}

/// `value` as an integer when it is one (within the range a seq can have).
fn integral(value: f64) -> Option<i128> {
    let in_range = value.is_finite() && value.fract() == 0.0 && value.abs() < 9.0e18;
    // The cast is exact: `value` is integral and within i64's range.
    in_range.then_some(value as i128)
}

/// A seq or a line number: not negative.
fn seq_argument(value: i128, at: &str) -> Result<u64> {
    match u64::try_from(value) {
        Ok(seq) if seq <= MAX_SEQ => Ok(seq),
        Ok(seq) => Err(CoreError::invalid(
            at,
            format!("{seq} is past the last position a log can have ({MAX_SEQ})"),
        )),
        Err(_) => Err(CoreError::invalid(
            at,
            format!(
                "{} is not a position: give a number from 1",
                show_i128(value)
            ),
        )),
    }
}

/// The largest seq a log can hold: the stores keep seqs as signed 64-bit integers.
const MAX_SEQ: u64 = i64::MAX as u64;

/// A count clamped to `1..=max`, `default` when absent.
fn clamp_count(value: Option<i128>, default: usize, max: usize) -> usize {
    match value {
        None => default,
        Some(value) => usize::try_from(value.clamp(1, max as i128)).unwrap_or(default),
    }
}

/// What a JSON value is, for "found X" messages.
fn kind(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(_) => "a boolean".to_owned(),
        Value::Number(number) => format!("the number {number}"),
        Value::String(text) => format!("the string {:?}", head_bytes(text, 40)),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(name: &str, arguments: &str) -> String {
        parse_history_call(name, arguments).unwrap_err().to_string()
    }

    #[test]
    fn a_seq_past_what_a_store_holds_is_refused_and_the_range_stays_within_it() {
        let at_end = ReadRequest::new(i128::from(i64::MAX), None).unwrap();
        assert_eq!((at_end.from, at_end.to), (MAX_SEQ, MAX_SEQ));
        let clamped = ReadRequest::new(i128::from(i64::MAX) - 5, Some(i128::from(u64::MAX)));
        assert!(clamped.is_err(), "a `to` past i64::MAX is refused");
        for huge in [i128::from(i64::MAX) + 1, i128::from(u64::MAX)] {
            let refused = ReadRequest::new(huge, None).unwrap_err().to_string();
            assert!(refused.starts_with("read_history.from: "), "{refused}");
            assert!(refused.contains("past the last position"), "{refused}");
        }
    }

    #[test]
    fn errors_name_the_tool_and_the_argument() {
        assert_eq!(
            error("search_history", "{}"),
            "search_history.query: missing: a string is required"
        );
        assert_eq!(
            error("search_history", r#"{"query": 5}"#),
            "search_history.query: expected a string, found the number 5"
        );
        assert_eq!(
            error("search_history", r#"{"query": "x", "limit": "ten"}"#),
            "search_history.limit: expected an integer, found the string \"ten\""
        );
        assert_eq!(
            error("search_history", "[1]"),
            "search_history.arguments: expected a JSON object, found an array"
        );
        assert!(
            error("search_history", "{").starts_with("search_history.arguments: not valid JSON")
        );
        assert_eq!(
            error("read_history", "{}"),
            "read_history.from: missing: give the first seq to read"
        );
        assert_eq!(
            error("read_history", r#"{"from": -3}"#),
            "read_history.from: -3 is not a position: give a number from 1"
        );
        assert_eq!(
            error("read_history", r#"{"from": 1.5}"#),
            "read_history.from: expected an integer, found the number 1.5"
        );
        assert_eq!(
            error("read_offload", r#"{"path": " "}"#),
            "read_offload.path: empty: give the path the offload reference shows"
        );
        assert_eq!(
            error("bash", "{}"),
            "tool_call.name: \"bash\" is not a history tool (search_history, read_history, read_offload)"
        );
        let long = format!(r#"{{"query": "{}"}}"#, "x".repeat(QUERY_MAX_BYTES + 1));
        assert!(error("search_history", &long).contains("1001 bytes, more than the 1000"));
    }

    #[test]
    fn counts_are_clamped_and_positions_start_at_one() {
        let HistoryRequest::Search(search) =
            parse_history_call("search_history", r#"{"query": "a", "limit": 0}"#).unwrap()
        else {
            panic!()
        };
        assert_eq!(search.limit, 1);
        assert!(!search.has_word_pass());
        let HistoryRequest::Offload(page) = parse_history_call(
            "read_offload",
            r#"{"path": ".ctxkit/x", "offset": 0, "limit": 1e9}"#,
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!((page.offset, page.limit), (1, OFFLOAD_MAX_LINES));
        let HistoryRequest::Read(read) =
            parse_history_call("read_history", r#"{"from": 0}"#).unwrap()
        else {
            panic!()
        };
        assert_eq!((read.from, read.to), (1, 10));
        assert!(matches!(
            parse_history_call("read_history", ""),
            Err(CoreError::InvalidInput { .. })
        ));
        let near_end = ReadRequest::new(i128::from(i64::MAX) - 2, None).unwrap();
        assert_eq!(near_end.to, MAX_SEQ);
    }

    #[test]
    fn terms_are_distinct_and_bounded() {
        let query = (0..50)
            .map(|n| format!("w{n}"))
            .collect::<Vec<_>>()
            .join(" ");
        let search = SearchRequest::new(&query, None).unwrap();
        assert_eq!(search.terms.len(), QUERY_MAX_TERMS);
        assert!(search.has_word_pass());
        assert!(SearchRequest::new("a a", None).unwrap().has_word_pass());
    }
}
