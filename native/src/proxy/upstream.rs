//! The upstream side: one request forwarded to the configured provider, and its answer passed
//! back to the agent as it arrives.
//!
//! Guarantees:
//! - The agent's credential headers ([`FORWARDED_HEADERS`]: `x-api-key`, `authorization`,
//!   `anthropic-version`, `anthropic-beta`, `openai-organization`, `openai-project`,
//!   `openai-beta`) go to the configured upstream and nowhere else:
//!   no redirect is followed (a 3xx is answered to the agent as a 502 naming only the status,
//!   so the agent's own client does not follow it either), and no error, log line or store
//!   row carries a header value.
//! - The answer is the upstream's: its status, `content-type` and body byte for byte; a
//!   `text/event-stream` body is written to the agent chunk by chunk as each read returns, an
//!   other body once whole (with its length). A 429 or a 500 is passed through like any other
//!   status; the proxy retries nothing (the agent's own retry logic sees what it would have).
//! - A failure to reach the upstream is a 502 naming the upstream's URL and the cause; an
//!   upstream that has not begun its answer within the proxy's `upstream_timeout` is a 504.

use std::io::{Read, Write};
use std::time::Duration;

use ureq::Agent;

use super::http::{end_chunks, start_chunked, write_chunk, write_full, Refusal};

/// The agent's headers the upstream receives: Anthropic's key and versions, OpenAI's
/// `authorization: Bearer` key and the organization and project it bills.
pub const FORWARDED_HEADERS: [&str; 7] = [
    "x-api-key",
    "authorization",
    "anthropic-version",
    "anthropic-beta",
    "openai-organization",
    "openai-project",
    "openai-beta",
];

/// The answer's headers the agent receives besides its status and length.
const RETURNED_HEADERS: [&str; 4] = ["content-type", "request-id", "retry-after", "x-request-id"];

/// An agent that follows no redirect, reads error statuses as answers, and gives up on an
/// upstream that has not begun its answer within `answer_within` (connecting and sending
/// count in it too).
pub fn agent(answer_within: Duration) -> Agent {
    Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_connect(Some(answer_within))
        .timeout_send_request(Some(answer_within))
        .timeout_send_body(Some(answer_within))
        .timeout_recv_response(Some(answer_within))
        // Once the answer has begun, a long one (a model writing for minutes) is the
        // upstream's to end; an hour bounds a stream that never does.
        .timeout_recv_body(Some(Duration::from_secs(3_600)))
        .build()
        .into()
}

/// What came back and went to the agent.
#[derive(Debug)]
pub struct Passed {
    /// The upstream's status.
    pub status: u16,
    /// Whether the agent received all of it.
    pub delivered: bool,
}

/// Sees the answer before the agent does: each call is made before the bytes it names are
/// written to the agent, so whatever it records is recorded before the agent can send its
/// next request (which would otherwise race the record and look like another conversation).
pub trait Observer {
    /// The upstream's status, and whether the body is a stream.
    fn started(&mut self, status: u16, streamed: bool);
    /// The next piece of a streamed body.
    fn piece(&mut self, bytes: &[u8]);
    /// A body that is not a stream, whole.
    fn whole(&mut self, body: &[u8]);
}

/// An observer that looks at nothing (a request passed through untouched).
#[derive(Debug)]
pub struct Unobserved;

impl Observer for Unobserved {
    fn started(&mut self, _: u16, _: bool) {}
    fn piece(&mut self, _: &[u8]) {}
    fn whole(&mut self, _: &[u8]) {}
}

/// POSTs `body` to `url` with the agent's forwarded headers and writes the answer to
/// `agent_out`, showing it to `observer` first (see [`Observer`]).
pub fn forward(
    agent: &Agent,
    url: &str,
    agent_headers: &[(String, String)],
    body: &[u8],
    agent_out: &mut impl Write,
    observer: &mut dyn Observer,
) -> Result<Passed, Refusal> {
    let mut request = agent.post(url).header("content-type", "application/json");
    for (name, value) in agent_headers {
        if FORWARDED_HEADERS.contains(&name.as_str()) {
            request = request.header(name.as_str(), value.as_str());
        }
    }
    // The error names the URL and ureq's cause (which never holds a header value).
    let mut response = request.send(body).map_err(|error| match error {
        ureq::Error::Timeout(_) => Refusal::new(
            504,
            format!("the upstream {url} did not answer in time ({error})"),
        ),
        error => Refusal::new(502, format!("the upstream {url} failed: {error}")),
    })?;
    let status = response.status().as_u16();
    if (300..400).contains(&status) {
        return Err(Refusal::new(
            502,
            format!(
                "the upstream {url} answered with a redirect ({status}); redirects are not \
                 followed (the request carries the agent's key): set --upstream to the final \
                 address"
            ),
        ));
    }
    let headers: Vec<(String, String)> = RETURNED_HEADERS
        .iter()
        .filter_map(|name| {
            let value = response.headers().get(*name)?.to_str().ok()?;
            Some(((*name).to_owned(), value.to_owned()))
        })
        .collect();
    let streamed = headers
        .iter()
        .any(|(name, value)| name == "content-type" && value.starts_with("text/event-stream"));
    observer.started(status, streamed);
    let mut reader = response.body_mut().as_reader();
    if !streamed {
        let mut whole = Vec::new();
        reader
            .read_to_end(&mut whole)
            .map_err(|error| Refusal::new(502, format!("the upstream {url} failed: {error}")))?;
        observer.whole(&whole);
        let delivered = write_full(agent_out, status, &headers, &whole).is_ok();
        return Ok(Passed { status, delivered });
    }
    let mut delivered = start_chunked(agent_out, status, &headers).is_ok();
    let mut buffer = vec![0; 16 * 1024];
    loop {
        let read = match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            // A stream cut by the upstream ends the agent's stream too (without the last
            // chunk, so the agent sees it cut); what arrived is not kept as an answer.
            Err(_) => {
                delivered = false;
                break;
            }
        };
        let piece = buffer.get(..read).unwrap_or_default();
        observer.piece(piece);
        delivered = delivered && write_chunk(agent_out, piece).is_ok();
    }
    if delivered {
        delivered = end_chunks(agent_out).is_ok();
    }
    Ok(Passed { status, delivered })
}
