//! The README's headline figures are measurements on record: each wall time in its "Headline
//! results" table is a row of `results/BENCHMARKS.md` of the same commit and machine (or, for a
//! program measured outside the benchmark scripts, a figure stated in a file of `results/`). A
//! figure edited by hand, or a row removed from the results, fails here.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace").to_path_buf()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The cells of the markdown table that follows `heading`, header and rule left out.
fn table_after(text: &str, heading: &str) -> Vec<Vec<String>> {
    let start = text.find(heading).unwrap_or_else(|| panic!("no {heading:?}"));
    text[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| l.trim_matches('|').split(" | ").map(|c| c.trim().to_string()).collect())
        .collect()
}

/// The number of seconds a cell starts with ("14.10 s", "869 s (...)"), if any.
fn seconds(cell: &str) -> Option<&str> {
    let (number, rest) = cell.split_once(' ')?;
    (rest.starts_with("s") && number.parse::<f64>().is_ok()).then_some(number)
}

#[test]
fn headline_figures_are_rows_of_the_results() {
    let root = root();
    let readme = read(&root.join("README.md"));
    let benchmarks = read(&root.join("results/BENCHMARKS.md"));
    // date | commit | machine | label | wall | CPU | RSS | command
    let rows: Vec<Vec<String>> = table_after(&benchmarks, "| date |");
    let others: Vec<String> = std::fs::read_dir(root.join("results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| read(&p))
        .collect();
    let headline = table_after(&readme, "## Headline results");
    assert!(headline.len() >= 5, "the headline table has {} rows", headline.len());
    for row in &headline {
        let [job, ours, theirs, machine, commit] = &row[..] else {
            panic!("a headline row of 5 cells: {row:?}")
        };
        let commit = commit.trim_matches('`');
        let measured = |wall: &str| {
            rows.iter().any(|r| r.len() >= 5 && r[1] == commit && r[2] == *machine && r[4] == wall)
        };
        let wall = seconds(ours).unwrap_or_else(|| panic!("{job}: no time in {ours:?}"));
        assert!(measured(wall), "{job}: {wall} s of {commit} on {machine} is not in results/BENCHMARKS.md");
        if let Some(wall) = seconds(theirs) {
            let stated = others.iter().any(|text| text.contains(&format!("{wall} s")));
            assert!(measured(wall) || stated, "{job}: the program's {wall} s is not in results/");
        }
    }
}
