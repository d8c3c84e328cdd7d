//! The `coordinator` binary as a user runs it: outputs, and bad input refused with one clear
//! line, a non-zero exit and no partial file.

use crate::support::*;

#[test]
fn enumerate_corners_writes_the_documented_json() {
    let dir = scratch("json");
    let path = dir.join("corners.json");
    let out = coordinator(&[
        "enumerate",
        "--threads",
        "2",
        "corners",
        "--metric",
        "htm",
        "--json",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let raw = std::fs::read_to_string(&path).unwrap();
    assert!(
        raw.starts_with(r#"{"space":"corners","metric":"htm","order":88179840,"depths":[{"depth":0,"#),
        "{raw}"
    );
    let v: serde_json::Value = serde_json::from_str(&raw).unwrap();
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["depths", "elapsed_s", "metric", "order", "peak_rss_bytes", "space"]);
    let pos = |k: &str| raw.find(&format!("\"{k}\":")).unwrap();
    assert!(pos("depths") < pos("elapsed_s") && pos("elapsed_s") < pos("peak_rss_bytes"));
    assert_eq!(v["space"], "corners");
    assert_eq!(v["metric"], "htm");
    assert_eq!(v["order"], 88_179_840u64);
    let depths = v["depths"].as_array().unwrap();
    assert_eq!(depths[0], serde_json::json!({"depth":0,"positions":1,"classes_sym":1,"classes_sym_inv":1}));
    let total: u64 = depths.iter().map(|d| d["positions"].as_u64().unwrap()).sum();
    assert_eq!(total, 88_179_840);
    assert!(v["peak_rss_bytes"].as_u64().unwrap() > 0);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("classes_sym_inv") && text.contains("88,179,840"), "{text}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn max_depth_stops_early_and_says_so() {
    let out = coordinator(&["enumerate", "corners", "--metric", "qtm", "--max-depth", "3"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("stopped early"), "{text}");
    assert!(!text.lines().any(|l| l.trim_start().starts_with("4 ")), "{text}");
}

#[test]
fn bad_input_is_refused_clearly() {
    fails(&coordinator(&["enumerate", "teapot"]), "invalid value 'teapot'");
    fails(&coordinator(&["enumerate", "corners", "--metric", "stm"]), "invalid value 'stm'");
    fails(&coordinator(&["position", "R U X2"]), "bad move `X2` (token 3");
    fails(&coordinator(&["enumerate", "--threads", "0", "corners"]), "--threads");
    // --threads belongs to the commands that compute, after the command's name.
    fails(&coordinator(&["--threads", "2", "enumerate", "corners"]), "--threads goes after the command");
    fails(&coordinator(&["position", "R", "--threads", "2"]), "unexpected argument '--threads'");
    for quiet in ["position", "status", "info", "verify"] {
        let help = coordinator(&[quiet, "--help"]);
        assert!(!String::from_utf8_lossy(&help.stdout).contains("--threads"), "{quiet} --help");
    }
    let dir = scratch("bad");
    let missing = dir.join("no/such/dir/out.json");
    fails(&coordinator(&["enumerate", "corners", "--json", missing.to_str().unwrap()]), "cannot write");
    fails(&coordinator(&["enumerate", "corners", "--json", dir.to_str().unwrap()]), "is a directory");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "no partial file left");
    // A negative depth is refused in words, not taken for an option.
    fails(
        &coordinator(&["enumerate", "corners", "--max-depth", "-1"]),
        "a depth is a whole number, 0 or more",
    );
    // A file that cannot be read says so once; one that is no table names what would be.
    let missing = dir.join("missing.dat");
    let out = coordinator(&["info", path(&missing)]);
    fails(&out, "cannot read");
    assert_eq!(String::from_utf8_lossy(&out.stderr).matches("os error 2").count(), 1);
    let junk = dir.join("junk.dat");
    std::fs::write(&junk, b"not a table").unwrap();
    fails(&coordinator(&["info", path(&junk)]), "cube20src's p2p1h.dat or an nxopt table");
    fails(&coordinator(&["verify", path(&junk)]), "an H48 solver blob");
    // A listener beyond loopback without a token is refused before the index is built.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_coordinator"))
        .args(["enumerate", "edges", "--listen", "0.0.0.0:0"])
        .env_remove("CUBEFARM_TOKEN")
        .output()
        .unwrap();
    fails(&out, "refusing to listen on 0.0.0.0:0 without a token");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("classes in"), "no index was built");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn position_shows_notation_and_words() {
    let out = coordinator(&["position", "R2' U"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("R2 U (2 moves)"), "{text}");
    let one = String::from_utf8(coordinator(&["position", "F"]).stdout).unwrap();
    assert!(one.contains("F (1 move)"), "{one}");
    assert!(text.contains("edge word:"), "{text}");
    let solved = String::from_utf8(coordinator(&["position", ""]).stdout).unwrap();
    assert!(solved.contains("48 of 48"), "{solved}");
}

/// Runs the coordinator with `--json DIR/NAME` added, which must succeed: its stderr and the JSON.
fn run_json(args: &[&str], dir: &std::path::Path, name: &str) -> (String, serde_json::Value) {
    let path = dir.join(name);
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--json", path.to_str().unwrap()]);
    let out = coordinator(&all);
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{log}");
    (log, serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap())
}

fn depths_of(args: &[&str], dir: &std::path::Path, name: &str) -> serde_json::Value {
    run_json(args, dir, name).1["depths"].clone()
}

#[test]
fn results_do_not_depend_on_threads_or_state_backing() {
    let dir = scratch("determinism");
    let state = dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let one = depths_of(&["enumerate", "--threads", "1", "hprime", "--max-depth", "9"], &dir, "a.json");
    let two = depths_of(&["enumerate", "--threads", "2", "hprime", "--max-depth", "9"], &dir, "b.json");
    let on_disk = depths_of(
        &["enumerate", "hprime", "--max-depth", "9", "--state-dir", state.to_str().unwrap()],
        &dir,
        "c.json",
    );
    assert_eq!(one, two);
    assert_eq!(one, on_disk);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn jobs_over_the_memory_limit_are_refused_before_starting() {
    fails(&coordinator(&["enumerate", "edges", "--mem-limit", "1G"]), "over --mem-limit");
    // Spaces whose index is small are checked too: their bit arrays are not.
    fails(&coordinator(&["enumerate", "h", "--mem-limit", "100M"]), "over --mem-limit");
    fails(&coordinator(&["enumerate", "hprime", "--mem-limit", "1K"]), "over --mem-limit");
    fails(&coordinator(&["enumerate", "h", "--metric", "qtm"]), "--metric does not apply");
    fails(&coordinator(&["enumerate", "corners", "--mem-limit", "lots"]), "not a size");
    // A state directory that does not exist is made; a file in its place is refused.
    let file = std::env::temp_dir().join(format!("cubefarm-cli-{}-not-a-dir", std::process::id()));
    std::fs::write(&file, b"").unwrap();
    fails(&coordinator(&["enumerate", "corners", "--state-dir", file.to_str().unwrap()]), "not a directory");
    std::fs::remove_file(&file).unwrap();
    let fresh = std::env::temp_dir().join(format!("cubefarm-cli-{}-fresh/state", std::process::id()));
    ok(&coordinator(&["enumerate", "corners", "--max-depth", "2", "--state-dir", fresh.to_str().unwrap()]));
    assert!(fresh.is_dir());
    std::fs::remove_dir_all(fresh.parent().unwrap()).unwrap();
    // A tiny limit is printed in its own unit, not as 0.0 MiB.
    fails(&coordinator(&["enumerate", "corners", "--mem-limit", "1K"]), "over --mem-limit 1.0 KiB");
    fails(&coordinator(&["enumerate", "corners", "--workers", "0"]), "--workers 0 starts no worker");
    // --index-dir keeps the index a search sends its workers: not for an embedded run, nor for
    // a space whose workers build their own.
    let kept = std::env::temp_dir().join(format!("cubefarm-cli-{}-index", std::process::id()));
    let kept = kept.to_str().unwrap();
    fails(&coordinator(&["enumerate", "corners", "--index-dir", kept]), "--workers N");
    fails(&coordinator(&["enumerate", "h", "--workers", "2", "--index-dir", kept]), "corners or edges");
    // With --listen, --workers 0 means only remote workers: accepted (refused here for its
    // missing token, which is what is wrong with it).
    let out = coordinator(&["enumerate", "corners", "--listen", "0.0.0.0:0", "--workers", "0"]);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("--workers 0"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    fails(&out, "token");
}

#[test]
fn help_names_every_table_kind_the_token_variable_and_the_documented_port() {
    let help = |args: &[&str]| ok(&coordinator(args));
    for text in [help(&["build", "--help"]), help(&["info", "--help"])] {
        assert!(text.contains("nxopt") && text.contains("phase-2"), "{text}");
    }
    assert!(help(&["info", "--help"]).contains("The table file"));
    let worker = std::path::Path::new(env!("CARGO_BIN_EXE_coordinator")).with_file_name("worker");
    let out = std::process::Command::new(worker).arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("CUBEFARM_TOKEN") && text.contains("127.0.0.1:7878"), "{text}");
    assert!(text.contains("--connect-timeout"), "an unreachable coordinator is not retried forever: {text}");
}

#[test]
fn tls_flags_are_checked_before_any_work() {
    let dir = scratch("tls");
    let junk = dir.join("junk.pem");
    std::fs::write(&junk, "not a certificate\n").unwrap();
    let junk = junk.to_str().unwrap();
    let refused = |extra: &[&str], needle: &str| {
        let mut args = vec!["enumerate", "corners", "--listen", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        fails(&coordinator(&args), needle);
    };
    refused(&["--tls-cert", "c.pem"], "--tls-cert needs --tls-key");
    refused(&["--tls-key", "k.pem"], "--tls-key needs --tls-cert");
    refused(
        &["--tls-cert", "/nonexistent/c.pem", "--tls-key", "k.pem"],
        "cannot read certificate /nonexistent/c.pem",
    );
    refused(&["--tls-cert", junk, "--tls-key", junk], "no PEM certificate");
    fails(
        &coordinator(&["enumerate", "corners", "--tls-cert", "c.pem", "--tls-key", "k.pem"]),
        "need --listen",
    );
    fails(&coordinator(&["status", "--connect", "https://127.0.0.1:1"]), "uses TLS: give --ca FILE");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_killed_job_resumes_from_its_journal_with_identical_output() {
    let dir = scratch("resume");
    let state = dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let expected = depths_of(&["enumerate", "hprime"], &dir, "embedded.json");
    let out = dir.join("resumed.json");
    let args =
        ["enumerate", "hprime", "--state-dir", state.to_str().unwrap(), "--json", out.to_str().unwrap()];
    let log = kill_and_run_again(&args, "depth 12:", &out);
    assert!(log.contains("resuming after depth"), "{log}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["depths"], expected);
    // The directory now belongs to that job: another job is refused.
    fails(
        &coordinator(&["enumerate", "corners", "--state-dir", state.to_str().unwrap()]),
        "holds the state of another job",
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_cube_runs_by_products_and_the_same_under_any_thread_count() {
    let dir = scratch("cube");
    let one = depths_of(&["enumerate", "--threads", "1", "cube", "--max-depth", "4"], &dir, "a.json");
    let two = depths_of(&["enumerate", "--threads", "2", "cube", "--max-depth", "4"], &dir, "b.json");
    let workers = depths_of(&["enumerate", "cube", "--max-depth", "4", "--workers", "2"], &dir, "w.json");
    assert_eq!(one, two);
    assert_eq!(one, workers);
    assert_eq!(one.as_array().unwrap().len(), 5);
    // The order needs more than 64 bits and is written exactly.
    let text = std::fs::read_to_string(dir.join("a.json")).unwrap();
    assert!(text.contains(r#""order":43252003274489856000"#), "{text}");
    // Bryan's edges-only report: 89,392 edges positions at 5 quarter turns.
    let edges = depths_of(
        &["enumerate", "edges", "--metric", "qtm", "--max-depth", "5", "--method", "product"],
        &dir,
        "c.json",
    );
    assert_eq!(edges[5]["positions"], 89392);
    std::fs::remove_dir_all(dir).unwrap();
}

/// A memory limit that leaves less than one whole coset per thread cuts the cosets into parts:
/// the counts stay the same, embedded and on workers; a depth whose parts cannot fit is refused.
#[test]
fn cosets_are_cut_into_parts_to_fit_the_memory_limit() {
    let dir = scratch("parts");
    let whole = depths_of(&["enumerate", "--threads", "2", "cube", "--max-depth", "8"], &dir, "whole.json");
    let cut = ["enumerate", "--threads", "16", "cube", "--max-depth", "8", "--mem-limit", "30M"];
    let (log, v) = run_json(&cut, &dir, "cut.json");
    assert!(!log.contains(", 1 part(s) each") && log.contains(" part(s) each"), "{log}");
    assert_eq!(v["depths"], whole);
    let mut on_workers = cut.to_vec();
    on_workers.extend(["--workers", "2"]);
    assert_eq!(depths_of(&on_workers, &dir, "workers.json"), whole);
    fails(
        &coordinator(&["enumerate", "--threads", "16", "cube", "--max-depth", "10", "--mem-limit", "200M"]),
        "per task even with each coset cut into 12 parts",
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// A sample of every task projects the exact count with no error; a smaller one reports its
/// tasks, and the option is refused where it does not apply. The cube's tasks are its 984
/// classes of corner-permutation cosets (the count `coset_classes_count_like_burnside` checks)
/// less the second class of each pair of classes that are each other's inverses: at least half
/// of 984 and fewer than 984.
#[test]
fn a_sample_of_tasks_projects_the_job() {
    let dir = scratch("sample");
    let exact = depths_of(&["enumerate", "cube", "--max-depth", "6"], &dir, "exact.json");
    let truth = exact[6]["positions"].as_f64().unwrap();
    let sample = |count: &str| {
        let (_, v) = run_json(
            &["enumerate", "cube", "--max-depth", "6", "--sample-tasks", count],
            &dir,
            "sample.json",
        );
        assert_eq!(v["sampled"].as_array().unwrap().len().to_string(), count);
        let total = v["positions"]["total"].as_f64().unwrap();
        (v["tasks"].as_u64().unwrap(), total, v["positions"]["error"].as_f64().unwrap())
    };
    let (tasks, total, error) = sample("50");
    assert!((492..984).contains(&tasks), "{tasks} tasks");
    assert!(error > 0.0 && (total - truth).abs() < 3.0 * error, "{total} +- {error} against {truth}");
    let (all, total, error) = sample(&tasks.to_string());
    assert_eq!(all, tasks);
    assert!((total - truth).abs() < 0.5 && error == 0.0, "{total} +- {error} against {truth}");
    fails(&coordinator(&["enumerate", "corners", "--sample-tasks", "5"]), "for the product method");
    fails(
        &coordinator(&["enumerate", "cube", "--max-depth", "6", "--sample-tasks", "1"]),
        &format!("between 2 and {tasks}"),
    );
    fails(
        &coordinator(&["enumerate", "cube", "--max-depth", "6", "--sample-tasks", "5", "--workers", "2"]),
        "runs here",
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn product_method_options_are_checked() {
    fails(&coordinator(&["enumerate", "cube"]), "needs --max-depth");
    fails(&coordinator(&["enumerate", "cube", "--method", "rows"]), "use --method product");
    fails(&coordinator(&["enumerate", "corners", "--method", "product", "--max-depth", "3"]), "not corners");
    fails(&coordinator(&["enumerate", "cube", "--max-depth", "16"]), "storing the positions up to depth 8");
    fails(
        &coordinator(&["enumerate", "cube", "--max-depth", "10", "--mem-limit", "100M"]),
        "over --mem-limit",
    );
    let file = std::env::temp_dir().join(format!("cubefarm-cli-{}-product-not-a-dir", std::process::id()));
    std::fs::write(&file, b"").unwrap();
    fails(
        &coordinator(&["enumerate", "cube", "--max-depth", "3", "--state-dir", file.to_str().unwrap()]),
        "not a directory",
    );
    std::fs::remove_file(file).unwrap();
}

#[test]
fn a_killed_product_job_resumes_from_its_journaled_chunks() {
    let dir = scratch("resume-product");
    let state = dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let job = ["enumerate", "cube", "--max-depth", "8"];
    let expected = depths_of(&job, &dir, "embedded.json");
    let out = dir.join("resumed.json");
    let mut args = job.to_vec();
    args.extend(["--state-dir", state.to_str().unwrap(), "--json", out.to_str().unwrap()]);
    let log = kill_and_run_again(&args, "chunk 3 of 8", &out);
    assert!(log.contains("resuming: "), "{log}");
    assert!(!log.contains("chunk 1 of 8"), "finished chunks are not run again: {log}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["depths"], expected);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_reader_that_stops_early_ends_the_run_quietly() {
    use std::io::{BufRead, BufReader};
    // As `coordinator enumerate corners | head -n 1`: the rest of the output meets a closed pipe.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_coordinator"))
        .args(["enumerate", "corners"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked") && out.status.code() != Some(101), "{err}");
}
