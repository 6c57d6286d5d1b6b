//! One JSON POST with timeouts, a bounded body and retries, shared by every LLM client.
//!
//! Every call has one deadline: [`HttpOptions::deadline`] from its start, or the caller's
//! earlier one (the engine gives a compaction's extraction and summary one shared deadline).
//! Each attempt gets only the time left as ureq's global timeout, which bounds connecting,
//! sending, the headers and the whole body together: a server that drips a byte every few
//! seconds never trips a per-phase read timeout, but it cannot pass the deadline (issue 34,
//! item 3). No attempt starts once the deadline has passed.
//!
//! Retried: HTTP 429 and 5xx, up to `max_retries` times, waiting the response's
//! `retry-after` (seconds, capped at `max_retry_after`) or else an exponential backoff
//! (`initial_backoff * 2^attempt`, capped at `max_backoff`), but only when the wait ends
//! before the deadline: a retry that could not be made in time is not waited for, and the
//! status is the error. Not retried: timeouts (a stalled server would multiply the wait),
//! connection failures, redirects, other statuses, malformed bodies.
//!
//! Redirects are never followed: every request carries an API key (`x-api-key`,
//! `Authorization`, `anthropic-beta`) and the conversation, which belong to the configured
//! host only. ureq strips only `Authorization` on a redirect and turns a 301, 302 or 303 into
//! a GET that keeps every other header, so following one sent Anthropic's key to whatever
//! host the `Location` named and took that host's answer for the model's (issue 34, item 1).
//! A 3xx answer is a [`SummarizerError::Redirect`] naming its `Location`; the fix is the
//! base URL's, set to the final address.

use std::time::{Duration, Instant};

use serde_json::Value;
use ureq::Agent;

use super::{HttpOptions, SummarizerError};

/// How much of an error body is quoted in a [`SummarizerError::Status`].
const ERROR_BODY_QUOTE_BYTES: usize = 300;

/// An agent with the options' timeouts, reading error statuses as responses (to retry them)
/// and following no redirect (a 3xx is returned as the response, see the module doc).
pub(crate) fn agent(options: &HttpOptions) -> Agent {
    Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_connect(Some(options.connect_timeout))
        .timeout_send_request(Some(options.read_timeout))
        .timeout_send_body(Some(options.read_timeout))
        .timeout_recv_response(Some(options.read_timeout))
        .timeout_recv_body(Some(options.read_timeout))
        .build()
        .into()
}

/// POSTs `body` to `url` with `headers`, within `deadline` (see the module doc); the parsed
/// JSON of a 2xx response.
pub(crate) fn post_json(
    agent: &Agent,
    url: &str,
    headers: &[(&str, &str)],
    body: &Value,
    options: &HttpOptions,
    deadline: Option<Instant>,
) -> Result<Value, SummarizerError> {
    let text = post_text(agent, url, headers, body, options, deadline)?;
    serde_json::from_str(&text).map_err(|error| SummarizerError::Malformed {
        url: url.to_owned(),
        problem: format!("not JSON ({error}): {}", quote(&text)),
    })
}

/// POSTs `body` to `url` with `headers`, within `deadline` (the caller's, when earlier than
/// [`HttpOptions::deadline`] from now); the body of a 2xx response as text, unparsed (for a
/// caller that keeps part of it byte for byte).
pub(crate) fn post_text(
    agent: &Agent,
    url: &str,
    headers: &[(&str, &str)],
    body: &Value,
    options: &HttpOptions,
    deadline: Option<Instant>,
) -> Result<String, SummarizerError> {
    let started = Instant::now();
    let own = started.checked_add(options.deadline);
    let deadline = match (own, deadline) {
        (Some(own), Some(given)) => Some(own.min(given)),
        (own, given) => own.or(given),
    };
    let body = body.to_string();
    let mut attempt: u32 = 0;
    loop {
        let left = deadline.map(|deadline| deadline.saturating_duration_since(Instant::now()));
        if left.is_some_and(|left| left.is_zero()) {
            return Err(SummarizerError::Timeout {
                url: url.to_owned(),
                problem: format!(
                    "the deadline passed {} after the call began, before attempt {} was sent",
                    seconds(started.elapsed()),
                    attempt + 1
                ),
            });
        }
        let mut request = agent
            .post(url)
            .config()
            .timeout_global(left)
            .build()
            .header("content-type", "application/json");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let mut response = request
            .send(&body)
            .map_err(|error| transport_error(url, error, options, started))?;
        let status = response.status().as_u16();
        if (300..400).contains(&status) {
            return Err(redirect_error(url, status, response.headers()));
        }
        let retryable = status == 429 || (500..600).contains(&status);
        if retryable && attempt < options.max_retries {
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            let wait = delay(attempt, retry_after, options);
            // A wait that ends at or past the deadline leaves no time for the retry: the
            // status is the answer now rather than after a sleep that changes nothing.
            let in_time = deadline.is_none_or(|deadline| {
                Instant::now()
                    .checked_add(wait)
                    .is_some_and(|then| then < deadline)
            });
            if in_time {
                std::thread::sleep(wait);
                attempt += 1;
                continue;
            }
        }
        let text = response
            .body_mut()
            .with_config()
            .limit(options.max_response_bytes)
            .read_to_string()
            .map_err(|error| transport_error(url, error, options, started))?;
        if !(200..300).contains(&status) {
            return Err(SummarizerError::Status {
                url: url.to_owned(),
                status,
                body: quote(&text),
            });
        }
        return Ok(text);
    }
}

