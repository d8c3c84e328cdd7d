//! The `worker` binary's arguments and refusals (these tests also make `cargo test --workspace`
//! build the binary that the coordinator's cluster tests start).

use clap::{CommandFactory, Parser};
use std::process::Command;
use worker::{parse_coordinator_url, Args};

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

/// `--connect-timeout` bounds the whole wait, and the message names whom the worker could not
/// reach.
#[test]
fn an_unreachable_coordinator_ends_the_worker_within_its_connect_timeout() {
    let started = std::time::Instant::now();
    let out = worker(&["--coordinator", "http://127.0.0.1:9", "--connect-timeout", "3"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(15), "took {:?}", started.elapsed());
    assert!(err.contains("cannot reach http://127.0.0.1:9") && err.contains("--connect-timeout"), "{err}");

    // A coordinator beyond loopback needs a token (the worker then listens for its peers).
    let token = std::env::temp_dir().join(format!("cubefarm-worker-cli-{}", std::process::id()));
    std::fs::write(&token, "a-token-of-this-test").unwrap();
    let args = ["--coordinator", "http://nosuchhost.invalid:7878", "--connect-timeout", "3", "--token-file"];
    let out = worker(&[&args[..], &[token.to_str().unwrap()]].concat());
    std::fs::remove_file(token).unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("nosuchhost.invalid"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn cli_is_well_formed() {
    Args::command().debug_assert();
}

#[test]
fn accepts_http_and_https() {
    let u = parse_coordinator_url("http://127.0.0.1:50051").unwrap();
    assert!(!u.is_https());
    let u = parse_coordinator_url("https://farm.example:443/").unwrap();
    assert!(u.is_https());
}

#[test]
fn rejects_other_schemes_and_empty_host() {
    let err = parse_coordinator_url("127.0.0.1:50051").unwrap_err().to_string();
    assert!(err.contains("http:// or https://"), "{err}");
    assert!(parse_coordinator_url("grpc://host:1").is_err());
    assert!(parse_coordinator_url("http://").is_err());
}

#[test]
fn coordinator_is_required() {
    assert!(Args::try_parse_from(["worker"]).is_err());
    let args =
        Args::try_parse_from(["worker", "--coordinator", "http://localhost:1", "--threads", "4"]).unwrap();
    assert_eq!(args.threads, Some(4));
    assert!(Args::try_parse_from(["worker", "--coordinator", "ftp://x"]).is_err());
    assert!(Args::try_parse_from(["worker", "--coordinator", "http://x", "--threads", "0"]).is_err());
}
