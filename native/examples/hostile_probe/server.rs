//! The hostile fake LLM servers: a small HTTP/1.1 server on a loopback address (std::net
//! only) that answers every request through a handler (a status, a stall, a drip), records
//! each request with its headers, and counts the connections it accepted before reading a
//! byte, so a client that connected and sent nothing still counts.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A request the server read.
#[derive(Debug, Clone)]
pub struct Received {
    /// Header names lower-cased, with values.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: String,
}

impl Received {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// Whether it carried a credential (`x-api-key` or `authorization`).
    pub fn carries_key(&self) -> bool {
        self.header("x-api-key").is_some() || self.header("authorization").is_some()
    }

    /// A memory extraction request (the core's extraction system text), not a summary.
    pub fn is_extraction(&self) -> bool {
        self.body.contains("extract durable memories")
    }
}

/// What the server does with one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// This status, extra headers and body.
    Respond {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Nothing for this long, then the connection closes.
    Stall(Duration),
    /// A 200 head announcing a 1 MiB body, then one byte of it every 500 ms for a minute.
    Drip,
}

impl Reply {
    /// A 200 with a JSON body.
    pub fn ok(body: String) -> Reply {
        Reply::Respond {
            status: 200,
            headers: Vec::new(),
            body,
        }
    }

    /// `status` with a JSON body and the extra headers.
    pub fn status(status: u16, headers: &[(&str, &str)]) -> Reply {
        Reply::Respond {
            status,
            headers: headers
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect(),
            body: r#"{"error":"hostile"}"#.to_owned(),
        }
    }
}

type Handler = dyn Fn(&Received) -> Reply + Send + Sync;

/// A server on `ip` and a port of its own; it stops when dropped.
pub struct Server {
    /// `http://IP:PORT`.
    pub base_url: String,
    received: Arc<Mutex<Vec<Received>>>,
    connections: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    accept_loop: Option<JoinHandle<()>>,
}

impl Server {
    /// Starts a server on `ip` (`127.0.0.1`, or `127.0.0.2` for a second host).
    pub fn start(ip: &str, handler: impl Fn(&Received) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind((ip, 0)).expect("bind a loopback port");
        listener.set_nonblocking(true).expect("non-blocking accept");
        let base_url = format!("http://{}", listener.local_addr().expect("local address"));
        let received = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let accept_loop = {
            let (received, connections, stop) =
                (received.clone(), connections.clone(), stop.clone());
            std::thread::spawn(move || {
                let until = Instant::now() + Duration::from_secs(300);
                while !stop.load(Ordering::SeqCst) && Instant::now() < until {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            connections.fetch_add(1, Ordering::SeqCst);
                            let (received, handler) = (received.clone(), handler.clone());
                            std::thread::spawn(move || serve(stream, &received, handler.as_ref()));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(2)),
                    }
                }
            })
        };
        Server {
            base_url,
            received,
            connections,
            stop,
            accept_loop: Some(accept_loop),
        }
    }

    /// Every request read so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().expect("requests").clone()
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// Summary requests read so far (memory extractions left out).
    pub fn summary_requests(&self) -> usize {
        self.received()
            .iter()
            .filter(|request| !request.is_extraction())
            .count()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(handle) = self.accept_loop.take() {
            let _ = handle.join();
        }
    }
}

/// Reads one request from `stream` (the request line, headers, a `content-length` body).
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Received> {
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).is_err() || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Received {
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn serve(stream: TcpStream, received: &Mutex<Vec<Received>>, handler: &Handler) {
    stream.set_nonblocking(false).ok();
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok();
    let mut reader = BufReader::new(stream);
    let Some(request) = read_request(&mut reader) else {
        return;
    };
    received.lock().expect("requests").push(request.clone());
    let mut stream = reader.into_inner();
    match handler(&request) {
        Reply::Stall(duration) => std::thread::sleep(duration),
        Reply::Drip => drip(&mut stream),
        Reply::Respond {
            status,
            headers,
            body,
        } => {
            let mut response = format!(
                "HTTP/1.1 {status} Hostile\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                response.push_str(&format!("{name}: {value}\r\n"));
            }
            response.push_str("\r\n");
            response.push_str(&body);
            let _ = stream.write_all(response.as_bytes());
            let _ = stream.flush();
        }
    }
}

/// [`Reply::Drip`]: the head, then a byte every 500 ms until the client hangs up or a minute
/// has passed.
fn drip(stream: &mut TcpStream) {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1048576\r\nconnection: close\r\n\r\n";
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    let until = Instant::now() + Duration::from_secs(60);
    while Instant::now() < until {
        if stream
            .write_all(b" ")
            .and_then(|()| stream.flush())
            .is_err()
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// A Chat Completions answer holding `text`.
pub fn openai_answer(text: &str) -> String {
    serde_json::json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]})
        .to_string()
}

/// A Messages API answer holding `text`.
pub fn anthropic_answer(text: &str) -> String {
    serde_json::json!({"type": "message", "role": "assistant", "content": [{"type": "text", "text": text}]})
        .to_string()
}

/// An answer of Anthropic's server compaction whose block's text is `text`.
pub fn anthropic_compaction_answer(text: &str) -> String {
    serde_json::json!({
        "id": "msg_compact", "type": "message", "role": "assistant", "model": "agent-model",
        "content": [{"type": "compaction", "content": text}],
        "stop_reason": "compaction", "stop_sequence": null,
        "usage": {"input_tokens": 1, "output_tokens": 1, "iterations": []}
    })
    .to_string()
}
