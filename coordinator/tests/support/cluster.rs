//! Distributed runs with real processes on loopback: the coordinator and its workers started,
//! stopped and read as a test (or an operator) meets them.

#![allow(dead_code)] // each test binary uses its own subset

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const TOKEN: &str = "test-token-123";

pub fn depths(path: &std::path::Path) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["depths"].clone()
}

/// A result file's bytes before the measurements (`elapsed_s`, `peak_rss_bytes`), which are the
/// only fields that may differ between runs.
pub fn result_bytes(path: &std::path::Path) -> String {
    let raw = std::fs::read_to_string(path).unwrap();
    let cut = raw.find(",\"elapsed_s\":").unwrap_or_else(|| panic!("no elapsed_s in {raw}"));
    raw[..cut].to_string()
}

/// `coordinator status` of the job at `addr`: (depth, tasks done, tasks, tasks at work) while a
/// level runs.
pub fn level_status(addr: &str, dir: &std::path::Path) -> Option<(u32, u64, u64, u64)> {
    let out = Command::new(env!("CARGO_BIN_EXE_coordinator"))
        .args(["status", "--coordinator", &format!("http://{addr}")])
        .args(["--token-file", dir.join("token").to_str().unwrap()])
        .output()
        .unwrap();
    // "depth D: X of T tasks done, L at work; W workers connected"
    let text = String::from_utf8_lossy(&out.stdout);
    let words: Vec<&str> = text.split([' ', ':', ',', ';']).filter(|w| !w.is_empty()).collect();
    match words.as_slice() {
        ["depth", d, x, "of", t, "tasks", "done", l, "at", "work", ..] => {
            Some((d.parse().ok()?, x.parse().ok()?, t.parse().ok()?, l.parse().ok()?))
        }
        _ => None,
    }
}

pub fn embedded(dir: &std::path::Path) -> serde_json::Value {
    let path = dir.join("embedded.json");
    let out = Command::new(env!("CARGO_BIN_EXE_coordinator"))
        .args(["enumerate", "hprime", "--max-depth", "14", "--json", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    depths(&path)
}

/// The result bytes ([`result_bytes`]) of `job` run embedded, its JSON written in `dir`.
pub fn embedded_bytes(dir: &std::path::Path, job: &[&str]) -> String {
    let path = dir.join("embedded.json");
    let out = Command::new(env!("CARGO_BIN_EXE_coordinator"))
        .args(job)
        .args(["--json", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    result_bytes(&path)
}

/// Starts a coordinator listening on a free loopback port; returns it, its address and the
/// reader of the rest of its stderr.
pub fn start_coordinator(
    dir: &std::path::Path,
    extra: &[&str],
) -> (Child, String, BufReader<std::process::ChildStderr>) {
    let mut args = vec!["--listen", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    start_coordinator_on(dir, &args)
}

/// Like [`start_coordinator`], with the `--listen` address among `extra`.
pub fn start_coordinator_on(
    dir: &std::path::Path,
    extra: &[&str],
) -> (Child, String, BufReader<std::process::ChildStderr>) {
    start_job(dir, &["enumerate", "hprime", "--max-depth", "14", "--tasks-per-level", "8"], extra)
}

/// Starts a coordinator running `job` (writing `cluster.json`) with `extra` arguments.
pub fn start_job(
    dir: &std::path::Path,
    job: &[&str],
    extra: &[&str],
) -> (Child, String, BufReader<std::process::ChildStderr>) {
    let json = dir.join("cluster.json");
    let mut args = job.to_vec();
    args.extend(["--json", json.to_str().unwrap()]);
    args.extend(extra);
    start_with(dir, &args)
}

/// A coordinator started with `args` and the test's token; returns it, the address it serves
/// workers on, and its stderr from the line after that.
pub fn start_with(
    dir: &std::path::Path,
    args: &[&str],
) -> (Child, String, BufReader<std::process::ChildStderr>) {
    let token = dir.join("token");
    std::fs::write(&token, TOKEN).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_coordinator"))
        .args(args)
        .args(["--token-file", token.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let addr = loop {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "coordinator exited before listening");
        if let Some((_, a)) = line.trim().split_once("serving workers on ") {
            break a.to_string();
        }
    };
    (child, addr, err)
}

pub fn worker(addr: &str, token: &str, dir: &std::path::Path) -> Child {
    worker_at(&format!("http://{addr}"), token, dir, &[])
}

/// A worker process for the coordinator at `url`, with `extra` arguments.
pub fn worker_at(url: &str, token: &str, dir: &std::path::Path, extra: &[&str]) -> Child {
    // Written under a unique name and renamed: a worker starting meanwhile never reads a
    // truncated file.
    let file = dir.join(format!("token-{}", token.len()));
    let temp = dir.join(format!("token-{}.{:?}", token.len(), std::thread::current().id()));
    std::fs::write(&temp, token).unwrap();
    std::fs::rename(&temp, &file).unwrap();
    // Each worker keeps its levels in the test's directory, so a killed one leaves nothing
    // behind once the test removes it.
    static WORKERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = WORKERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let state = dir.join(format!("worker-{n}"));
    let mut args = vec!["--coordinator", url, "--token-file", file.to_str().unwrap()];
    args.extend(["--threads", "1", "--connect-timeout", "20"]);
    if !extra.contains(&"--state-dir") {
        args.extend(["--state-dir", state.to_str().unwrap()]);
    }
    Command::new(worker_binary())
        .args(args)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("worker binary")
}

/// The `worker` binary beside the coordinator's (built by `cargo test --workspace`).
pub fn worker_binary() -> PathBuf {
    let path = std::path::Path::new(env!("CARGO_BIN_EXE_coordinator")).with_file_name("worker");
    assert!(
        path.exists(),
        "{} is missing: run the tests with --workspace (or cargo build -p worker)",
        path.display()
    );
    path
}

/// Waits for `child` at most `limit`; kills it and fails the test if it is still running then.
pub fn wait_bounded(mut child: Child, limit: Duration) -> std::process::Output {
    let end = std::time::Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > end {
            child.kill().unwrap();
            panic!("process still running after {limit:?}: {}", rest_of(child));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

pub fn rest_of(child: Child) -> String {
    String::from_utf8_lossy(&child.wait_with_output().unwrap().stderr).into_owned()
}

pub fn rest(mut err: BufReader<std::process::ChildStderr>) -> String {
    let mut s = String::new();
    std::io::Read::read_to_string(&mut err, &mut s).unwrap();
    s
}
