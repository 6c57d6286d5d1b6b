//! Finding 3, waits without a deadline: servers that stall (accept, read, never answer), drip
//! (a 200 head, then a body byte every 500 ms), answer `429 retry-after: 60` every time, or
//! 500 every time. With a 2 s summary timeout and every other option at its default: one call
//! of each summarizer API, and one engine compaction (a memory extraction, then the summary)
//! per server, timed against the deadline; five compactions in a row per server, counting the
//! summary requests the server got after the breaker's threshold of failures; and `ctxkit
//! probe --timeout 60 --deadline 3` against a stall and a 429 storm, counting its requests.

use std::path::Path;
use std::time::{Duration, Instant};

use ctxkit::core::turn::breaker::{BREAKER_FAILURES, BREAKER_SKIPPED_COMPACTIONS};
use ctxkit::llm::{HttpOptions, LlmRequest, SummarizerConfig};

use crate::server::{Reply, Server};
use crate::setup::{
    ctxkit, endpoint, engine, next_compaction, probe_transcript, turn, watched, APIS,
};
use crate::Row;

/// The summary timeout every case is given.
const DEADLINE: Duration = Duration::from_secs(2);

/// A wall time over this many deadlines is a failure.
const OVER: f64 = 1.5;

const HOSTILE: [&str; 4] = ["stall", "drip", "429 retry-after: 60", "500"];

fn server(hostile: &str) -> Server {
    let hostile = hostile.to_owned();
    Server::start("127.0.0.1", move |_| match hostile.as_str() {
        "stall" => Reply::Stall(Duration::from_secs(60)),
        "drip" => Reply::Drip,
        "500" => Reply::status(500, &[]),
        _ => Reply::status(429, &[("retry-after", "60")]),
    })
}

fn http() -> HttpOptions {
    HttpOptions {
        deadline: DEADLINE,
        ..HttpOptions::default()
    }
}

/// Runs `case` on every item at once, each in a thread of its own (the cases mostly wait).
fn side_by_side<T: Sync, R: Send>(items: &[T], case: impl Fn(&T) -> R + Sync) -> Vec<R> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .iter()
            .map(|item| {
                let case = &case;
                scope.spawn(move || case(item))
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a case"))
            .collect()
    })
}

/// Wall times over the deadline, with what each was.
#[derive(Default)]
struct Times {
    ratios: Vec<(f64, String)>,
}

impl Times {
    fn worst(&self) -> f64 {
        self.ratios
            .iter()
            .map(|(ratio, _)| *ratio)
            .fold(0.0, f64::max)
    }

    fn over(&self) -> Vec<String> {
        self.ratios
            .iter()
            .filter(|(ratio, _)| *ratio > OVER)
            .map(|(ratio, what)| format!("{what}: {ratio:.2}x the deadline"))
            .collect()
    }
}

/// One summarizer call per server and API, and one compaction per server, of run `run`.
fn deadlines(run: usize, times: &mut Times) {
    let cases: Vec<(&str, usize)> = HOSTILE
        .iter()
        .flat_map(|hostile| (0..APIS.len()).map(move |api| (*hostile, api)))
        .collect();
    let calls = side_by_side(&cases, |(hostile, api)| {
        let server = server(hostile);
        let client = endpoint(APIS[*api].0, &server.base_url, http()).client();
        let messages = turn(run, 0);
        let started = Instant::now();
        let _ = client.summarize(&LlmRequest {
            system: "Summarize.",
            prompt: "the conversation",
            messages: &messages,
            anthropic_messages: None,
            responses_input: None,
            max_tokens: 64,
            deadline: None,
        });
        started.elapsed()
    });
    for ((hostile, api), elapsed) in cases.iter().zip(calls) {
        let what = format!("{} call, {hostile}", APIS[*api].1);
        times
            .ratios
            .push((elapsed.as_secs_f64() / DEADLINE.as_secs_f64(), what));
    }
    let (api, name) = APIS[run % APIS.len()];
    let compactions = side_by_side(&HOSTILE, |hostile| {
        let server = server(hostile);
        let dir = tempfile::tempdir().expect("a folder");
        let summarizer = SummarizerConfig::Llm(endpoint(api, &server.base_url, http()));
        let mut engine = engine(dir.path(), summarizer);
        next_compaction(&mut engine, run, &mut 0).1
    });
    for (hostile, elapsed) in HOSTILE.iter().zip(compactions) {
        let what = format!("{name} compaction, {hostile}");
        times
            .ratios
            .push((elapsed.as_secs_f64() / DEADLINE.as_secs_f64(), what));
    }
}

