//! `ctxkit probe --resume FILE`: the run's graded requests, kept in a JSON-lines file as they
//! finish, so a stopped run (killed, or bounded by `--max-requests`) goes on where it was.
//!
//! The file's first line is a header naming the transcript (its fingerprint) and every option
//! that changes the rows (window, summarizer, views, samples, model...). Each later line is one
//! request, as `ctxkit probe --json` prints it, written and flushed as soon as it is graded. A
//! run with the same file asks only the requests not there yet and reports all of them, so
//! its table equals an uninterrupted run's. A header that does not match the run is refused
//! with the mismatches named, and the file is left as it was; a torn last line (the run was
//! killed while writing it) is dropped and its request asked again. A stored grade is never
//! trusted: each stored answer is graded again against the run's own key, and a run whose file
//! held grades that do not match their answers says how many (the table is the re-graded one).

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use ctxkit::reports::probe::{FailureKind, Outcome, ProbeRequest, RequestId};
use serde_json::{json, Value};

use super::Failure;

/// The header's tag and version.
const TAG: &str = "ctxkit_probe_resume";

/// An open resume file, and the outcomes it already holds.
pub struct ResumeFile {
    path: PathBuf,
    file: File,
    earlier: BTreeMap<RequestId, Outcome>,
}

/// The header of a run: the transcript and the options that change its rows.
pub fn header(transcript: &Path, bytes: &[u8], options: Value) -> Value {
    let fingerprint = ctxkit_core::text::fingerprint_hex(&String::from_utf8_lossy(bytes));
    json!({
        TAG: 1,
        "transcript": {
            "file": transcript.display().to_string(),
            "fingerprint": format!("fnv1a64:{fingerprint}"),
            "bytes": bytes.len(),
        },
        "options": options,
    })
}

impl ResumeFile {
    /// Opens `path` for `header`'s run: creates it with the header when it is missing or
    /// empty, otherwise checks its header and reads its rows. Refuses, leaving the file as it
    /// was, a file of another run or one that is not a resume file.
    pub fn open(path: &Path, header: &Value) -> Result<ResumeFile, Failure> {
        let place = format!("--resume {}", path.display());
        let io = |what: &str, error: std::io::Error| {
            Failure::runtime(format!("{place}: cannot {what}: {error}"))
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| io("open it", e))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(|e| io("read it", e))?;
        let header_line = format!("{header}\n");
        let Some(header_end) = bytes.iter().position(|b| *b == b'\n') else {
            // New, or killed while its header was written.
            if !header_line.as_bytes().starts_with(&bytes) {
                return Err(Failure::usage(format!(
                    "{place}: not a ctxkit probe resume file (no header line); the file is left as it was"
                )));
            }
            file.set_len(0).map_err(|e| io("truncate it", e))?;
            file.seek(SeekFrom::Start(0))
                .map_err(|e| io("seek in it", e))?;
            file.write_all(header_line.as_bytes())
                .map_err(|e| io("write its header", e))?;
            return Ok(ResumeFile {
                path: path.to_owned(),
                file,
                earlier: BTreeMap::new(),
            });
        };
        let found: Value = serde_json::from_slice(&bytes[..header_end])
            .ok()
            .filter(|v: &Value| v.get(TAG).is_some())
            .ok_or_else(|| {
                Failure::usage(format!(
                    "{place}: not a ctxkit probe resume file (line 1 is not its header); the file is left as it was"
                ))
            })?;
        let mismatches = mismatches(&found, header);
        if !mismatches.is_empty() {
            return Err(Failure::usage(format!(
                "{place}: the file is another run's, so it is left as it was: {}",
                mismatches.join("; ")
            )));
        }
        // The complete lines after the header; a last line without its newline is torn.
        let kept_end = bytes.iter().rposition(|b| *b == b'\n').unwrap_or(0) + 1;
        let mut earlier = BTreeMap::new();
        let body = &bytes[header_end + 1..kept_end];
        for (at, row) in body.split(|b| *b == b'\n').enumerate() {
            if row.is_empty() {
                continue;
            }
            let parsed = serde_json::from_slice::<Value>(row)
                .ok()
                .and_then(|row| row_outcome(&row));
            let Some((id, outcome)) = parsed else {
                return Err(Failure::usage(format!(
                    "{place}: line {} is not a request of ctxkit probe; the file is left as it was",
                    at + 2
                )));
            };
            earlier.insert(id, outcome);
        }
        if kept_end < bytes.len() {
            file.set_len(kept_end as u64)
                .map_err(|e| io("drop its torn last line", e))?;
        }
        file.seek(SeekFrom::End(0))
            .map_err(|e| io("seek in it", e))?;
        Ok(ResumeFile {
            path: path.to_owned(),
            file,
            earlier,
        })
    }

