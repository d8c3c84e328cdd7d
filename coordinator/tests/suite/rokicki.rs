//! `coordinator build`, `info` and `verify` on Rokicki's tables (cube20src's phase-2 table and
//! nxopt's tables), as a user runs them: both phase-2 layouts, embedded and on workers, an nxopt
//! build embedded, on workers and killed and resumed, all byte-identical, and what is refused.

use crate::support::*;

#[test]
fn phase2_in_both_layouts_holds_the_same_bytes_and_verifies() {
    let dir = scratch("phase2");
    let (raw, own) = (dir.join("p2p1h.dat"), dir.join("phase2.cft"));
    ok(&coordinator(&["build", "phase2", "--out", path(&raw)]));
    ok(&coordinator(&["build", "phase2", "--out", path(&own), "--format", "cubefarm"]));
    let (raw_bytes, own_bytes) = (std::fs::read(&raw).unwrap(), std::fs::read(&own).unwrap());
    // On two workers that own H''s rows: the same bytes.
    let spread = dir.join("spread.dat");
    ok(&coordinator(&["build", "phase2", "--out", path(&spread), "--workers", "2"]));
    assert!(std::fs::read(&spread).unwrap() == raw_bytes, "the distributed build differs");
    // What does not apply is refused, not dropped: no journal; the memory it needs is stated.
    let state = ["build", "phase2", "--out", path(&spread), "--state-dir", path(&dir)];
    fails(&coordinator(&state), "--state-dir is for H48 and nxopt builds");
    fails(
        &coordinator(&["build", "phase2", "--out", path(&spread), "--mem-limit", "10M"]),
        "over --mem-limit",
    );
    // docs/rokicki-tables.md: the table and its checksum, 55,802,884 bytes, no header.
    assert_eq!(raw_bytes.len(), 55_802_884);
    assert!(own_bytes.ends_with(&raw_bytes), "the cubefarm file holds cube20src's bytes");
    let info: serde_json::Value =
        serde_json::from_str(&ok(&coordinator(&["info", path(&own), "--json"]))).unwrap();
    let depths: u64 = info["depth_counts"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(depths, 2768 * 40320);
    for file in [&raw, &own] {
        let report = ok(&coordinator(&["verify", path(file), "--samples", "10"]));
        assert!(!report.contains("FAIL"), "{report}");
    }
    // One byte changed in the cubefarm file's payload: its CRC refuses it.
    let mut damaged = own_bytes;
    let at = damaged.len() - 1000;
    damaged[at] ^= 1;
    std::fs::write(&own, damaged).unwrap();
    fails(&coordinator(&["info", path(&own)]), "checksum mismatch");
    // cube20src's file cut short: it has no header, so its length is what is wrong, and said.
    std::fs::write(&raw, &raw_bytes[..raw_bytes.len() / 2]).unwrap();
    fails(&coordinator(&["verify", path(&raw)]), "has exactly 55,802,884 (truncated?)");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn nxopt_eo1ep1_is_the_same_embedded_on_workers_and_resumed() {
    let dir = scratch("nxopt");
    let (embedded, spread, resumed) = (dir.join("a.dat"), dir.join("b.dat"), dir.join("c.dat"));
    ok(&coordinator(&["build", "nxopt-EO1EP1", "--out", path(&embedded)]));
    let bytes = std::fs::read(&embedded).unwrap();
    // docs/rokicki-tables.md: "NXH", the base (7), then 20,336,640 table bytes.
    assert_eq!(&bytes[..4], b"NXH\x07");
    assert_eq!(bytes.len(), 4 + 20_336_640);
    ok(&coordinator(&["build", "nxopt-eo1ep1", "--out", path(&spread), "--workers", "2"]));
    assert!(std::fs::read(&spread).unwrap() == bytes, "the distributed build differs");

    let state = dir.join("state");
    let args = ["build", "nxopt-eo1ep1", "--out", path(&resumed), "--state-dir", path(&state)];
    kill_at(&args, "depth  6:", &resumed);
    let again = coordinator(&args);
    let log = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success() && log.contains("resuming"), "{log}");
    assert!(std::fs::read(&resumed).unwrap() == bytes, "the resumed build differs");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 4, "no partial file left");

    let report = ok(&coordinator(&["verify", path(&embedded), "--samples", "100"]));
    assert!(!report.contains("FAIL"), "{report}");
    // Cut short: named by its header, with the length it should have.
    std::fs::write(&spread, &bytes[..bytes.len() - 1]).unwrap();
    fails(
        &coordinator(&["info", path(&spread)]),
        "an nxopt table by its header (base 7), but 20,336,643 bytes where nxopt-EO1EP1 has 20,336,644",
    );
    let info: serde_json::Value =
        serde_json::from_str(&ok(&coordinator(&["info", path(&embedded), "--json"]))).unwrap();
    let values: u64 =
        info["summary"]["value_counts"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(values, 9930 * 495 * 16);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn unknown_or_oversized_nxopt_tables_are_refused_up_front() {
    let dir = scratch("refused");
    let out = dir.join("t.dat");
    // An unknown table lists the valid ones.
    fails(&coordinator(&["build", "nxopt-EO4EP1", "--out", path(&out)]), "nxopt-EO3EP4");
    fails(&coordinator(&["build", "nxopt-EO1EP1", "--out", path(&out), "--format", "h48"]), "nxopt's layout");
    // EO3EP4 (4.37 TB of table, 2.6 TB of bit arrays) does not fit in memory; with the bit
    // arrays in a state directory only its factored column maps stay in memory, and the
    // table's disk is refused instead.
    fails(&coordinator(&["build", "nxopt-EO3EP4", "--out", path(&out)]), "memory");
    fails(
        &coordinator(&["build", "nxopt-EO3EP4", "--out", path(&out), "--state-dir", path(&dir.join("s"))]),
        "of disk",
    );
    // A memory limit below what the build needs refuses it.
    fails(&coordinator(&["build", "nxopt-EO1EP1", "--out", path(&out), "--mem-limit", "1M"]), "--mem-limit");
    assert!(!out.exists());
    std::fs::remove_dir_all(dir).unwrap();
}
