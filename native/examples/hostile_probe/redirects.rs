//! Finding 1, redirects: a configured host on 127.0.0.1 answers every request with a 301,
//! 302, 303, 307 or 308 whose `Location` is the same path on a second host, 127.0.0.2, which
//! answers a valid summary. Attacked: the four summarizer APIs' summary and plain completion,
//! the probe's Chat Completions client, and the CLI (`ctxkit compact-if-idle --summarizer
//! anthropic`, `ctxkit probe`). The second host must accept no connection at all; each
//! request it does get is counted, and whether it carried `x-api-key` or `authorization`.

use std::path::Path;
use std::time::Duration;

use ctxkit::core::Message;
use ctxkit::llm::{Api, HttpOptions, LlmRequest, OpenAiChat, Sampling};

use crate::server::{anthropic_answer, anthropic_compaction_answer, openai_answer, Reply, Server};
use crate::setup::{ctxkit, endpoint, probe_transcript, watched, APIS, KEY};
use crate::Row;

const STATUSES: [u16; 5] = [301, 302, 303, 307, 308];

/// What the second host answers: a summary a client that followed would store.
const OTHER: &str = "## Goal\nOTHER-HOST-ANSWER\n## Next Steps\nNone.";

/// The two hosts of one case.
struct Hosts {
    configured: Server,
    other: Server,
}

impl Hosts {
    fn start(status: u16, answer: String) -> Hosts {
        let other = Server::start("127.0.0.2", move |_| Reply::ok(answer.clone()));
        let target = other.base_url.clone();
        let configured = Server::start("127.0.0.1", move |_| Reply::Respond {
            status,
            headers: vec![("location".to_owned(), format!("{target}/v1/messages"))],
            body: r#"{"moved":true}"#.to_owned(),
        });
        Hosts { configured, other }
    }
}

/// Counts over every case.
#[derive(Default)]
struct Tally {
    cases: usize,
    failures: usize,
    redirects_sent: usize,
    cross_connections: usize,
    cross_keyed: usize,
    answers_taken: usize,
    examples: Vec<String>,
}

impl Tally {
    /// One case: `taken` when the client returned the other host's answer.
    fn case(&mut self, what: &str, hosts: &Hosts, taken: bool) {
        self.cases += 1;
        self.redirects_sent += hosts.configured.received().len();
        let crossed = hosts.other.connections();
        let keyed = hosts
            .other
            .received()
            .iter()
            .filter(|request| request.carries_key())
            .count();
        self.cross_connections += crossed;
        self.cross_keyed += keyed;
        self.answers_taken += usize::from(taken);
        if crossed > 0 || taken {
            self.failures += 1;
            self.examples.push(format!(
                "{what}: {crossed} connection(s) to the other host, {keyed} with a key, answer taken: {taken}"
            ));
        }
    }
}

fn summary_answer(api: Api) -> String {
    match api {
        Api::OpenAiChat => openai_answer(OTHER),
        Api::AnthropicMessages => anthropic_answer(OTHER),
        Api::AnthropicCompaction => anthropic_compaction_answer(OTHER),
        Api::ResponsesCompaction => serde_json::json!({"output": [
            {"type": "compaction", "id": "cmp_1", "encrypted_content": "T1RIRVI="}
        ]})
        .to_string(),
    }
}

fn completion_answer(api: Api) -> String {
    match api {
        Api::OpenAiChat | Api::ResponsesCompaction => openai_answer(OTHER),
        Api::AnthropicMessages | Api::AnthropicCompaction => anthropic_answer(OTHER),
    }
}

fn http() -> HttpOptions {
    HttpOptions {
        max_retries: 3,
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(20),
        deadline: Duration::from_secs(10),
        ..HttpOptions::default()
    }
}

fn request() -> LlmRequest<'static> {
    LlmRequest {
        system: "Summarize.",
        prompt: "The conversation so far.",
        messages: &[],
        anthropic_messages: None,
        responses_input: None,
        max_tokens: 100,
        deadline: None,
    }
}

