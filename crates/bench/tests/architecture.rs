//! The shape the code keeps, checked on its sources (the architecture issue's targets): no
//! backend name compared as a string outside the one parser, no import circle between the files
//! of the shells' library and of the CLI, and no source file over 800 lines.

mod source_tree;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use source_tree::{relative, root, sources};

/// Most lines a source file may have.
const MAX_LINES: usize = 800;

#[test]
fn no_source_file_is_over_800_lines() {
    let mut long = Vec::new();
    for dir in ["crates", "python/src", "python/pimhe", "python/tests", "dpu", "bench"] {
        for file in sources(&root().join(dir), &[".rs", ".py", ".c", ".h"]) {
            let lines = std::fs::read_to_string(&file).unwrap().lines().count();
            if lines > MAX_LINES {
                long.push(format!("{} ({lines} lines)", relative(&file)));
            }
        }
    }
    assert!(long.is_empty(), "files over {MAX_LINES} lines: {long:#?}");
}

/// The backend names, as `--backend` takes them.
const BACKEND_NAMES: [&str; 3] = ["cpu", "upmem-emu", "nearbank"];

/// The one place that compares them: `BackendKind::parse` and `BackendKind::name`.
const THE_PARSER: &str = "crates/bench/src/target/mod.rs";

#[test]
fn backend_names_are_compared_only_by_the_one_parser() {
    let mut found = Vec::new();
    for dir in ["crates", "python/src"] {
        for file in sources(&root().join(dir), &[".rs"]) {
            let name = relative(&file);
            if name == THE_PARSER || name.contains("/tests/") {
                continue;
            }
            for (number, line) in std::fs::read_to_string(&file).unwrap().lines().enumerate() {
                let code = line.split("//").next().unwrap_or_default();
                for backend in BACKEND_NAMES {
                    let quoted = format!("\"{backend}\"");
                    let compared =
                        [format!("== {quoted}"), format!("!= {quoted}"), format!("{quoted} =>"), format!("{quoted} |")]
                            .iter()
                            .any(|pattern| code.contains(pattern.as_str()));
                    if compared {
                        found.push(format!("{name}:{}: {}", number + 1, line.trim()));
                    }
                }
            }
        }
    }
    assert!(found.is_empty(), "backend names compared outside {THE_PARSER}: {found:#?}");
}

/// A crate's modules: its `src` directory, and each file's module path (`measure::kernels`).
struct Modules {
    src: PathBuf,
    files: BTreeMap<Vec<String>, PathBuf>,
}

impl Modules {
    fn of(krate: &str) -> Self {
        let src = root().join(krate).join("src");
        let mut files = BTreeMap::new();
        for file in sources(&src, &[".rs"]) {
            let rel = file.strip_prefix(&src).unwrap().with_extension("");
            let mut path: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
            if matches!(path.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                path.pop();
            }
            files.insert(path, file);
        }
        Self { src, files }
    }

    /// The file that defines the deepest module of `path` (the item's own module or an
    /// ancestor).
    fn file_of(&self, path: &[String]) -> Option<&PathBuf> {
        (0..=path.len()).rev().find_map(|k| self.files.get(&path[..k]))
    }

    /// Which files each file uses: every `crate::`, `super::` and `self::` path in its code
    /// (a `mod x;` declaration is not a use).
    fn uses(&self) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
        let mut graph = BTreeMap::new();
        for (module, file) in &self.files {
            let text = std::fs::read_to_string(file).unwrap();
            // Tests (a cfg(test) module at the end of a file) may use anything.
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default();
            let mut targets = BTreeSet::new();
            for line in code.lines().map(|l| l.split("//").next().unwrap_or_default()) {
                for path in paths_in(line) {
                    let absolute = resolve(module, &path);
                    if let Some(target) = absolute.and_then(|p| self.file_of(&p)) {
                        if target != file {
                            targets.insert(target.clone());
                        }
                    }
                }
            }
            graph.insert(file.clone(), targets);
        }
        graph
    }
}

/// The paths of `line` that start with `crate::`, `super::` or `self::`, split at `::`, with
/// a braced group `a::{b, c::d}` expanded.
fn paths_in(line: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        let mut rest = line;
        while let Some(at) = rest.find(start) {
            let before = rest[..at].chars().last();
            rest = &rest[at..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                rest = &rest[start.len()..];
                continue;
            }
            let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(rest.len());
            let path: Vec<String> = rest[..end].split("::").filter(|s| !s.is_empty()).map(str::to_string).collect();
            let mut expanded = vec![path.clone()];
            if rest[end..].starts_with('{') {
                let group = rest[end + 1..].split('}').next().unwrap_or_default();
                expanded = group
                    .split(',')
                    .map(|item| item.trim().split(" as ").next().unwrap_or_default())
                    .filter(|item| !item.is_empty())
                    .map(|item| path.iter().cloned().chain(item.split("::").map(str::to_string)).collect())
                    .collect();
            }
            paths.extend(expanded);
            rest = &rest[end..];
        }
    }
    paths
}

/// `path` (as written in the file of `module`) as an absolute module path.
fn resolve(module: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut base: Vec<String> = module.to_vec();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// A cycle of `graph`, if it has one.
fn cycle(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Option<Vec<PathBuf>> {
    fn visit(
        node: &PathBuf,
        graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        state: &mut BTreeMap<PathBuf, bool>,
        stack: &mut Vec<PathBuf>,
    ) -> Option<Vec<PathBuf>> {
        match state.get(node) {
            Some(true) => return None,
            Some(false) => {
                let start = stack.iter().position(|n| n == node).unwrap_or(0);
                return Some(stack[start..].to_vec());
            }
            None => {}
        }
        state.insert(node.clone(), false);
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, state, stack) {
                return Some(found);
            }
        }
        stack.pop();
        state.insert(node.clone(), true);
        None
    }
    let mut state = BTreeMap::new();
    graph.keys().find_map(|node| visit(node, graph, &mut state, &mut Vec::new()))
}

#[test]
fn no_two_files_of_the_bench_library_or_the_cli_import_each_other_round_a_circle() {
    for krate in ["crates/bench", "crates/cli"] {
        let modules = Modules::of(krate);
        assert!(modules.files.len() > 3, "{krate}: no sources found under {}", modules.src.display());
        if let Some(found) = cycle(&modules.uses()) {
            let names: Vec<String> = found.iter().map(|p| relative(p)).collect();
            panic!("{krate}: an import circle: {}", names.join(" -> "));
        }
    }
}

#[test]
fn the_circle_finder_finds_a_planted_circle_and_reads_grouped_paths() {
    let (a, b, c) = (PathBuf::from("a"), PathBuf::from("b"), PathBuf::from("c"));
    let mut graph =
        BTreeMap::from([(a.clone(), BTreeSet::from([b.clone()])), (b.clone(), BTreeSet::from([c.clone()]))]);
    graph.insert(c.clone(), BTreeSet::new());
    assert_eq!(cycle(&graph), None);
    graph.insert(c.clone(), BTreeSet::from([a.clone()]));
    assert_eq!(cycle(&graph), Some(vec![a, b, c]));
    let paths = paths_in("use crate::target::{self, Target, upmem::PimSettings as P};");
    assert_eq!(paths.len(), 3, "{paths:?}");
    assert_eq!(paths[2], ["crate", "target", "upmem", "PimSettings"]);
}
