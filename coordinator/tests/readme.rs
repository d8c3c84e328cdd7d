//! The README's figures are measurements on record: each wall time in its "Headline results"
//! table is a row of `results/BENCHMARKS.md` of the same commit and machine (or, for a program
//! measured outside the benchmark scripts, a figure stated in a file of `results/`), and each
//! build time and peak memory of its H48 and Rokicki tables rounds from a row of that table's
//! build (and of its reference program). A figure edited by hand, or a row removed from the
//! results, fails here.

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

/// Whether `figure` ("7.2", "1,090", "1,486", "10.5 GiB") is `value` (seconds, or MiB) rounded
/// to the figure's own precision.
fn rounds_to(figure: &str, value: f64) -> bool {
    let text = figure.replace(',', "");
    let (number, scale) = match text.split_once(' ') {
        Some((n, "GiB")) => (n.to_string(), 1024.0),
        Some((n, _)) => (n.to_string(), 1.0),
        None => (text.clone(), 1.0),
    };
    let decimals = number.split_once('.').map_or(0, |(_, d)| d.len());
    let Ok(shown) = number.parse::<f64>() else { return false };
    let step = 10f64.powi(-(decimals as i32));
    ((value / scale) - shown).abs() <= step / 2.0 + 1e-9
}

#[test]
fn table_build_figures_round_from_rows_of_the_results() {
    let root = root();
    let readme = read(&root.join("README.md"));
    let benchmarks = read(&root.join("results/BENCHMARKS.md"));
    let rows: Vec<Vec<String>> = table_after(&benchmarks, "| date |");
    // A row labelled `label` (alone, or followed by a space and more) whose wall (and peak RSS,
    // if given) the figures round from.
    let found = |label: &str, wall: &str, rss: Option<&str>| {
        rows.iter().filter(|r| r.len() >= 7).any(|r| {
            let (Ok(w), Ok(m)) = (r[4].parse::<f64>(), r[6].parse::<f64>()) else { return false };
            (r[3] == label || r[3].starts_with(&format!("{label} ")))
                && rounds_to(wall, w)
                && rss.is_none_or(|rss| rounds_to(rss.trim_end_matches(" MiB"), m))
        })
    };
    let h48 = table_after(&readme, "| table | entries | file | build here | peak RSS |");
    assert_eq!(h48.len(), 12, "h48h0 .. h48h11");
    for row in &h48 {
        let (table, build, rss) = (&row[0], &row[3], &row[4]);
        let wall = build.split(" s").next().unwrap();
        assert!(
            found(&format!("build {table}"), wall, Some(rss)),
            "{table}: {build}, {rss} is not in the results"
        );
    }
    let rokicki =
        table_after(&readme, "| table | file | build here | peak RSS | reference program (one thread) |");
    assert_eq!(rokicki.len(), 7);
    for row in &rokicki {
        let (table, build, rss, reference) = (&row[0], &row[2], &row[3], &row[4]);
        let wall = build.trim_end_matches(" s");
        assert!(
            found(&format!("build {table}"), wall, Some(rss)),
            "{table}: {build}, {rss} is not in the results"
        );
        let program = match table.strip_prefix("nxopt-EO") {
            Some(kind) => format!("reference nxopt{}{}", &kind[..1], &kind[3..]),
            None => "reference cube20src phase2prune".to_string(),
        };
        assert!(
            found(&program, reference.trim_end_matches(" s"), None),
            "{table}: the reference's {reference}"
        );
    }
}
