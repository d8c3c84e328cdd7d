//! ARCHITECTURE.md states which module may import which; this test reads it and checks the code:
//! every `crate::` path in each `shared` module against the table's "may import" column, the
//! coordinator's modules against the order of its chain, the project crates each crate depends
//! on, and where tonic's types may appear. A change that breaks a stated layer fails here, and
//! so does a statement that no longer matches the code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace").to_path_buf()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The Rust files of module `name` under `src`: `name.rs` and everything under `name/`.
fn module_files(src: &Path, name: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let file = src.join(format!("{name}.rs"));
    if file.exists() {
        files.push(file);
    }
    let mut dirs = vec![src.join(name)];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.map(|e| e.expect("a directory entry").path()) {
            if entry.is_dir() {
                dirs.push(entry);
            } else if entry.extension().is_some_and(|e| e == "rs") {
                files.push(entry);
            }
        }
    }
    assert!(!files.is_empty(), "module {name} has no file under {}", src.display());
    files
}

/// Code without comments: each line up to its `//`.
fn code(text: &str) -> String {
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The top-level modules named by `crate::NAME` in `files`, other than `own`.
fn crate_imports(files: &[PathBuf], own: &str) -> BTreeMap<String, PathBuf> {
    let mut found = BTreeMap::new();
    for file in files {
        let text = code(&read(file));
        for (at, _) in text.match_indices("crate::") {
            let name: String =
                text[at + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            assert!(!name.is_empty(), "{}: a grouped `crate::{{..}}` import; name each path", file.display());
            if name != own {
                found.entry(name).or_insert_with(|| file.clone());
            }
        }
    }
    found
}

/// The backquoted names in `text`.
fn quoted(text: &str) -> Vec<String> {
    text.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

/// The `shared` table of ARCHITECTURE.md: each module with the modules it may import.
fn shared_table(doc: &str) -> Vec<(String, BTreeSet<String>)> {
    let start = doc.find("**`shared/`**").expect("the shared section");
    let mut rows = Vec::new();
    let mut above = BTreeSet::new();
    for line in doc[start..].lines().skip_while(|l| !l.starts_with('|')).take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (names, may) = (quoted(cells[1]), cells[3]);
        if names.is_empty() {
            continue; // the header and its rule
        }
        let allowed: BTreeSet<String> = if may == "nothing" {
            BTreeSet::new()
        } else if may.starts_with("everything above") {
            above.clone()
        } else {
            quoted(may).into_iter().collect()
        };
        for name in &names {
            rows.push((name.clone(), allowed.clone()));
        }
        above.extend(names);
    }
    rows
}

#[test]
fn shared_modules_import_only_what_architecture_md_allows() {
    let root = root();
    let doc = read(&root.join("ARCHITECTURE.md"));
    let table = shared_table(&doc);
    let src = root.join("shared/src");
    let declared: BTreeSet<String> = read(&src.join("lib.rs"))
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod ").map(|m| m.trim_end_matches(';').to_string()))
        .collect();
    let listed: BTreeSet<String> = table.iter().map(|(m, _)| m.clone()).collect();
    assert_eq!(listed.len(), table.len(), "a module is listed twice");
    assert_eq!(declared, listed, "the modules of shared/src/lib.rs and ARCHITECTURE.md's table differ");
    let mut wrong = Vec::new();
    for (module, allowed) in &table {
        for (import, file) in crate_imports(&module_files(&src, module), module) {
            if !allowed.contains(&import) {
                wrong.push(format!("{module} imports {import} ({})", file.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "imports ARCHITECTURE.md does not allow:\n{}", wrong.join("\n"));
}

#[test]
fn coordinator_modules_import_only_downwards() {
    let root = root();
    let src = root.join("coordinator/src");
    // The chain of ARCHITECTURE.md, top first; the support modules share the bottom layer and do
    // not import each other.
    let chain: [&[&str]; 6] = [
        &["cli"],
        &["jobs"],
        &["config"],
        &["driver"],
        &["cluster"],
        &["journal", "progress", "resources", "output", "position"],
    ];
    let doc = read(&root.join("ARCHITECTURE.md"));
    let stated = "`main` -> `cli` (clap; turns arguments into configs) -> `jobs`";
    assert!(doc.contains(stated), "ARCHITECTURE.md no longer states the chain this test checks");
    let layer_of = |name: &str| chain.iter().position(|layer| layer.contains(&name));
    let mut wrong = Vec::new();
    for (i, layer) in chain.iter().enumerate() {
        for module in *layer {
            for (import, file) in crate_imports(&module_files(&src, module), module) {
                match layer_of(&import) {
                    Some(j) if j > i => {}
                    _ => wrong.push(format!("{module} imports {import} ({})", file.display())),
                }
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the chain:\n{}", wrong.join("\n"));
}

#[test]
fn crates_depend_only_downwards_and_tonic_stays_in_the_service() {
    let root = root();
    let project_deps = |krate: &str| -> BTreeSet<String> {
        read(&root.join(krate).join("Cargo.toml"))
            .lines()
            .filter_map(|l| {
                let name = l.split(['.', '=', ' ']).next().unwrap_or("");
                ["shared", "worker", "cubefarm-proto"].contains(&name).then(|| name.to_string())
            })
            .collect()
    };
    let set = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(project_deps("proto"), set(&[]));
    assert_eq!(project_deps("shared"), set(&[]));
    assert_eq!(project_deps("worker"), set(&["cubefarm-proto", "shared"]));
    assert_eq!(project_deps("coordinator"), set(&["cubefarm-proto", "shared", "worker"]));
    // The coordinator speaks tonic's types in its gRPC service only.
    let src = root.join("coordinator/src");
    let mut speaking = Vec::new();
    for module in ["cli", "config", "jobs", "driver", "cluster", "journal", "progress", "resources", "output"]
    {
        for file in module_files(&src, module) {
            if code(&read(&file)).contains("tonic::") {
                speaking.push(file.strip_prefix(&src).expect("under src").display().to_string());
            }
        }
    }
    assert_eq!(speaking, ["cluster/service.rs"], "tonic's types outside the service");
}

/// The modules side by side in `dir` (module path `path`, `crate::`-relative, empty at the
/// root): each file `x.rs` or directory `x/`, with the names of its siblings it imports (by
/// `super::x` from its files, `super::super::x` from a directory's files, or `crate::path::x`).
fn sibling_imports(dir: &Path, path: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut nodes: BTreeMap<String, Vec<(PathBuf, usize)>> = BTreeMap::new();
    for entry in std::fs::read_dir(dir).expect("a source directory").map(|e| e.expect("an entry").path()) {
        let name = entry.file_stem().and_then(|s| s.to_str()).unwrap_or("").to_string();
        if entry.is_dir() {
            let files = module_files(dir, &name).into_iter().map(|f| {
                let depth = f.strip_prefix(dir.join(&name)).map_or(0, |p| p.components().count());
                // x.rs and x/mod.rs speak of the siblings as `super::`, x/y.rs and x/y/mod.rs as
                // `super::super::`, and so on down.
                let hops = match (depth, f.file_name().is_some_and(|n| n == "mod.rs")) {
                    (0, _) => 1,
                    (d, true) => d,
                    (d, false) => d + 1,
                };
                (f, hops)
            });
            let files: Vec<(PathBuf, usize)> = files.collect();
            nodes.entry(name).or_default().extend(files);
        } else if entry.extension().is_some_and(|e| e == "rs")
            && !["mod", "lib", "main"].contains(&name.as_str())
        {
            nodes.entry(name).or_default().push((entry, 1));
        }
    }
    let names: BTreeSet<String> = nodes.keys().cloned().collect();
    let ident =
        |t: &str| t.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
    nodes
        .iter()
        .map(|(name, files)| {
            let mut imports = BTreeSet::new();
            for (file, hops) in files {
                let text = code(&read(file));
                let prefixes = [
                    "super::".repeat(*hops),
                    format!("crate::{path}{}", if path.is_empty() { "" } else { "::" }),
                ];
                for prefix in prefixes {
                    for (at, _) in text.match_indices(&prefix) {
                        let found = ident(&text[at + prefix.len()..]);
                        if names.contains(&found) && found != *name {
                            imports.insert(found);
                        }
                    }
                }
            }
            (name.clone(), imports)
        })
        .collect()
}

#[test]
fn no_two_modules_side_by_side_import_each_other() {
    let root = root();
    let mut circles = Vec::new();
    for krate in ["shared", "coordinator", "worker", "proto"] {
        let src = root.join(krate).join("src");
        let mut dirs = vec![(src.clone(), String::new())];
        while let Some((dir, path)) = dirs.pop() {
            let imports = sibling_imports(&dir, &path);
            for (a, to) in &imports {
                for b in to.iter().filter(|b| a < *b) {
                    if imports.get(b).is_some_and(|back| back.contains(a)) {
                        circles.push(format!(
                            "{krate}: {} and {b} import each other",
                            if path.is_empty() { a.clone() } else { format!("{path}::{a}") }
                        ));
                    }
                }
            }
            for entry in std::fs::read_dir(&dir).expect("a directory").map(|e| e.expect("an entry").path()) {
                if entry.is_dir() {
                    let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
                    let sub = if path.is_empty() { name } else { format!("{path}::{name}") };
                    dirs.push((entry, sub));
                }
            }
        }
    }
    assert!(circles.is_empty(), "import circles:\n{}", circles.join("\n"));
}
