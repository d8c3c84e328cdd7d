//! Distributed runs with real processes and real gRPC on loopback: results identical to the
//! embedded run, and each fault (wrong token, other protocol version, a worker killed, killed
//! and restarted, or stopped mid-search, a killed coordinator) answered with a clear message
//! and no effect on the result. [`bounds`]: a peer cannot stop the coordinator by stating sizes;
//! [`index_dir`]: the index kept across runs; [`peer`]: a worker's peer service refuses
//! intruders and malformed messages (one test binary with these runs: their gRPC
//! clients are compiled once).

mod bounds;
mod index_dir;
mod peer;
#[path = "../support/mod.rs"]
mod support;

use support::cluster::*;
use support::*;

use cubefarm_proto::auth::Token;
use cubefarm_proto::v1::{self, coordinator_client::CoordinatorClient};
use std::io::{BufRead, BufReader};

use std::process::{Child, Command};
use std::time::Duration;

#[test]
fn two_worker_processes_give_the_embedded_result_and_a_wrong_token_is_refused_there_and_by_the_metrics() {
    let dir = scratch("two");
    let expected = embedded(&dir);
    let (mut coord, addr, mut err) = start_coordinator(&dir, &["--metrics", "127.0.0.1:0"]);
    // The job's metrics, before any worker came: only with the token.
    let metrics = loop {
        let mut line = String::new();
        assert!(err.read_line(&mut line).unwrap() > 0, "the coordinator ended early");
        if let Some((_, url)) = line.trim().split_once("serving metrics on http://") {
            break url.trim_end_matches("/metrics").to_string();
        }
    };
    assert!(scrape(&metrics, "/metrics", None).starts_with("HTTP/1.1 401"));
    assert!(scrape(&metrics, "/other", Some(TOKEN)).starts_with("HTTP/1.1 404"));
    let text = scrape(&metrics, "/metrics", Some(TOKEN));
    assert!(text.starts_with("HTTP/1.1 200") && text.contains("\ncubefarm_live_workers 0\n"), "{text}");
    assert!(text.contains("\ncubefarm_progress_total 2768\n"), "{text}");
    let intruder = worker(&addr, "wrong-token", &dir).wait_with_output().unwrap();
    assert!(!intruder.status.success());
    let msg = String::from_utf8_lossy(&intruder.stderr);
    assert!(msg.contains("missing or wrong token"), "{msg}");
    let mut first = worker(&addr, TOKEN, &dir);
    let mut first_err = BufReader::new(first.stderr.take().unwrap());
    let peer_url = loop {
        let mut line = String::new();
        assert!(first_err.read_line(&mut line).unwrap() > 0, "the worker ended early");
        if let Some((_, url)) = line.trim().split_once(" as ") {
            if line.contains("serving other workers on") {
                break url.to_string();
            }
        }
    };
    let drain = std::thread::spawn(move || rest(first_err));
    peer::refuses_intruders(&peer_url);
    let second = worker(&addr, TOKEN, &dir);
    assert!(first.wait().unwrap().success(), "{}", drain.join().unwrap());
    let out = second.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(coord.wait().unwrap().success(), "{}", rest(err));
    assert_eq!(depths(&dir.join("cluster.json")), expected);
    std::fs::remove_dir_all(dir).unwrap();
}

/// One HTTP GET of `path` on `addr`, with the token as a bearer if given: the whole response.
fn scrape(addr: &str, path: &str, token: Option<&str>) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