    /// The outcomes the file held when it was opened, by request (taken once).
    pub fn take_earlier(&mut self) -> BTreeMap<RequestId, Outcome> {
        std::mem::take(&mut self.earlier)
    }

    /// Appends one graded request, as one line written at once.
    pub fn append(&mut self, request: &ProbeRequest) -> Result<(), Failure> {
        let line = format!("{}\n", request_json(request));
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|error| {
                Failure::runtime(format!(
                    "--resume {}: cannot append a request: {error}",
                    self.path.display()
                ))
            })
    }
}

/// What differs between the header in the file and the run's, in words.
fn mismatches(found: &Value, wanted: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if found[TAG] != wanted[TAG] {
        out.push(format!(
            "format version {} in the file, {} now",
            found[TAG], wanted[TAG]
        ));
    }
    let (was, now) = (&found["transcript"], &wanted["transcript"]);
    if was["fingerprint"] != now["fingerprint"] || was["bytes"] != now["bytes"] {
        out.push(format!(
            "the transcript: {} ({} bytes, {}) in the file, {} ({} bytes, {}) now",
            was["file"],
            was["bytes"],
            was["fingerprint"],
            now["file"],
            now["bytes"],
            now["fingerprint"]
        ));
    }
    let empty = serde_json::Map::new();
    let was = found["options"].as_object().unwrap_or(&empty);
    let now = wanted["options"].as_object().unwrap_or(&empty);
    let names: std::collections::BTreeSet<&String> = was.keys().chain(now.keys()).collect();
    for name in names {
        let (a, b) = (
            was.get(name).unwrap_or(&Value::Null),
            now.get(name).unwrap_or(&Value::Null),
        );
        if a != b {
            out.push(format!("{name} {a} in the file, {b} now"));
        }
    }
    out
}

/// One request as `--json` prints it and the resume file keeps it.
pub fn request_json(request: &ProbeRequest) -> Value {
    let probe = &request.probe;
    let outcome = match &request.outcome {
        Outcome::Answered { answer, held } => {
            json!({"status": "answered", "held": held, "answer": answer})
        }
        Outcome::Failed { kind, message } => {
            json!({"status": "error", "error": kind.name(), "message": message})
        }
        Outcome::Skipped { reason } => json!({"status": "skipped", "reason": reason}),
    };
    json!({
        "through_seq": request.through_seq,
        "kind": probe.kind.as_str(),
        "source": probe.source,
        "source_seq": probe.source_seq,
        "in_tail": probe.in_tail,
        "question": probe.question,
        "key": probe.key.all_of,
        "strategy": request.strategy.name(),
        "sample": request.sample,
        "outcome": outcome,
    })
}

/// The request a [`request_json`] row names, and its outcome.
fn row_outcome(row: &Value) -> Option<(RequestId, Outcome)> {
    let text = |value: &Value| value.as_str().map(str::to_owned);
    let id = RequestId {
        through_seq: row["through_seq"].as_u64()?,
        kind: text(&row["kind"])?,
        source: text(&row["source"])?,
        source_seq: row["source_seq"].as_u64()?,
        question: text(&row["question"])?,
        strategy: text(&row["strategy"])?,
        sample: u32::try_from(row["sample"].as_u64()?).ok()?,
    };
    let outcome = &row["outcome"];
    let outcome = match outcome["status"].as_str()? {
        "answered" => Outcome::Answered {
            answer: text(&outcome["answer"])?,
            held: outcome["held"].as_bool()?,
        },
        "error" => Outcome::Failed {
            kind: FailureKind::from_name(outcome["error"].as_str()?)?,
            message: text(&outcome["message"])?,
        },
        "skipped" => Outcome::Skipped {
            reason: text(&outcome["reason"])?,
        },
        _ => return None,
    };
    Some((id, outcome))
}
