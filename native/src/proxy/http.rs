//! The agent-facing side of HTTP/1.1, on `std::net`: one request read from a connection with
//! bounded head and body, and answers written fixed-length or chunked.
//!
//! Guarantees: the head (request line and headers) is at most [`MAX_HEAD_BYTES`]; a body is
//! read only with a `Content-Length` no larger than the caller's cap (a larger one is refused
//! before any of it is read, a chunked request body is refused: agents send a length); every
//! refusal is a [`Refusal`] with the status and a message naming what is wrong. Nothing panics
//! on any bytes. One request per connection (`connection: close` on every answer), which keeps
//! the server simple and costs agents only a local connect.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// The most bytes a request line and its headers may take.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// A request as the agent sent it.
#[derive(Debug)]
pub struct Request {
    /// `POST`, `GET`...
    pub method: String,
    /// The path with its query.
    pub path: String,
    /// Header names lower-cased, values trimmed, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Request {
    /// The first value of header `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// A request refused before it reached the upstream: the status and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The HTTP status.
    pub status: u16,
    /// What is wrong, for the agent's user.
    pub message: String,
}

impl Refusal {
    /// A refusal with `status`.
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        Refusal {
            status,
            message: message.into(),
        }
    }
}

/// Reads one request from `stream`, its body at most `max_body` bytes.
pub fn read_request(stream: &TcpStream, max_body: usize) -> Result<Request, Refusal> {
    let mut reader = BufReader::new(stream);
    let mut head_bytes = 0;
    let mut line = String::new();
    read_line(&mut reader, &mut line, &mut head_bytes)?;
    let mut parts = line.split_whitespace();
    let (method, path) = match (parts.next(), parts.next(), parts.next()) {
        (Some(method), Some(path), Some(version)) if version.starts_with("HTTP/1.") => {
            (method.to_owned(), path.to_owned())
        }
        _ => return Err(Refusal::new(400, "the request line is not HTTP/1.x")),
    };
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        read_line(&mut reader, &mut line, &mut head_bytes)?;
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            break;
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| Refusal::new(400, "a header line has no ':'"))?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let request = Request {
        method,
        path,
        headers,
        body: Vec::new(),
    };
    if request.header("transfer-encoding").is_some() {
        return Err(Refusal::new(
            411,
            "a chunked request body is not accepted: send Content-Length",
        ));
    }
    let length = match request.header("content-length") {
        None => 0,
        Some(value) => value
            .parse::<usize>()
            .map_err(|_| Refusal::new(400, format!("Content-Length {value:?} is not a number")))?,
    };
    if length > max_body {
        return Err(Refusal::new(
            413,
            format!("the body is {length} bytes, over the proxy's cap of {max_body} bytes"),
        ));
    }
    if request
        .header("expect")
        .is_some_and(|value| value.eq_ignore_ascii_case("100-continue"))
    {
        // curl asks before sending a body over 1 KiB; without this it waits a second.
        let mut out = stream;
        out.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .map_err(|error| {
                Refusal::new(400, format!("the request could not be read: {error}"))
            })?;
    }
    let mut body = vec![0; length];
    reader
        .read_exact(&mut body)
        .map_err(|error| Refusal::new(400, format!("the body ended early: {error}")))?;
    Ok(Request { body, ..request })
}

fn read_line(
    reader: &mut impl BufRead,
    line: &mut String,
    head_bytes: &mut usize,
) -> Result<(), Refusal> {
    let limit = MAX_HEAD_BYTES.saturating_sub(*head_bytes) as u64 + 1;
    let mut bytes = Vec::new();
    let read = reader
        .take(limit)
        .read_until(b'\n', &mut bytes)
        .map_err(|error| Refusal::new(400, format!("the request could not be read: {error}")))?;
    *head_bytes += read;
    if *head_bytes > MAX_HEAD_BYTES {
        return Err(Refusal::new(
            431,
            format!("the request's head is over {MAX_HEAD_BYTES} bytes"),
        ));
    }
    if read == 0 || !bytes.ends_with(b"\n") {
        return Err(Refusal::new(400, "the request's head ended early"));
    }
    *line = String::from_utf8(bytes)
        .map_err(|_| Refusal::new(400, "the request's head is not UTF-8"))?;
    Ok(())
}

/// Writes a whole answer: status, headers, a body of known length.
pub fn write_full(
    stream: &mut impl Write,
    status: u16,
    headers: &[(String, String)],
    body: &[u8],
) -> std::io::Result<()> {
    let mut head = status_line(status);
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    ));
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    stream.flush()
}

/// A refusal as a JSON answer in Anthropic's error shape, so an agent shows its message.
pub fn write_refusal(stream: &mut impl Write, refusal: &Refusal) -> std::io::Result<()> {
    let body = serde_json::json!({
        "type": "error",
        "error": {"type": "ctxkit_proxy_error", "message": refusal.message},
    });
    let headers = [("content-type".to_owned(), "application/json".to_owned())];
    write_full(
        stream,
        refusal.status,
        &headers,
        body.to_string().as_bytes(),
    )
}

/// Starts a chunked answer: the status and headers; then [`write_chunk`] and [`end_chunks`].
pub fn start_chunked(
    stream: &mut impl Write,
    status: u16,
    headers: &[(String, String)],
) -> std::io::Result<()> {
    let mut head = status_line(status);
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("transfer-encoding: chunked\r\nconnection: close\r\n\r\n");
    stream.write_all(head.as_bytes())?;
    stream.flush()
}

/// One chunk, flushed at once (an SSE event reaches the agent as soon as it arrives).
pub fn write_chunk(stream: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    if bytes.is_empty() {
        return Ok(());
    }
    stream.write_all(format!("{:x}\r\n", bytes.len()).as_bytes())?;
    stream.write_all(bytes)?;
    stream.write_all(b"\r\n")?;
    stream.flush()
}

/// The last chunk.
pub fn end_chunks(stream: &mut impl Write) -> std::io::Result<()> {
    stream.write_all(b"0\r\n\r\n")?;
    stream.flush()
}

fn status_line(status: u16) -> String {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        411 => "Length Required",
        413 => "Payload Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        504 => "Gateway Timeout",
        _ => "Status",
    };
    format!("HTTP/1.1 {status} {reason}\r\n")
}
