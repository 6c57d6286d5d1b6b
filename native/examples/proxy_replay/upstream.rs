//! The fake upstream (Anthropic or OpenAI Responses answers) on loopback (std::net only): it
//! answers its `n`-th request with the `n`-th recorded answer and keeps every request body it
//! received.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// What the upstream received, in order.
pub type Received = Arc<Mutex<Vec<Vec<u8>>>>;

/// Starts the upstream; its base URL and the bodies it will have received.
pub fn start(answers: Vec<String>, streaming: bool) -> Result<(String, Received), String> {
    let content_type = if streaming {
        "text/event-stream"
    } else {
        "application/json"
    };
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let url = format!(
        "http://{}",
        listener.local_addr().map_err(|e| e.to_string())?
    );
    let received: Received = Arc::default();
    let kept = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let body = read_request(&mut reader);
            let turn = {
                let mut kept = kept.lock().expect("the received bodies");
                kept.push(body);
                kept.len() - 1
            };
            // A request past the recorded ones (none is expected) is answered 500, so the
            // agent-facing comparison fails loudly.
            let (status, text) = match answers.get(turn) {
                Some(answer) => ("200 OK", answer.as_str()),
                None => ("500 Internal Server Error", "{\"type\":\"error\"}"),
            };
            let reply = format!(
                "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\
                 connection: close\r\n\r\n{text}",
                text.len()
            );
            let _ = reader.get_mut().write_all(reply.as_bytes());
        }
    });
    Ok((url, received))
}

/// Reads one request's head and its `content-length` body.
fn read_request(reader: &mut impl BufRead) -> Vec<u8> {
    let mut line = String::new();
    let mut length = 0usize;
    while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        line.clear();
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    body
}