/// Summary requests each server got after the breaker's threshold of failed compactions, in
/// five compactions in a row of run `run`.
fn breaker(run: usize) -> Vec<(String, usize)> {
    let (api, name) = APIS[run % APIS.len()];
    let compactions = (BREAKER_FAILURES + BREAKER_SKIPPED_COMPACTIONS) as usize;
    side_by_side(&HOSTILE, |hostile| {
        let server = server(hostile);
        let dir = tempfile::tempdir().expect("a folder");
        let summarizer = SummarizerConfig::Llm(endpoint(api, &server.base_url, http()));
        let mut engine = engine(dir.path(), summarizer);
        let mut next = 0;
        let mut after_threshold = 0;
        for compaction in 0..compactions {
            let before = server.summary_requests();
            next_compaction(&mut engine, run, &mut next);
            if compaction >= BREAKER_FAILURES as usize {
                after_threshold += server.summary_requests() - before;
            }
        }
        (format!("{name}, {hostile}"), after_threshold)
    })
}

/// `ctxkit probe --timeout 60 --deadline 3` against a stall and a 429 storm: the requests each
/// got, and the stalled run's wall time.
fn cli_probe(bin: &Path, run: usize) -> (usize, usize, Duration) {
    let dir = tempfile::tempdir().expect("a folder");
    let transcript = probe_transcript(dir.path(), run);
    let file = transcript.to_str().expect("a UTF-8 path");
    let runs = side_by_side(&["stall", "429 retry-after: 60"], |hostile| {
        let server = server(hostile);
        let base_url = format!("{}/v1", server.base_url);
        let env = [
            ("OPENAI_BASE_URL", base_url.as_str()),
            ("CTXKIT_MODEL", "hostile-model"),
        ];
        let args = [
            "probe",
            file,
            "--max-probes",
            "4",
            "--json",
            "--timeout",
            "60",
            "--deadline",
            "3",
        ];
        let probed = watched(
            &mut ctxkit(bin, dir.path(), &args, &env),
            Duration::from_secs(120),
        );
        (server.received().len(), probed.elapsed)
    });
    (runs[0].0, runs[1].0, runs[0].1)
}

/// The two rows of finding 3 after `runs` runs: the deadline, and the breaker.
pub fn probe(bin: &Path, runs: usize) -> [Row; 2] {
    let mut times = Times::default();
    let (mut breaker_cases, mut breaker_failures, mut after_threshold) = (0, 0, 0);
    let (mut probe_requests, mut probe_worst) = (0, Duration::ZERO);
    let mut breaker_notes = Vec::new();
    for run in 0..runs {
        deadlines(run, &mut times);
        for (what, sent) in breaker(run) {
            breaker_cases += 1;
            after_threshold += sent;
            if sent > 0 {
                breaker_failures += 1;
                breaker_notes.push(format!(
                    "{what}: {sent} summary request(s) past the breaker"
                ));
            }
        }
        let (stalled, storm, elapsed) = cli_probe(bin, run);
        breaker_cases += 2;
        probe_requests += stalled + storm;
        probe_worst = probe_worst.max(elapsed);
        if stalled > 1 || storm > BREAKER_FAILURES as usize {
            breaker_failures += 1;
            breaker_notes.push(format!(
                "ctxkit probe: {stalled} request(s) to the stall, {storm} to the 429 storm"
            ));
        }
    }
    let over = times.over();
    let deadline = Row {
        finding: "3. stalls: deadline (stall, drip, 429 retry-after: 60, 500; 2 s summary timeout)"
            .to_owned(),
        cases: times.ratios.len(),
        failure: format!("a call's or a compaction's wall time over {OVER}x its deadline"),
        failures: over.len(),
        figure: format!(
            "worst wall time / configured deadline: {:.2}x ({} calls, {} compactions)",
            times.worst(),
            runs * HOSTILE.len() * APIS.len(),
            runs * HOSTILE.len()
        ),
        notes: over,
    };
    let breaker = Row {
        finding: "3. stalls: breaker (5 compactions in a row per server; ctxkit probe --deadline 3)".to_owned(),
        cases: breaker_cases,
        failure: format!(
            "a summary request after {BREAKER_FAILURES} failed compactions; ctxkit probe sending more than 1 request to a stall or {BREAKER_FAILURES} to a 429 storm"
        ),
        failures: breaker_failures,
        figure: format!(
            "summary requests while the breaker was open: {after_threshold} in {} skipped compactions; ctxkit probe: {probe_requests} requests in {} runs of 12, worst wall time {:.1} s",
            runs * HOSTILE.len() * BREAKER_SKIPPED_COMPACTIONS as usize,
            2 * runs,
            probe_worst.as_secs_f64()
        ),
        notes: breaker_notes,
    };
    [deadline, breaker]
}