#[test]
fn faults_are_refused_or_recovered_with_identical_output() {
    let dir = scratch("faults");
    let expected = embedded(&dir);
    let (mut coord, addr, err) = start_coordinator(&dir, &["--liveness-secs", "2"]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        // Another protocol version is refused at registration, with both versions named.
        let old = worker::client::run_worker(worker::client::WorkerConfig {
            protocol_version: 999,
            ..worker_config(&format!("http://{addr}"), "old")
        })
        .await
        .unwrap_err()
        .to_string();
        assert!(old.contains("protocol version 999"), "{old}");
        // A worker that registers and then falls silent is declared lost after the liveness
        // timeout, and the job does not wait for it: its rows go to the others.
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect()
            .await
            .unwrap();
        let token = Token::new(TOKEN).unwrap();
        let mut client = CoordinatorClient::with_interceptor(channel, move |req| {
            cubefarm_proto::auth::add_token(Some(&token), req)
        });
        let id = client
            .register(v1::RegisterRequest {
                protocol_version: cubefarm_proto::PROTOCOL_VERSION,
                worker_name: "silent".into(),
                threads: 1,
                peer_address: "http://127.0.0.1:9".into(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .worker_id;
        assert!(
            client
                .heartbeat(v1::HeartbeatRequest { worker_id: id, ..Default::default() })
                .await
                .unwrap()
                .into_inner()
                .known
        );
    });
    let w = wait_bounded(worker(&addr, TOKEN, &dir), Duration::from_secs(60));
    assert!(w.status.success(), "{}", String::from_utf8_lossy(&w.stderr));
    assert!(coord.wait().unwrap().success());
    let log = rest(err);
    assert!(log.contains("refused worker \"old\": protocol version 999"), "{log}");
    assert!(log.contains("(silent) silent for"), "{log}");
    assert_eq!(depths(&dir.join("cluster.json")), expected);
    std::fs::remove_dir_all(dir).unwrap();
}

/// The in-process configuration of a worker for `url`, with this test's token.
fn worker_config(url: &str, name: &str) -> worker::client::WorkerConfig {
    worker::client::WorkerConfig {
        mem_limit: 1 << 30,
        patience: Duration::from_secs(10),
        ..worker::client::WorkerConfig::loopback(
            url.to_string(),
            Some(Token::new(TOKEN).unwrap()),
            name.into(),
        )
    }
}

#[test]
fn in_process_workers_give_the_embedded_result_and_keep_no_level_for_others() {
    let dir = scratch("inproc");
    let expected = embedded(&dir);
    let path = dir.join("inproc.json");
    // Their levels go to a temporary directory of the process, gone when it exits.
    let temp = dir.join("tmp");
    std::fs::create_dir(&temp).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_coordinator"))
        .args(["enumerate", "hprime", "--max-depth", "14", "--workers", "2"])
        .args(["--json", path.to_str().unwrap()])
        .env("TMPDIR", &temp)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(depths(&path), expected);
    let left: Vec<_> = std::fs::read_dir(&temp).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "the workers left {left:?} in the temporary directory");
    std::fs::remove_dir_all(dir).unwrap();
}

/// A block-layout space (corners) through in-process workers: the coordinator's index has no
/// transitions (its workers expand every level), and the result is the embedded one.
#[test]
fn corners_on_in_process_workers_give_the_embedded_result() {
    let dir = scratch("corners");
    let run = |name: &str, extra: &[&str]| {
        let path = dir.join(name);
        let out = Command::new(env!("CARGO_BIN_EXE_coordinator"))
            .args(["enumerate", "corners", "--json", path.to_str().unwrap()])
            .args(extra)
            .output()
            .unwrap();
        let log = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{log}");
        (depths(&path), log)
    };
    let (spread, log) = run("workers.json", &["--workers", "2"]);
    assert_eq!(spread, run("embedded.json", &[]).0);
    // The index is made once, by the coordinator, and each worker reads it.
    assert_eq!(log.matches("index received from the coordinator").count(), 2, "{log}");
    assert!(!log.contains("building the index"), "{log}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_killed_coordinator_restarts_resumes_and_its_workers_come_back_with_their_rows() {
    // H' to the end: depths 15 to 18 pull. Killed after depth 12, then again after depth 15,
    // the coordinator resumes each time from its journal with the same two workers, which kept
    // their rows meanwhile, and the counts are the embedded ones.
    let dir = scratch("restart");
    let path = dir.join("embedded.json");
    let out = Command::new(env!("CARGO_BIN_EXE_coordinator"))
        .args(["enumerate", "hprime", "--json", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let expected = depths(&path);
    let state = dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let job = ["enumerate", "hprime", "--tasks-per-level", "8", "--min-workers", "2"];
    let listen = ["--listen", addr.as_str(), "--state-dir", state.to_str().unwrap()];
    let workers = [worker(&addr, TOKEN, &dir), worker(&addr, TOKEN, &dir)];
    // A level is printed before it is journaled: once depth D + 1 shows, D is in the journal.
    for kill_after in ["depth 13:", "depth 16:"] {
        let (mut coordinator, _, err) = start_job(&dir, &job, &listen);
        for line in err.lines() {
            if line.unwrap().starts_with(kill_after) {
                break;
            }
        }
        coordinator.kill().unwrap(); // SIGKILL
        coordinator.wait().unwrap();
    }
    let (mut last, _, err) = start_job(&dir, &job, &listen);
    let log = rest(err);
    assert!(last.wait().unwrap().success(), "{log}");
    // Depth 15 is taken from the journal, not computed again; the last depths are computed.
    let computed = |depth: &str| log.lines().any(|l| l.starts_with(depth) && l.contains("(backward,"));
    let resumed = ["15", "16"].iter().any(|d| log.contains(&format!("resuming after depth {d}:")));
    assert!(resumed && !computed("depth 15:") && computed("depth 18:"), "{log}");
    assert!(!log.contains("made again"), "the workers kept their parts: {log}");
    for w in workers {
        let out = wait_bounded(w, Duration::from_secs(60));
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && text.contains("reconnecting"), "{text}");
    }
    assert_eq!(depths(&dir.join("cluster.json")), expected);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_tls_coordinator_serves_https_workers_that_exchange_rows_over_tls_and_refuses_plain_http_at_once() {
    let dir = scratch("tls");
    let expected = embedded(&dir);
    let pair =
        rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert, pair.cert.pem()).unwrap();
    std::fs::write(&key, pair.signing_key.serialize_pem()).unwrap();
    let (cert, key) = (cert.to_str().unwrap(), key.to_str().unwrap());
    let (mut coord, addr, err) =
        start_coordinator(&dir, &["--tls-cert", cert, "--tls-key", key, "--min-workers", "2"]);
    // Plain HTTP to a TLS port: a clear refusal, not retries.
    let plain = wait_bounded(worker(&addr, TOKEN, &dir), Duration::from_secs(20));
    let msg = String::from_utf8_lossy(&plain.stderr);
    assert!(!plain.status.success() && msg.contains("this coordinator serves TLS"), "{msg}");
    // https:// without --ca is refused before connecting.
    let no_ca =
        wait_bounded(worker_at(&format!("https://{addr}"), TOKEN, &dir, &[]), Duration::from_secs(20));
    let msg = String::from_utf8_lossy(&no_ca.stderr);
    assert!(!no_ca.status.success() && msg.contains("give --ca FILE"), "{msg}");
    // `status` over TLS, by host name (the certificate names localhost and 127.0.0.1).
    let port = addr.rsplit(':').next().unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_coordinator"))
        .args(["status", "--coordinator", &format!("https://localhost:{port}"), "--ca", cert])
        .args(["--token-file", dir.join("token").to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success() && text.contains("workers connected"), "{text}{status:?}");
    // Two workers that own rows and serve each other the Peer service over TLS too (the same
    // certificate, trusted through --ca): the rows they exchange cross TLS links.
    let tls_worker = || {
        worker_at(
            &format!("https://{addr}"),
            TOKEN,
            &dir,
            &["--ca", cert, "--tls-cert", cert, "--tls-key", key],
        )
    };
    let workers = [tls_worker(), tls_worker()];
    for w in workers {
        let out = wait_bounded(w, Duration::from_secs(60));
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert!(coord.wait().unwrap().success(), "{}", rest(err));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cluster.json")).unwrap()).unwrap();
    let rows: Vec<u64> =
        v["traffic"]["workers"].as_array().unwrap().iter().map(|w| w["rows"].as_u64().unwrap()).collect();
    assert!(rows.len() == 2 && rows.iter().all(|&r| r > 0), "both workers own rows: {rows:?}");
    assert_eq!(depths(&dir.join("cluster.json")), expected);
    std::fs::remove_dir_all(dir).unwrap();
}

/// Runs H' to depth 14 on three worker processes, one of which `fault` hits once the
/// coordinator has finished depth 9; the result must be the embedded bytes, and the log must
/// say that the worker was lost and its rows moved.
fn h_prime_with_a_fault(name: &str, fault: impl FnOnce(&mut Child, &str, &std::path::Path) -> Option<Child>) {
    let dir = scratch(name);
    embedded(&dir);
    let expected = result_bytes(&dir.join("embedded.json"));
    let (coord, addr, mut err) = start_coordinator(&dir, &["--liveness-secs", "2", "--min-workers", "3"]);
    let mut victim = worker(&addr, TOKEN, &dir);
    let others = [worker(&addr, TOKEN, &dir), worker(&addr, TOKEN, &dir)];
    let mut line = String::new();
    while !line.starts_with("depth  9:") && !line.starts_with("depth 9:") {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "the coordinator ended early");
    }
    let replacement = fault(&mut victim, &addr, &dir);
    for w in others.into_iter().chain(replacement) {
        let out = wait_bounded(w, Duration::from_secs(120));
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let _ = victim.kill();
    let _ = victim.wait();
    assert!(wait_bounded(coord, Duration::from_secs(60)).status.success());
    let log = rest(err);
    assert!(log.contains("declared lost") && log.contains("parts of lost workers move to others"), "{log}");
    assert_eq!(result_bytes(&dir.join("cluster.json")), expected);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
#[ignore = "full tier (scripts/test-full.sh): about 5 s; the simulator and tests/faults.rs cover a worker that never returns"]
fn a_worker_killed_mid_search_that_never_comes_back_costs_its_rows_not_the_job() {
    h_prime_with_a_fault("killed", |victim, _, _| {
        victim.kill().unwrap(); // SIGKILL
        victim.wait().unwrap();
        None
    });
}

#[test]
fn a_worker_killed_and_restarted_joins_again_and_the_bytes_are_the_same() {
    h_prime_with_a_fault("restarted", |victim, addr, dir| {
        victim.kill().unwrap();
        victim.wait().unwrap();
        Some(worker(addr, TOKEN, dir))
    });
}

#[test]
fn a_stalled_worker_is_declared_lost_and_registers_again_when_it_wakes() {
    h_prime_with_a_fault("stalled", |victim, _, _| {
        let pid = victim.id().to_string();
        assert!(Command::new("kill").args(["-STOP", &pid]).status().unwrap().success());
        std::thread::sleep(Duration::from_secs(5));
        assert!(Command::new("kill").args(["-CONT", &pid]).status().unwrap().success());
        None
    });
}

#[test]
#[ignore = "full tier (scripts/test-full.sh): about 5 s; the simulator runs one to many workers"]
fn one_or_three_worker_processes_give_the_embedded_bytes() {
    let dir = scratch("workers-1-3");
    embedded(&dir);
    let expected = result_bytes(&dir.join("embedded.json"));
    // The lone worker has no `--state-dir`: its levels go to a temporary directory of its
    // own, which is gone when it exits.
    let temp = dir.join("tmp");
    std::fs::create_dir(&temp).unwrap();
    for n in [1, 3] {
        let (mut coord, addr, err) = start_coordinator(&dir, &[]);
        let workers: Vec<Child> = if n == 1 {
            let token = dir.join("lone-token");
            std::fs::write(&token, TOKEN).unwrap();
            let url = format!("http://{addr}");
            let args = ["--coordinator", &url, "--token-file", path(&token), "--threads", "1"];
            let lone = Command::new(worker_binary())
                .args(args)
                .env("TMPDIR", &temp)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            vec![lone]
        } else {
            (0..n).map(|_| worker(&addr, TOKEN, &dir)).collect()
        };
        for w in workers {
            let out = wait_bounded(w, Duration::from_secs(60));
            if !out.status.success() {
                let _ = coord.kill();
                panic!("{}\ncoordinator: {}", String::from_utf8_lossy(&out.stderr), rest(err));
            }
        }
        assert!(coord.wait().unwrap().success(), "{}", rest(err));
        assert_eq!(result_bytes(&dir.join("cluster.json")), expected, "{n} workers");
        let left: Vec<_> = std::fs::read_dir(&temp).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(left.is_empty(), "the worker left {left:?} in its temporary directory");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_product_job_runs_on_worker_processes_with_the_embedded_bytes() {
    let dir = scratch("product");
    let job = ["enumerate", "cube", "--metric", "qtm", "--max-depth", "8", "--tasks-per-level", "16"];
    let expected = embedded_bytes(&dir, &job);
    let (mut coord, addr, err) = start_job(&dir, &job, &["--listen", "127.0.0.1:0"]);
    let workers: Vec<Child> = (0..2).map(|_| worker(&addr, TOKEN, &dir)).collect();
    for w in workers {
        let out = wait_bounded(w, Duration::from_secs(120));
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert!(coord.wait().unwrap().success(), "{}", rest(err));
    assert_eq!(result_bytes(&dir.join("cluster.json")), expected);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
#[ignore = "full tier (scripts/test-full.sh): about 40 s; the leased-task simulator covers a lost worker"]
fn an_h48_table_built_on_worker_processes_is_the_embedded_one_even_when_a_worker_is_killed() {
    let dir = scratch("h48-workers");
    let out = dir.join("h48h1");
    let build =
        ["build", "h48h1", "--format", "h48", "--out", out.to_str().unwrap(), "--listen", "127.0.0.1:0"];
    let (coord, addr, err) =
        start_with(&dir, &[&build[..], &["--liveness-secs", "2", "--tasks-per-level", "24"]].concat());
    // The table rows (level 10 of an h48h1 build) take over a second a task on one thread.
    kill_a_worker_mid_task(coord, &addr, err, &dir, 10);
    assert_eq!(sha256(&out), H48H1_SHA256, "the distributed h48h1 differs from the embedded one");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
#[ignore = "full tier (scripts/test-full.sh): about 25 s"]
fn an_h48_worker_with_little_memory_keeps_few_rows_and_the_bytes_are_the_same() {
    let dir = scratch("h48-room");
    let out = dir.join("h48h1");
    let build = ["build", "h48h1", "--format", "h48", "--out", out.to_str().unwrap()];
    let (mut coord, addr, err) =
        start_with(&dir, &[&build[..], &["--listen", "127.0.0.1:0", "--min-workers", "2"]].concat());
    let url = format!("http://{addr}");
    // Level 9 of h48h1 is 135 MiB of rows, which two workers would share about equally; a
    // worker takes tasks while its rows and a task's fit in half its --mem-limit, so this one
    // stops near 32 MiB (plus the tasks it holds when it gets there: a task keeps about 2 MiB).
    let small = worker_at(&url, TOKEN, &dir, &["--mem-limit", "64M"]);
    let small_name = format!("worker-{}", small.id());
    let big = worker_at(&url, TOKEN, &dir, &[]);
    for w in [small, big] {
        let done = wait_bounded(w, Duration::from_secs(180));
        assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    }
    assert!(coord.wait().unwrap().success());
    let log = rest(err);
    let id_of = |name: &str| {
        let line = log.lines().find(|l| l.contains(&format!("({name}) registered"))).expect("registered");
        line.split("worker ").nth(1).unwrap().split(' ').next().unwrap().to_string()
    };
    let kept = log.lines().rfind(|l| l.contains("rows kept to level 9:")).expect("a line of rows kept");
    let small_kept = kept
        .split(", ")
        .find_map(|part| {
            part.split_once(&format!("worker {} ", id_of(&small_name))).map(|(_, b)| b.to_string())
        })
        .expect("the small worker keeps rows");
    let (number, unit) = small_kept.trim().split_once(' ').unwrap();
    let mib = number.parse::<f64>().unwrap() / if unit == "KiB" { 1024.0 } else { 1.0 };
    assert!(unit == "KiB" || unit == "MiB", "{small_kept}");
    assert!(mib <= 40.0, "the worker of --mem-limit 64M keeps {small_kept} ({kept})");
    assert_eq!(sha256(&out), H48H1_SHA256);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
#[ignore = "full tier (scripts/test-full.sh): about 30 s"]
fn a_killed_h48_coordinator_restarts_with_the_levels_its_workers_keep() {
    let dir = scratch("h48-restart");
    let (out, state) = (dir.join("h48h1"), dir.join("state"));
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let build = ["build", "h48h1", "--format", "h48", "--out", out.to_str().unwrap(), "--listen", &addr];
    let args =
        [&build[..], &["--min-workers", "2", "--state-dir", state.to_str().unwrap(), "--liveness-secs", "5"]]
            .concat();
    let start = || {
        let (coord, _, err) = start_with(&dir, &args);
        (coord, err)
    };
    let workers = [worker(&addr, TOKEN, &dir), worker(&addr, TOKEN, &dir)];
    let (mut first, err) = start();
    // A level's line is printed after the level is journaled.
    for line in err.lines() {
        if line.unwrap().starts_with("depth  9:") {
            break;
        }
    }
    first.kill().unwrap(); // SIGKILL, before the table rows
    first.wait().unwrap();
    let (mut second, err) = start();
    let log = rest(err);
    assert!(second.wait().unwrap().success(), "{log}");
    assert!(
        log.contains("(journaled; kept by the workers)")
            && !log.contains("kept by lost workers are made again"),
        "{log}"
    );
    for w in workers {
        let done = wait_bounded(w, Duration::from_secs(60));
        assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    }
    assert_eq!(sha256(&out), H48H1_SHA256);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
#[ignore = "full tier (scripts/test-full.sh): about 20 s; the leased-task simulator covers a lost worker"]
fn cosets_on_worker_processes_give_the_embedded_counts_even_when_a_worker_is_killed() {
    let dir = scratch("cosets");
    let reps = ["", "R", "F", "R U", "F D", "L B"];
    let mut job = vec!["coset", "--exact-to", "8", "--tasks-per-level", "6"];
    job.extend(reps);
    let counts = |path: &std::path::Path| {
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let each: Vec<_> = v["cosets"].as_array().unwrap().iter().map(|c| c["counts"].clone()).collect();
        (each, v["counts"].clone(), v["beyond"].clone())
    };
    let path = dir.join("embedded.json");
    let out = Command::new(env!("CARGO_BIN_EXE_coordinator"))
        .args(&job)
        .args(["--json", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let expected = counts(&path);
    let (coord, addr, err) = start_job(&dir, &job, &["--listen", "127.0.0.1:0", "--liveness-secs", "2"]);
    // A coset takes about 1 to 3 s.
    kill_a_worker_mid_task(coord, &addr, err, &dir, 0);
    assert_eq!(counts(&dir.join("cluster.json")), expected);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn cosets_wait_for_a_worker_whose_memory_limit_holds_one_and_say_so() {
    let dir = scratch("coset-memory");
    let (mut coord, addr, err) =
        start_job(&dir, &["coset", "--exact-to", "3", "R"], &["--listen", "127.0.0.1:0"]);
    let mut small = worker_at(&format!("http://{addr}"), TOKEN, &dir, &["--mem-limit", "1G"]);
    // The coordinator's log, line by line, read on a thread so that the wait is bounded.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in err.lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let said = loop {
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) if line.contains("cosets wait") => break line,
            Ok(_) => continue,
            Err(e) => panic!("no wait message: {e}"),
        }
    };
    assert!(said.contains("--mem-limit at most 1.0 GiB") && said.contains("or more"), "{said}");
    assert!(small.try_wait().unwrap().is_none(), "the small worker waits for work it can hold");
    for child in [&mut small, &mut coord] {
        child.kill().unwrap();
        child.wait().unwrap();
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// Starts a worker for the leased job at `addr`; once level `level` shows a lease and three
/// tasks left (the worker is mid-task), starts a second one and SIGKILLs the first; checks that
/// the survivor and the coordinator finish and that the killed worker's task was handed out again.
fn kill_a_worker_mid_task(
    mut coord: Child,
    addr: &str,
    err: BufReader<std::process::ChildStderr>,
    dir: &std::path::Path,
    level: u32,
) {
    let mut victim = worker(addr, TOKEN, dir);
    let end = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        assert!(std::time::Instant::now() < end, "the worker never took a task of level {level}");
        match level_status(addr, dir) {
            Some((l, done, total, leased)) if l == level && leased >= 1 && done + 3 <= total => break,
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let survivor = worker(addr, TOKEN, dir);
    victim.kill().unwrap(); // SIGKILL, mid-task
    victim.wait().unwrap();
    let done = wait_bounded(survivor, Duration::from_secs(180));
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    assert!(coord.wait().unwrap().success());
    let log = rest(err);
    assert!(log.contains("of worker 1 handed out again"), "{log}");
}
