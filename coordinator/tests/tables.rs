//! `coordinator build`, `info` and `verify` on the H48 h0 table, as a user runs them.

use std::path::PathBuf;
use std::process::{Command, Output};

fn coordinator(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_coordinator")).args(args).output().expect("run coordinator")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cubefarm-tables-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn h48h0_builds_in_both_layouts_verifies_and_describes_itself() {
    let dir = scratch("h0");
    let own = dir.join("h0.tbl");
    let blob = dir.join("h0.h48");
    ok(&coordinator(&["build", "h48h0", "--out", own.to_str().unwrap()]));
    ok(&coordinator(&["build", "h48h0", "--out", blob.to_str().unwrap(), "--format", "h48"]));
    // Nothing but the two tables: no temporary file left behind.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    // Distributed over two workers (gRPC on loopback): the same bytes.
    let spread = dir.join("spread.tbl");
    ok(&coordinator(&["build", "h48h0", "--out", spread.to_str().unwrap(), "--workers", "2"]));
    assert!(std::fs::read(&spread).unwrap() == std::fs::read(&own).unwrap(), "distributed build differs");
    std::fs::remove_file(&spread).unwrap();

    let report = ok(&coordinator(&["verify", own.to_str().unwrap(), "--samples", "20"]));
    assert!(!report.contains("FAIL") && report.contains("per-line minima recomputed (0 differ)"), "{report}");

    let info = |path: &PathBuf| -> serde_json::Value {
        serde_json::from_str(&ok(&coordinator(&["info", path.to_str().unwrap(), "--json"]))).unwrap()
    };
    let (a, b) = (info(&own), info(&blob));
    assert_eq!((a["format"].as_str(), b["format"].as_str()), (Some("cubefarm"), Some("h48")));
    for v in [&a, &b] {
        assert_eq!(v["kind"], "h48");
        assert_eq!(v["h"], 0);
        assert_eq!(v["base"], 8);
        // Seed 000: 3393 x C(12,8) x C(8,4) entries, 254 per 64-byte line.
        assert_eq!(v["entries"], 117_567_450u64);
        assert_eq!(v["bytes"], 117_567_450u64.div_ceil(254) * 64);
        let buckets: Vec<u64> =
            v["buckets"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
        assert_eq!(buckets.iter().sum::<u64>(), 117_567_450);
        let depths: Vec<u64> =
            v["depth_counts"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
        assert_eq!(depths.iter().sum::<u64>() + v["deeper"].as_u64().unwrap(), 117_567_450);
        assert_eq!(buckets[0], depths[..=8].iter().sum::<u64>());
    }
    assert_eq!(a["depth_counts"], b["depth_counts"]);

    // The h48 layout: cocsep's 512-byte info block, its data, then the main table 64-byte aligned.
    let bytes = std::fs::read(&blob).unwrap();
    let cocsep_len = 153_090 * 4;
    let main_info = 512 + (cocsep_len as usize).div_ceil(64) * 64;
    assert_eq!(&bytes[..6], b"cocsep");
    assert_eq!(&bytes[main_info..main_info + 5], b"h48h0");
    assert_eq!((main_info + 512) % 64, 0);

    // A flipped bit anywhere in the main table is refused with one clear line.
    for path in [&own, &blob] {
        let mut bad = std::fs::read(path).unwrap();
        let at = bad.len() / 2;
        bad[at] ^= 0x10;
        let corrupt = dir.join("corrupt.tbl");
        std::fs::write(&corrupt, &bad).unwrap();
        for cmd in ["info", "verify"] {
            let out = coordinator(&[cmd, corrupt.to_str().unwrap()]);
            assert!(!out.status.success());
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("checksum mismatch") && err.lines().count() == 1, "{cmd}: {err}");
        }
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn unknown_or_unsupported_tables_are_refused() {
    let dir = scratch("refused");
    let out = dir.join("t.tbl");
    for (table, needle) in [
        ("h48h12", "unknown table"),
        ("h48h3", "exact h11 distances: a search over 240,778,137,600"),
        ("h0", "unknown table"),
    ] {
        // The memory limit makes the refusal of h48h3 independent of the machine's memory.
        let o = coordinator(&["build", table, "--out", out.to_str().unwrap(), "--mem-limit", "8G"]);
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{table}: {err}");
    }
    assert!(!out.exists());
    let o = coordinator(&["info", dir.join("missing").to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn verify_of_an_h48h1_file_catches_entries_a_direct_search_contradicts() {
    // No h1 table can be built on a 24 GiB machine; a well-formed one whose every entry claims
    // "at least base + 3" passes the structural checks and must fail on the sampled entries.
    use shared::h48::table::{line_count, LINE_BYTES};
    use shared::h48::{small_sections, write_tables, Format, H48Coords, Section, SectionKind, ESEP};
    let dir = scratch("h1");
    let path = dir.join("h1.tbl");
    let coords = H48Coords::default();
    let rows = coords.cocsep_coord().classes().class_count() as u64;
    let entries = rows * ESEP as u64 * 2;
    let base = 8u8;
    let mut data = vec![0xFFu8; line_count(entries) as usize * LINE_BYTES];
    for line in data.chunks_mut(LINE_BYTES) {
        line[LINE_BYTES - 1] = 0x0F | (base + 3) << 4;
    }
    let main = Section {
        kind: SectionKind::H48,
        h: 1,
        base,
        entries,
        depth_counts: Vec::new(),
        deeper: entries,
        buckets: Some([0, 0, 0, entries]),
        data,
    };
    let [cocsep, eoesep] = small_sections(&coords).unwrap();
    let mut bytes = Vec::new();
    write_tables(&mut bytes, &[cocsep, main, eoesep], Format::Cubefarm).unwrap();
    std::fs::write(&path, bytes).unwrap();

    let info: serde_json::Value =
        serde_json::from_str(&ok(&coordinator(&["info", path.to_str().unwrap(), "--json"]))).unwrap();
    assert_eq!((info["h"].as_u64(), info["base"].as_u64()), (Some(1), Some(8)), "{info}");
    let out = coordinator(&["verify", path.to_str().unwrap(), "--samples", "4"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{report}");
    for passed in ["ok   2-bit values agree", "ok   per-line minima agree with the 2-bit values (0 differ)"] {
        assert!(report.contains(passed), "{passed}: {report}");
    }
    assert!(report.contains("FAIL 4 random entries against a direct search"), "{report}");
    std::fs::remove_dir_all(dir).unwrap();
}
