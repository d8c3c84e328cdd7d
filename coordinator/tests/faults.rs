//! Kociemba's H (19.5 billion positions) on four worker processes of one thread each, each with
//! its own `--state-dir`, under the faults an operator meets: a worker stopped for longer than
//! the liveness timeout, the coordinator killed and started again, two workers killed a second
//! apart and started again, a worker that never comes back, and workers that join one after
//! another while the search runs. Every run must give the embedded depths and end within five
//! minutes. Full tier (`scripts/test-full.sh`): each takes one to two minutes.

mod support;

use support::cluster::*;
use support::*;

use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(300);

/// The embedded depths of H.
fn embedded_h(dir: &Path) -> serde_json::Value {
    let path = dir.join("embedded.json");
    let out = coordinator(&["enumerate", "h", "--json", path.to_str().unwrap()]);
    ok(&out);
    depths(&path)
}

/// A worker with its own state directory `dir/NAME` (kept across its restarts).
fn named_worker(addr: &str, dir: &Path, name: &str) -> Child {
    let state = dir.join(name);
    worker_at(&format!("http://{addr}"), TOKEN, dir, &["--state-dir", state.to_str().unwrap()])
}

/// Reads the coordinator's log until a line starts with `prefix`.
fn read_until(err: &mut std::io::BufReader<std::process::ChildStderr>, prefix: &str) {
    let mut line = String::new();
    while !line.starts_with(prefix) {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "the coordinator ended before {prefix:?}");
    }
}

fn signal(child: &Child, sig: &str) {
    assert!(Command::new("kill").args([sig, &child.id().to_string()]).status().unwrap().success());
}

/// The job: H with `extra` coordinator arguments, on a fixed port of loopback.
fn start_h(
    dir: &Path,
    port: u16,
    extra: &[&str],
) -> (Child, String, std::io::BufReader<std::process::ChildStderr>) {
    let listen = format!("127.0.0.1:{port}");
    let mut args = vec!["--listen", listen.as_str()];
    args.extend_from_slice(extra);
    start_job(dir, &["enumerate", "h", "--min-workers", "4"], &args)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Waits for the workers and the coordinator (whose log from `err` on it returns); the depths
/// must be the embedded ones. A worker that fails ends the coordinator too.
fn finish(
    mut coordinator: Child,
    err: std::io::BufReader<std::process::ChildStderr>,
    workers: Vec<Child>,
    dir: &Path,
    expected: &serde_json::Value,
) -> String {
    let log = std::thread::spawn(move || rest(err));
    for w in workers {
        let out = wait_bounded(w, LIMIT);
        if !out.status.success() {
            let _ = coordinator.kill();
            panic!("a worker failed: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
    let status = wait_bounded(coordinator, LIMIT).status;
    let log = log.join().unwrap();
    assert!(status.success(), "{log}");
    assert_eq!(&depths(&dir.join("cluster.json")), expected);
    log
}

#[test]
#[ignore = "full tier (scripts/test-full.sh): about 2 minutes"]
fn a_worker_stopped_for_45_seconds_is_lost_comes_back_and_the_depths_are_the_embedded_ones() {
    let dir = scratch("stall");
    let expected = embedded_h(&dir);
    let started = std::time::Instant::now();
    let (coord, addr, mut err) = start_h(&dir, free_port(), &[]);
    let workers: Vec<Child> = (0..4).map(|i| named_worker(&addr, &dir, &format!("w{i}"))).collect();
    read_until(&mut err, "depth 10:");
    signal(&workers[1], "-STOP");
    std::thread::sleep(Duration::from_secs(45));
    signal(&workers[1], "-CONT");
    let log = finish(coord, err, workers, &dir, &expected);
    assert!(log.contains("declared lost"), "{log}");
    assert!(started.elapsed() < LIMIT);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
#[ignore = "full tier (scripts/test-full.sh): about 1 minute"]
fn a_killed_coordinator_started_again_with_its_state_dir_resumes_with_the_same_workers() {
    let dir = scratch("coordinator");
    let expected = embedded_h(&dir);
    let state = dir.join("state");
    let port = free_port();
    let extra = ["--state-dir", state.to_str().unwrap()];
    let (mut coord, addr, mut err) = start_h(&dir, port, &extra);
    let workers: Vec<Child> = (0..4).map(|i| named_worker(&addr, &dir, &format!("w{i}"))).collect();
    // A level is printed before it is journaled: once depth 12 shows, 11 is in the journal.
    read_until(&mut err, "depth 12:");
    coord.kill().unwrap(); // SIGKILL
    coord.wait().unwrap();
    let (coord, _, err) = start_h(&dir, port, &extra);
    let log = finish(coord, err, workers, &dir, &expected);
    assert!(log.contains("resuming after depth"), "{log}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
#[ignore = "full tier (scripts/test-full.sh): about 1 minute"]
fn two_workers_killed_a_second_apart_and_started_again_with_their_disks_come_back_as_themselves() {
    let dir = scratch("two-killed");
    let expected = embedded_h(&dir);
    let (coord, addr, mut err) = start_h(&dir, free_port(), &[]);
    let mut workers: Vec<Child> = (0..4).map(|i| named_worker(&addr, &dir, &format!("w{i}"))).collect();
    read_until(&mut err, "depth 11:");
    for i in [1, 2] {
        workers[i].kill().unwrap(); // SIGKILL
        workers[i].wait().unwrap();
        std::thread::sleep(Duration::from_secs(1));
    }
    for i in [1, 2] {
        workers[i] = named_worker(&addr, &dir, &format!("w{i}"));
    }
    let log = finish(coord, err, workers, &dir, &expected);
    // They came back as themselves: nothing was made again from the others' levels.
    assert!(log.contains("registered again") && !log.contains("made again"), "{log}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
#[ignore = "full tier (scripts/test-full.sh): about 1 minute"]
fn a_worker_that_never_comes_back_costs_its_parts_once_and_the_depths_are_the_embedded_ones() {
    let dir = scratch("gone");
    let expected = embedded_h(&dir);
    let (coord, addr, mut err) = start_h(&dir, free_port(), &["--liveness-secs", "5"]);
    let mut workers: Vec<Child> = (0..4).map(|i| named_worker(&addr, &dir, &format!("w{i}"))).collect();
    read_until(&mut err, "depth 11:");
    let mut gone = workers.remove(3);
    gone.kill().unwrap();
    gone.wait().unwrap();
    let log = finish(coord, err, workers, &dir, &expected);
    assert!(log.contains("declared lost") && log.contains("made again"), "{log}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
#[ignore = "full tier (scripts/test-full.sh): about 1 minute"]
fn eight_workers_started_one_after_another_all_own_parts_by_the_end() {
    let dir = scratch("late");
    let expected = embedded_h(&dir);
    // As ssh and Slurm launches start them: the coordinator alone, then one worker at a time.
    let (coord, addr, err) = start_job(&dir, &["enumerate", "h"], &["--listen", "127.0.0.1:0"]);
    let mut workers = Vec::new();
    for i in 0..8 {
        workers.push(named_worker(&addr, &dir, &format!("w{i}")));
        std::thread::sleep(Duration::from_millis(300));
    }
    finish(coord, err, workers, &dir, &expected);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cluster.json")).unwrap()).unwrap();
    let rows: Vec<u64> =
        v["traffic"]["workers"].as_array().unwrap().iter().map(|w| w["rows"].as_u64().unwrap()).collect();
    assert!(rows.len() == 8 && rows.iter().all(|&r| r > 0), "every worker owns rows: {rows:?}");
    std::fs::remove_dir_all(dir).unwrap();
}
