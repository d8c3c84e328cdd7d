//! `coordinator build`, `info` and `verify` on the H48 tables, as a user runs them.

use crate::support::*;

use std::path::Path;

fn info(path: &Path) -> serde_json::Value {
    serde_json::from_str(&ok(&coordinator(&["info", path.to_str().unwrap(), "--json"]))).unwrap()
}

fn numbers(v: &serde_json::Value) -> Vec<u64> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect()
}

/// The 2-bit value of entry i of an h48-layout blob of hN.
fn entry(blob: &[u8], i: u64) -> u8 {
    let main = 1_120_768;
    let (line, slot) = ((i / 254) as usize, (i % 254) as usize);
    blob[main + line * 64 + slot / 4] >> (2 * (slot % 4)) & 3
}

#[test]
fn h48h0_is_the_solvers_own_blob_and_both_layouts_verify() {
    let dir = scratch("h0");
    let own = dir.join("h0.cft");
    let blob = dir.join("h48h0");
    ok(&coordinator(&["build", "h48h0", "--out", own.to_str().unwrap()]));
    ok(&coordinator(&["build", "h48h0", "--out", blob.to_str().unwrap(), "--format", "h48"]));
    // The H48 solver's documentation: the solver's own h48h0, 31,683,944 bytes.
    assert_eq!(std::fs::metadata(&blob).unwrap().len(), 31_683_944);
    assert_eq!(sha256(&blob), "46dcee74f59cf61852ac55acc7e1f5c6ec5acc63e2bf67320ee338466fb34f53");
    // Nothing but the two tables: no temporary file left behind.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    // The own layout against a fresh BFS and a direct search (the solver's layout is read
    // against a fresh BFS below, with one entry changed).
    let report = ok(&coordinator(&["verify", own.to_str().unwrap(), "--samples", "20"]));
    for needle in
        ["every entry equals a fresh BFS (0 differ)", "every line minimum equals a fresh BFS (0 differ)"]
    {
        assert!(report.contains(needle) && !report.contains("FAIL"), "{needle}: {report}");
    }
    let (a, b) = (info(&own), info(&blob));
    assert_eq!((a["format"].as_str(), b["format"].as_str()), (Some("cubefarm"), Some("h48")));
    for v in [&a, &b] {
        assert_eq!(
            (v["kind"].as_str(), v["h"].as_u64(), v["base"].as_u64()),
            (Some("h48"), Some(0), Some(8))
        );
        // The H48 solver's documentation: 3393 x C(12,8) x C(8,4) entries, 254 per 64-byte line.
        assert_eq!(v["entries"], 117_567_450u64);
        assert_eq!(v["bytes"], 117_567_450u64.div_ceil(254) * 64);
        // The H48 solver's documentation: the solver's h0 distribution.
        assert_eq!(numbers(&v["buckets"]), [5_473_562, 34_776_317, 68_566_704, 8_750_867]);
    }
    // Exact depths (cubefarm only), docs/h48-tables.md.
    assert_eq!(
        numbers(&a["depth_counts"]),
        [1, 1, 4, 34, 331, 3612, 41_605, 474_128, 4_953_846, 34_776_317, 68_566_704, 8_749_194, 1673]
    );

    // A flipped bit in a cubefarm file is refused with one clear line; in the solver's blob
    // (no checksums) verify finds that one entry and no other (so it reads the blob's every
    // other entry and line as the fresh BFS made them); a truncated blob is refused.
    let corrupt = dir.join("corrupt");
    for path in [&own, &blob] {
        let mut bad = std::fs::read(path).unwrap();
        let at = bad.len() / 2;
        bad[at] ^= 0x10;
        std::fs::write(&corrupt, &bad).unwrap();
        let out = coordinator(&["verify", corrupt.to_str().unwrap(), "--samples", "0"]);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        if path == &own {
            assert!(err.contains("checksum mismatch") && err.lines().count() == 1, "{err}");
            let out = coordinator(&["info", corrupt.to_str().unwrap()]);
            assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("section h48h0"));
        } else {
            let report = String::from_utf8_lossy(&out.stdout);
            for needle in [
                "FAIL every entry equals a fresh BFS (1 differ)",
                "ok   every line minimum equals a fresh BFS (0 differ)",
                "ok   every line minimum agrees with its line's values (0 differ)",
            ] {
                assert!(report.contains(needle), "{needle}: {report}\n{err}");
            }
            assert_eq!(report.matches("FAIL").count(), 2, "the recount and the one entry: {report}");
        }
    }
    let bytes = std::fs::read(&blob).unwrap();
    std::fs::write(&corrupt, &bytes[..bytes.len() - 64]).unwrap();
    let out = coordinator(&["info", corrupt.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("truncated") && err.lines().count() == 1, "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Distributed over two workers (gRPC on loopback), h0 is the same bytes as embedded.
#[test]
#[ignore = "full tier (scripts/test-full.sh): 14 s; CI checks h0's owned levels against the engine (shared/tests/suite/owned.rs) and h48h1 on two workers"]
fn h48h0_on_two_workers_is_the_embedded_build() {
    let dir = scratch("h0-workers");
    let (own, spread) = (dir.join("h0.cft"), dir.join("spread.cft"));
    ok(&coordinator(&["build", "h48h0", "--out", own.to_str().unwrap()]));
    ok(&coordinator(&["build", "h48h0", "--out", spread.to_str().unwrap(), "--workers", "2"]));
    assert!(std::fs::read(&spread).unwrap() == std::fs::read(&own).unwrap(), "distributed build differs");
    std::fs::remove_dir_all(dir).unwrap();
}

/// h1 and h2 from one search (h3 and more are the same code with one more bit each; h4 and
/// h11 are built by the benchmarks).
#[test]
fn h1_and_h2_come_from_one_search_equal_the_solvers_h1_and_fold_into_each_other() {
    let dir = scratch("h12");
    let d = dir.to_str().unwrap();
    ok(&coordinator(&["build", "h48h1", "h48h2", "--format", "h48", "--out", d]));
    assert_eq!(sha256(&dir.join("h48h1")), H48H1_SHA256, "not the solver's own h48h1");
    // The H48 solver's documentation: the solver's published h1 distribution.
    assert_eq!(
        numbers(&info(&dir.join("h48h1"))["buckets"]),
        [6_012_079, 45_822_302, 142_018_732, 41_281_787]
    );
    // h2 keeps one more orientation bit than h1, the lowest of its kept ones: an h1 entry is
    // the minimum of the two h2 entries it splits into (same base, so the 2-bit values fold
    // the same way).
    let (small, big) = (std::fs::read(dir.join("h48h1")).unwrap(), std::fs::read(dir.join("h48h2")).unwrap());
    let entries = 3393 * 34_650u64;
    let bad =
        (0..entries).filter(|&i| entry(&small, i) != entry(&big, 2 * i).min(entry(&big, 2 * i + 1))).count();
    assert_eq!(bad, 0, "h48h2 folded by pairs differs from h48h1 in {bad} entries");
    let report = ok(&coordinator(&["verify", dir.join("h48h2").to_str().unwrap(), "--samples", "4"]));
    assert!(!report.contains("FAIL"), "{report}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Killed once a level is saved, then once rows are journaled, the build resumes and writes
/// the solver's own bytes.
#[test]
fn a_killed_hn_build_resumes_its_levels_and_rows_with_identical_bytes() {
    let dir = scratch("resume");
    let (state, out) = (dir.join("state"), dir.join("h48h1"));
    let args = [
        "build",
        "h48h1",
        "--format",
        "h48",
        "--out",
        out.to_str().unwrap(),
        "--state-dir",
        state.to_str().unwrap(),
    ];
    kill_at(&args, "depth  8:", &out);
    kill_at(&args, "rows recorded", &out);
    let again = coordinator(&args);
    let log = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{log}");
    assert!(log.contains("loaded from") && log.contains("resuming"), "{log}");
    assert_eq!(sha256(&out), H48H1_SHA256, "the resumed build differs");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn unknown_or_unsupported_builds_are_refused() {
    let dir = scratch("refused");
    let file = dir.join("t");
    for (args, needle) in [
        (vec!["h48h12"], "unknown table"),
        (vec!["h0"], "unknown table"),
        (vec!["h48h1", "h48h4"], "must share a base"),
        (vec!["h48h3", "--mem-limit", "100M"], "over --mem-limit"),
        (vec!["h48h0", "--mem-limit", "1K"], "over --mem-limit"),
        (vec!["h48h1", "h48h2", "--workers", "2"], "one table per run"),
    ] {
        let mut full = vec!["build"];
        full.extend(&args);
        // One table goes to a file, several to a directory.
        let several = args.iter().filter(|a| a.starts_with("h48h")).count() > 1;
        full.extend(["--out", if several { dir.to_str().unwrap() } else { file.to_str().unwrap() }]);
        let r = coordinator(&full);
        assert!(!r.status.success());
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing written");
    let r = coordinator(&["info", dir.join("missing").to_str().unwrap()]);
    assert!(!r.status.success() && String::from_utf8_lossy(&r.stderr).contains("No such file"));
    std::fs::remove_dir_all(dir).unwrap();
}

/// Two in-process workers: the level rows are kept by the worker that made them, and a table
/// row's sources kept by the other worker come as that worker's marks (`Peer.FetchMarks`).
#[test]
fn h48h1_made_on_two_workers_that_trade_marks_is_the_solvers_own() {
    let dir = scratch("h1-workers");
    let out = dir.join("h48h1");
    ok(&coordinator(&[
        "build",
        "h48h1",
        "--format",
        "h48",
        "--out",
        out.to_str().unwrap(),
        "--workers",
        "2",
    ]));
    assert_eq!(sha256(&out), H48H1_SHA256, "the h48h1 made on two workers is not the solver's own");
    let refused = coordinator(&["build", "h48h1", "--out", out.to_str().unwrap(), "--shared-out"]);
    assert!(!refused.status.success() && String::from_utf8_lossy(&refused.stderr).contains("on workers"));
    std::fs::remove_dir_all(dir).unwrap();
}

/// The workers writing the rows into the file themselves (a relative --out: they get the
/// absolute path).
#[test]
#[ignore = "full tier (scripts/test-full.sh): 19 s; CI builds h48h1 on two workers with the rows written here"]
fn h48h1_whose_rows_its_workers_write_is_the_solvers_own() {
    let dir = scratch("h1-shared-out");
    let out = dir.join("h48h1");
    let build = ["build", "h48h1", "--format", "h48", "--out", "h48h1", "--workers", "2", "--shared-out"];
    let made = std::process::Command::new(env!("CARGO_BIN_EXE_coordinator"))
        .args(build)
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    assert_eq!(sha256(&out), H48H1_SHA256, "the h48h1 its workers wrote is not the solver's own");
    std::fs::remove_dir_all(dir).unwrap();
}