/// The library's clients, every status and API.
fn clients(tally: &mut Tally) {
    for status in STATUSES {
        for (api, name) in APIS {
            let hosts = Hosts::start(status, summary_answer(api));
            let client = endpoint(api, &hosts.configured.base_url, http()).client();
            let taken = client.summarize(&request()).is_ok();
            tally.case(&format!("{name} summary, {status}"), &hosts, taken);

            let hosts = Hosts::start(status, completion_answer(api));
            let client = endpoint(api, &hosts.configured.base_url, http()).client();
            let taken = client.complete(&request()).is_ok();
            tally.case(&format!("{name} completion, {status}"), &hosts, taken);
        }
        let hosts = Hosts::start(status, openai_answer(OTHER));
        let mut probe_endpoint = endpoint(Api::OpenAiChat, &hosts.configured.base_url, http());
        probe_endpoint.http.max_retries = 0;
        let sampling = Sampling {
            temperature: 0.0,
            seed: 1,
        };
        let taken = OpenAiChat::new(probe_endpoint)
            .chat(&[Message::user("what?")], 10, sampling)
            .is_ok();
        tally.case(&format!("probe client, {status}"), &hosts, taken);
    }
}

/// The CLI: `compact-if-idle --summarizer anthropic` and `probe`, at status `status`.
fn cli(bin: &Path, run: usize, status: u16, tally: &mut Tally) {
    let dir = tempfile::tempdir().expect("a folder");
    let transcript = probe_transcript(dir.path(), run);
    let file = transcript.to_str().expect("a UTF-8 path");
    let appended = watched(
        &mut ctxkit(bin, dir.path(), &["append", "s", file, "--create"], &[]),
        Duration::from_secs(60),
    );
    assert_eq!(appended.code(), Some(0), "append: {}", appended.stderr());

    let hosts = Hosts::start(status, anthropic_answer(OTHER));
    let env = [
        ("ANTHROPIC_BASE_URL", hosts.configured.base_url.as_str()),
        ("ANTHROPIC_API_KEY", KEY),
        ("CTXKIT_MODEL", "hostile-model"),
    ];
    let args = [
        "compact-if-idle",
        "s",
        "--window",
        "4000",
        "--idle",
        "280",
        "--summarizer",
        "anthropic",
        "--json",
    ];
    let compacted = watched(
        &mut ctxkit(bin, dir.path(), &args, &env),
        Duration::from_secs(60),
    );
    let taken = compacted.stdout().contains("\"llm\"");
    tally.case(&format!("ctxkit compact-if-idle, {status}"), &hosts, taken);

    let hosts = Hosts::start(status, openai_answer(OTHER));
    let base_url = format!("{}/v1", hosts.configured.base_url);
    let env = [
        ("OPENAI_BASE_URL", base_url.as_str()),
        ("OPENAI_API_KEY", KEY),
        ("CTXKIT_MODEL", "hostile-model"),
    ];
    let args = [
        "probe",
        file,
        "--strategy",
        "full",
        "--max-probes",
        "2",
        "--json",
    ];
    let probed = watched(
        &mut ctxkit(bin, dir.path(), &args, &env),
        Duration::from_secs(120),
    );
    let taken = probed.stdout().contains("\"answered\"");
    tally.case(&format!("ctxkit probe, {status}"), &hosts, taken);
}

/// The row of finding 1 after `runs` runs.
pub fn probe(bin: &Path, runs: usize) -> Row {
    let mut tally = Tally::default();
    for run in 0..runs {
        clients(&mut tally);
        cli(bin, run, STATUSES[run % STATUSES.len()], &mut tally);
    }
    Row {
        finding: "1. redirects (301/302/303/307/308 to 127.0.0.2)".to_owned(),
        cases: tally.cases,
        failure: "the second host got a connection, or its answer was taken".to_owned(),
        failures: tally.failures,
        figure: format!(
            "cross-host requests that carried a key: {} of {} redirects ({} cross-host connections, {} answers taken)",
            tally.cross_keyed, tally.redirects_sent, tally.cross_connections, tally.answers_taken
        ),
        notes: tally.examples,
    }
}
