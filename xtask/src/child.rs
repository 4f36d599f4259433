//! A child process run with piped output and a timeout (`bench` and `stress`
//! parse each file in their own child).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a child process ended.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// It exited with a code.
    Exited { code: i32, stdout: String, stderr: String },
    /// It was killed by a signal (abort, segfault, stack overflow).
    Signalled { stderr: String },
    /// It was still running at the timeout and was killed.
    TimedOut,
    /// It could not be started.
    SpawnFailed(String),
}

/// Runs `cmd` with piped output, killing it (by its own handle) at `timeout`.
pub(crate) fn run_child(mut cmd: Command, timeout: Duration) -> Outcome {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => return Outcome::SpawnFailed(e.to_string()),
    };
    // Drain both pipes on threads so a chatty child cannot block.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() < timeout => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    match status {
        None => Outcome::TimedOut,
        Some(status) => match status.code() {
            Some(code) => Outcome::Exited { code, stdout, stderr },
            None => Outcome::Signalled { stderr },
        },
    }
}