/// A duration for a message: seconds with one decimal.
fn seconds(duration: Duration) -> String {
    format!("{:.1} s", duration.as_secs_f64())
}

/// The error of a 3xx answer: its status and its `Location` (bounded and on one line, as
/// the server wrote it; it is not resolved against `url`).
fn redirect_error(url: &str, status: u16, headers: &ureq::http::HeaderMap) -> SummarizerError {
    let location = headers
        .get("location")
        .map(|value| quote(&String::from_utf8_lossy(value.as_bytes())))
        .unwrap_or_else(|| "(no Location header)".to_owned());
    SummarizerError::Redirect {
        url: url.to_owned(),
        status,
        location,
    }
}

/// The wait before retry number `attempt + 1`.
fn delay(attempt: u32, retry_after: Option<Duration>, options: &HttpOptions) -> Duration {
    match retry_after {
        Some(wait) => wait.min(options.max_retry_after),
        None => options
            .initial_backoff
            .saturating_mul(2u32.saturating_pow(attempt))
            .min(options.max_backoff),
    }
}

fn transport_error(
    url: &str,
    error: ureq::Error,
    options: &HttpOptions,
    started: Instant,
) -> SummarizerError {
    match error {
        // The global timeout is the call's deadline (every attempt and wait included).
        ureq::Error::Timeout(ureq::Timeout::Global) => SummarizerError::Timeout {
            url: url.to_owned(),
            problem: format!(
                "the call's deadline passed {} after it began",
                seconds(started.elapsed())
            ),
        },
        ureq::Error::Timeout(phase) => SummarizerError::Timeout {
            url: url.to_owned(),
            problem: format!("{phase:?}"),
        },
        ureq::Error::BodyExceedsLimit(_) => SummarizerError::TooLarge {
            url: url.to_owned(),
            limit: options.max_response_bytes,
        },
        ureq::Error::Io(io)
            if matches!(
                io.kind(),
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
            ) =>
        {
            SummarizerError::Timeout {
                url: url.to_owned(),
                problem: io.to_string(),
            }
        }
        other => SummarizerError::Transport {
            url: url.to_owned(),
            problem: other.to_string(),
        },
    }
}

/// The start of a body, on one line, for an error message.
pub(crate) fn quote(text: &str) -> String {
    let head = ctxkit_core::text::head_bytes(text, ERROR_BODY_QUOTE_BYTES);
    let mut quoted = ctxkit_core::text::single_line(head);
    if head.len() < text.len() {
        quoted.push('…');
    }
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one rule that keeps credentials home, for every scheme: an https base URL whose
    /// server redirects to http (or anywhere) is refused like any other, because no agent
    /// follows a redirect at all (the loopback tests in `tests/llm_redirects.rs` cover plain
    /// http; a TLS fake server would need a test-only root of trust in the client).
    #[test]
    fn no_agent_follows_redirects() {
        for options in [
            HttpOptions::default(),
            HttpOptions {
                max_retries: 0,
                ..HttpOptions::default()
            },
        ] {
            assert_eq!(agent(&options).config().max_redirects(), 0);
        }
    }

    #[test]
    fn a_redirect_error_names_the_location_on_one_bounded_line() {
        let mut headers = ureq::http::HeaderMap::new();
        let said = redirect_error("https://api.example/v1/messages", 302, &headers).to_string();
        assert!(
            said.starts_with("https://api.example/v1/messages: HTTP 302 redirect to (no Location header): not followed"),
            "{said}"
        );
        let long = format!("http://other.example/{}", "a".repeat(1_000));
        headers.insert("location", long.parse().unwrap());
        let SummarizerError::Redirect {
            status, location, ..
        } = redirect_error("https://api.example/v1/messages", 308, &headers)
        else {
            panic!("not a redirect error");
        };
        assert_eq!(status, 308);
        assert!(
            location.starts_with("http://other.example/aaa"),
            "{location}"
        );
        assert!(
            location.len() < 400 && location.ends_with('…'),
            "{location}"
        );
    }

    #[test]
    fn backoff_doubles_and_retry_after_is_capped() {
        let options = HttpOptions {
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(350),
            max_retry_after: Duration::from_secs(2),
            ..HttpOptions::default()
        };
        assert_eq!(delay(0, None, &options), Duration::from_millis(100));
        assert_eq!(delay(1, None, &options), Duration::from_millis(200));
        assert_eq!(delay(2, None, &options), Duration::from_millis(350));
        assert_eq!(delay(40, None, &options), Duration::from_millis(350));
        assert_eq!(
            delay(0, Some(Duration::from_secs(1)), &options),
            Duration::from_secs(1)
        );
        assert_eq!(
            delay(0, Some(Duration::from_secs(3600)), &options),
            Duration::from_secs(2)
        );
    }
}
