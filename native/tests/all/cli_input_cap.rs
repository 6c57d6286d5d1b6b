//! The CLI's input is bounded (issue 25's hostile probe): `/dev/zero` or a stream longer than
//! the input cap (`--max-input-bytes`, 256 MiB by default) is refused in one line naming the
//! cap and the flag, having read one byte past the cap; a FIFO no process writes to reads as
//! empty instead of blocking; a FIFO with a writer, and a file under the cap, read as before.

use std::io::Write;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::project::{assert_ok, stderr, Project};

/// Waits at most a minute for `child` (a bound on a test that used to hang), killing it then.
fn finish(mut child: Child, what: &str) -> Output {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("{what}: still running after 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn an_endless_input_is_refused_at_the_cap_naming_the_flag() {
    let project = Project::new();
    for args in [
        &["--max-input-bytes", "4096", "tokens", "/dev/zero"][..],
        &[
            "--max-input-bytes",
            "4096",
            "import",
            "/dev/zero",
            "--session",
            "z",
        ],
    ] {
        let child = project
            .command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let output = finish(child, &format!("{args:?}"));
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        let message = stderr(&output);
        assert!(
            message.contains("/dev/zero: more than the input cap of 4096 bytes")
                && message.contains("--max-input-bytes"),
            "{message}"
        );
        assert_eq!(message.trim_end().lines().count(), 1, "{message}");
    }
    // Standard input likewise; under the cap it reads as before.
    let mut child = project
        .command(&["--max-input-bytes", "64", "tokens", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(&[b' '; 1000]);
    let output = finish(child, "tokens -");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("standard input: more than the input cap of 64 bytes"));
    let file = project.file("m.json", br#"[{"role":"user","content":"hello"}]"#);
    assert_ok(
        &project.run(&["--max-input-bytes", "36", "tokens", file.to_str().unwrap()]),
        "a file of exactly the cap",
    );
}

#[test]
fn a_fifo_with_no_writer_does_not_block_and_one_with_a_writer_reads() {
    let project = Project::new();
    let fifo = project.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let fifo = fifo.to_str().unwrap().to_owned();
    let child = project
        .command(&["import", &fifo, "--session", "f"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let output = finish(child, "import FIFO");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("empty"), "{}", stderr(&output));
    // With a writer: read whole. This process holds the FIFO open for reading and writing (so
    // a writer is there before ctxkit opens it, whatever the order), writes the transcript,
    // and lets go once ctxkit has it open: ctxkit then reads the text and the end.
    let held = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    (&held)
        .write_all(br#"[{"role":"user","content":"through a pipe"}]"#)
        .unwrap();
    let child = project
        .command(&["import", &fifo, "--session", "f"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let opened = |pid: u32| {
        std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| {
            fds.flatten().any(|fd| {
                std::fs::read_link(fd.path()).is_ok_and(|to| to == std::path::Path::new(&fifo))
            })
        })
    };
    while !opened(child.id()) && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(held);
    let output = finish(child, "import FIFO with a writer");
    assert_ok(&output, "import FIFO with a writer");
}
