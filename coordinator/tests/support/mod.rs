//! What the coordinator's integration tests share: running the binary, scratch directories,
//! and the checks of a run's outcome (success, or one clear refusal).
#![allow(dead_code)] // each test binary uses its own subset

pub mod cluster;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The SHA-256 of h48h1 as the H48 solver's own generator (nissy-core, run outside this
/// project on this project's machine) writes its 61,307,240 bytes (results/h48h1.md).
pub const H48H1_SHA256: &str = "194a9fa4e41ebbd3f6fb773d1575ad0b0c0e248cae4dbcaef811d0d32887bfe2";

/// The SHA-256 of a file, in hex.
pub fn sha256(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    <sha2::Sha256 as sha2::Digest>::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs the `coordinator` binary with `args` to completion.
pub fn coordinator(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_coordinator")).args(args).output().expect("run coordinator")
}

/// A fresh directory for one test, named after the test binary, this process and `name`.
pub fn scratch(name: &str) -> PathBuf {
    let binary =
        std::env::current_exe().ok().and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()));
    let binary = binary.unwrap_or_default();
    let binary = binary.split('-').next().unwrap_or("test");
    let dir = std::env::temp_dir().join(format!("cubefarm-{binary}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Phase 1's distance table (564 MB), made once for this test binary and read by each coset run
/// given `--phase1-table` (0.7 s, where making it is 7 to 9 s). It lives in cargo's scratch
/// directory under the binary's name, made again by each run of the binary: one file, never
/// one left from an older build.
pub fn phase1_table() -> &'static str {
    static TABLE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let binary = std::env::current_exe().ok().and_then(|p| p.file_stem().map(|s| s.to_owned()));
        let mut name = binary.unwrap_or_default();
        name.push(".phase1.tbl");
        let table = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
        let _ = std::fs::remove_file(&table);
        ok(&coordinator(&["coset", "--exact-to", "0", "", "--phase1-table", path(&table)]));
        table
    });
    path(table)
}

/// The path as the `&str` a command line takes.
pub fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// Checks that the run succeeded; returns its stdout.
pub fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// Checks that the run failed with `needle` in its message, without a panic.
pub fn fails(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains(needle), "expected {needle:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Runs the coordinator with `args`, SIGKILLs it once a stderr line contains `marker`, and
/// checks that `out` did not appear under its final name.
pub fn kill_at(args: &[&str], marker: &str, out: &Path) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_coordinator"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let seen = BufReader::new(child.stderr.take().unwrap()).lines().any(|l| l.unwrap().contains(marker));
    assert!(seen, "never saw {marker:?}");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(!out.exists(), "no output under the final name after a kill");
}

/// [`kill_at`], then the same command again to completion; returns that run's stderr.
pub fn kill_and_run_again(args: &[&str], marker: &str, out: &Path) -> String {
    kill_at(args, marker, out);
    let again = coordinator(args);
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    String::from_utf8_lossy(&again.stderr).into_owned()
}
