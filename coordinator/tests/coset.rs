//! `coordinator coset` as a user runs it (on H', the middle-slice edges alike, whose bit arrays
//! are 16 times smaller than H's): the JSON it documents, sums over several cosets, and bad
//! input refused with one line and no output file.

mod support;

use support::*;

#[test]
fn cosets_are_solved_and_written_as_json() {
    let dir = scratch("json");
    let json = dir.join("cosets.json");
    let list = dir.join("cosets.txt");
    // cube20src's notation in a file, with a comment and a blank line.
    std::fs::write(&list, "# one move out\nR1\n\nR1U1F1  # three\n").unwrap();
    let out = coordinator(&[
        "--threads",
        "2",
        "coset",
        "--slice-edges-alike",
        "--exact-to",
        "4",
        "",
        "--file",
        path(&list),
        "--json",
        path(&json),
    ]);
    let text = ok(&out);
    assert!(text.contains("coset of \"R1U1F1\""), "{text}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let cosets = v["cosets"].as_array().unwrap();
    let reps: Vec<&str> = cosets.iter().map(|c| c["representative"].as_str().unwrap()).collect();
    assert_eq!(reps, ["", "R1", "R1U1F1"]);
    let counts = |c: &serde_json::Value| -> Vec<u64> {
        c["counts"].as_array().unwrap().iter().map(|n| n.as_u64().unwrap()).collect()
    };
    // H holds the solved position and H's ten moves; R's coset R and R' (= R2 R); the coset of
    // R U F nothing nearer than 3 moves.
    assert_eq!(counts(&cosets[0])[..2], [1, 10]);
    assert_eq!(counts(&cosets[1])[..2], [0, 2]);
    assert_eq!(counts(&cosets[2])[..3], [0, 0, 0]);
    for c in cosets {
        assert_eq!(counts(c).len(), 5);
        assert_eq!(counts(c).iter().sum::<u64>() + c["beyond"].as_u64().unwrap(), 1_625_702_400);
        assert!(c["seconds"].as_f64().unwrap() > 0.0);
    }
    let sums: Vec<u64> = (0..5).map(|d| cosets.iter().map(|c| counts(c)[d]).sum()).collect();
    assert_eq!(counts(&v), sums, "the top-level counts are the sums");
}

#[test]
fn bad_coset_requests_are_refused_clearly() {
    let dir = scratch("bad");
    let json = dir.join("out.json");
    let run = |args: &[&str]| {
        let mut all = vec!["coset", "--slice-edges-alike", "--json", path(&json)];
        all.extend_from_slice(args);
        coordinator(&all)
    };
    fails(&run(&["--exact-to", "3", "R U X2"]), "bad move `X2`");
    fails(&run(&["--exact-to", "3", "R", "R' R2"]), "names the coset of \"R\" again");
    fails(&run(&["--exact-to", "3", "F", "U F"]), "names the coset of \"F\" again");
    fails(&run(&["--exact-to", "21", "R"]), "at most 20");
    fails(&run(&["--exact-to", "3"]), "no coset given");
    fails(
        &run(&["--exact-to", "3", "--file", "/nonexistent/cosets.txt"]),
        "cannot read /nonexistent/cosets.txt",
    );
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, "R\nQ2\n").unwrap();
    fails(&run(&["--exact-to", "3", "--file", path(&bad)]), "line 2 of");
    fails(&run(&["--exact-to", "3", "--mem-limit", "100M", "R"]), "memory");
    assert!(!json.exists(), "no JSON after a refusal");
}
