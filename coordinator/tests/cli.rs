//! The `coordinator` binary as a user runs it: outputs, and bad input refused with one clear
//! line, a non-zero exit and no partial file.

use std::path::PathBuf;
use std::process::{Command, Output};

fn coordinator(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_coordinator")).args(args).output().expect("run coordinator")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cubefarm-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn enumerate_corners_writes_the_documented_json() {
    let dir = scratch("json");
    let path = dir.join("corners.json");
    let out = coordinator(&[
        "--threads",
        "2",
        "enumerate",
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

fn assert_refused(args: &[&str], needle: &str) {
    let out = coordinator(args);
    assert!(!out.status.success(), "{args:?} succeeded");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_input_is_refused_clearly() {
    assert_refused(&["enumerate", "teapot"], "invalid value 'teapot'");
    assert_refused(&["enumerate", "corners", "--metric", "stm"], "invalid value 'stm'");
    assert_refused(&["position", "R U X2"], "bad move `X2` (token 3");
    assert_refused(&["--threads", "0", "enumerate", "corners"], "--threads");
    let dir = scratch("bad");
    let missing = dir.join("no/such/dir/out.json");
    assert_refused(&["enumerate", "corners", "--json", missing.to_str().unwrap()], "cannot write");
    assert_refused(&["enumerate", "corners", "--json", dir.to_str().unwrap()], "is a directory");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "no partial file left");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn position_shows_notation_and_words() {
    let out = coordinator(&["position", "R2' U"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("R2 U (2 moves)"), "{text}");
    assert!(text.contains("edge word:"), "{text}");
    let solved = String::from_utf8(coordinator(&["position", ""]).stdout).unwrap();
    assert!(solved.contains("48 of 48"), "{solved}");
}
