//! The `worker` binary's refusals (these tests also make `cargo test --workspace` build the
//! binary that the coordinator's cluster tests start).

use std::process::Command;

fn worker(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_worker")).args(args).output().expect("run worker")
}

#[test]
fn bad_arguments_are_refused_with_a_clear_message() {
    let out = worker(&["--coordinator", "ftp://head:7878"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("http:// or https://"));

    let out = worker(&["--coordinator", "http://127.0.0.1:9", "--token-file", "/nonexistent/token"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot read token file /nonexistent/token"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
