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

/// Each run in the README's table of spaces ("complete run": a wall time in s or min and a peak
/// memory, with the metric or depth in brackets when it is not the default) rounds from one row
/// of `results/BENCHMARKS.md` whose command enumerated that space in one process.
#[test]
fn space_table_figures_round_from_rows_of_the_results() {
    let root = root();
    let readme = read(&root.join("README.md"));
    let benchmarks = read(&root.join("results/BENCHMARKS.md"));
    let rows: Vec<Vec<String>> = table_after(&benchmarks, "| date |");
    let spaces = table_after(&readme, "| SPACE | positions |");
    assert_eq!(spaces.len(), 5, "corners, edges, h, hprime, cube");
    for row in &spaces {
        let space = row[0].split('`').nth(1).expect("the space in backticks");
        for run in row[3].split("; ") {
            let (figures, note) = match run.split_once(" (") {
                Some((f, n)) => (f, n.trim_end_matches(')')),
                None => (run, ""),
            };
            let (time, memory) = figures.split_once(", ").unwrap_or_else(|| panic!("{space}: {run:?}"));
            let minutes = time.ends_with(" min");
            let time = time.trim_end_matches(" min").trim_end_matches(" s");
            let depth = note.split_once("depth ").map(|(_, d)| format!("--max-depth {d}"));
            let found = rows.iter().filter(|r| r.len() >= 8).any(|r| {
                let command = r[7].trim_matches('`');
                let (Ok(wall), Ok(rss)) = (r[4].parse::<f64>(), r[6].parse::<f64>()) else { return false };
                let ours = command.contains(&format!("coordinator enumerate {space} "))
                    && !command.contains("--listen")
                    && !command.contains("--workers")
                    && command.contains("--metric qtm") == note.contains("QTM")
                    && depth.as_ref().is_none_or(|d| command.contains(d.as_str()));
                ours && rounds_to(time, if minutes { wall / 60.0 } else { wall }) && rounds_to(memory, rss)
            });
            assert!(found, "{space}: {run:?} is not a row of results/BENCHMARKS.md");
        }
    }
}

/// A time the `--help` pages quote as measured ("an exact run to 16 takes 68 s") is the wall of
/// a row of `results/BENCHMARKS.md` for that run, as the README's is.
#[test]
fn help_figures_are_rows_of_the_results() {
    let help =
        std::process::Command::new(env!("CARGO_BIN_EXE_coordinator")).args(["coset", "--help"]).output();
    let help = String::from_utf8(help.expect("coordinator runs").stdout).expect("text");
    let text = help.split_whitespace().collect::<Vec<_>>().join(" ");
    let (_, rest) = text.split_once("an exact run to 16 takes ").expect("the coset help quotes a time");
    let wall = rest.split_once(" s").expect("seconds").0;
    let readme = read(&root().join("README.md"));
    assert!(
        readme.contains(&format!("of one coset to 16 takes {wall} s")),
        "README and --help agree on {wall} s"
    );
    let benchmarks = read(&root().join("results/BENCHMARKS.md"));
    let rows = table_after(&benchmarks, "| date |");
    let found = rows.iter().filter(|r| r.len() >= 5).any(|r| {
        r[3].starts_with("coset --exact-to 16 ") && r[4].parse::<f64>().is_ok_and(|w| rounds_to(wall, w))
    });
    assert!(found, "{wall} s for an exact run to 16 is not a row of results/BENCHMARKS.md");
}
