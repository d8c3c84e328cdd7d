//! `--index-dir` with real processes: a coordinator and a worker process, each with a
//! directory of its own, keep the index and read it the next time; damaged files are refused
//! and made again.

use super::support::cluster::*;
use super::support::scratch;
use std::time::Duration;

/// `--index-dir`: the coordinator keeps the index it built and reads it the next time; a worker
/// process with a directory of its own keeps the index it downloaded and reads it the next
/// time; a damaged file is refused and made again with the same bytes; every run gives the
/// embedded result.
#[test]
fn an_index_kept_in_a_directory_is_read_by_the_next_run_and_a_damaged_one_made_again() {
    let dir = scratch("index-dir");
    let job = ["enumerate", "corners", "--max-depth", "7"];
    let expected = embedded_bytes(&dir, &job);
    let (mine, theirs) = (dir.join("coordinator-index"), dir.join("worker-index"));
    let run = || {
        let extra = ["--listen", "127.0.0.1:0", "--index-dir", mine.to_str().unwrap()];
        let (mut coord, addr, err) = start_job(&dir, &job, &extra);
        let worker =
            worker_at(&format!("http://{addr}"), TOKEN, &dir, &["--index-dir", theirs.to_str().unwrap()]);
        let out = wait_bounded(worker, Duration::from_secs(60));
        let worker_log = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{worker_log}");
        assert!(coord.wait().unwrap().success(), "{}", rest(err));
        assert_eq!(result_bytes(&dir.join("cluster.json")), expected);
        // The coordinator's log before "serving workers on" is not in `err`: what it did with
        // the index is read from the worker's side and from the files.
        worker_log
    };
    let log = run();
    assert!(log.contains("index received from the coordinator") && log.contains("index kept in"), "{log}");
    let (kept, downloaded) = (mine.join("corners.index"), theirs.join("corners.index"));
    let bytes = std::fs::read(&kept).unwrap();
    assert_eq!(std::fs::read(&downloaded).unwrap(), bytes, "the worker keeps what it was sent");
    let modified = |f: &std::path::Path| std::fs::metadata(f).unwrap().modified().unwrap();
    let (when_kept, when_downloaded) = (modified(&kept), modified(&downloaded));
    let log = run();
    assert!(log.contains("index read from") && !log.contains("received from the coordinator"), "{log}");
    assert_eq!(modified(&kept), when_kept, "the coordinator read its file, not built the index again");
    assert_eq!(modified(&downloaded), when_downloaded);
    // Damaged files: both refused, the coordinator's made again with the same bytes, the
    // worker's downloaded again.
    for file in [&kept, &downloaded] {
        let mut bad = bytes.clone();
        bad[bytes.len() / 2] ^= 1;
        std::fs::write(file, bad).unwrap();
    }
    let log = run();
    assert!(log.contains("is refused") && log.contains("index received from the coordinator"), "{log}");
    assert_eq!(std::fs::read(&kept).unwrap(), bytes);
    assert_eq!(std::fs::read(&downloaded).unwrap(), bytes);
    std::fs::remove_dir_all(dir).unwrap();
}
