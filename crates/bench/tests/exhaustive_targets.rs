//! A backend added to [`pimhe_bench::target::Target`] (or to `BackendKind`) and not handled is
//! a compile error: no `match` over either type, anywhere in the library, the CLI or the Python
//! package, has a catch-all arm (`_ =>`, or a bare binding) that would quietly absorb a new
//! variant, so the compiler lists every place the new variant must be handled.

mod source_tree;

use pimhe_bench::target::{BackendKind, Target, TargetFlags, TargetRules};
use source_tree::{relative, root, sources};

/// The types whose matches must stay exhaustive, as their variants are written.
const TYPES: [&str; 2] = ["Target::", "BackendKind::"];

/// `source` with comments and the contents of string literals blanked (same length, so
/// offsets and line numbers still hold), so that braces and `=>` in them are not read as code.
fn code_only(source: &str) -> Vec<u8> {
    let bytes = source.as_bytes();
    let mut code = bytes.to_vec();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    code[i] = b' ';
                    i += 1;
                }
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    let width = if bytes[i] == b'\\' { 2 } else { 1 };
                    for j in i..(i + width).min(bytes.len()) {
                        if code[j] != b'\n' {
                            code[j] = b' ';
                        }
                    }
                    i += width;
                }
                i += 1;
            }
            b'\'' if bytes.get(i + 2) == Some(&b'\'') => {
                // A one-character literal such as '{'.
                code[i + 1] = b' ';
                i += 3;
            }
            _ => i += 1,
        }
    }
    code
}

/// The arms' patterns (the text before each top-level `=>`) of every `match` in `code`, with
/// the line each match starts on.
fn matches(code: &[u8]) -> Vec<(usize, Vec<String>)> {
    let text = String::from_utf8_lossy(code);
    let mut found = Vec::new();
    for (start, _) in text.match_indices("match ") {
        let word_start = start == 0 || !(code[start - 1].is_ascii_alphanumeric() || code[start - 1] == b'_');
        let Some(open) = text[start..].find('{').map(|o| start + o) else { continue };
        if !word_start {
            continue;
        }
        // The body: from the brace after the scrutinee to its closing brace.
        let mut depth = 0usize;
        let mut arms = Vec::new();
        let mut pattern_start = open + 1;
        // Whether the arm's body (after its `=>`) is being read: a brace closing back to the
        // body's level ends a block body, while one in a pattern (`Target::Cpu { .. }`) does not.
        let mut in_body = false;
        for (i, &c) in code.iter().enumerate().skip(open) {
            match c {
                b'{' | b'(' | b'[' => depth += 1,
                b'}' | b')' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                    if depth == 1 && c == b'}' && in_body {
                        pattern_start = i + 1;
                        in_body = false;
                    }
                }
                b',' if depth == 1 => {
                    pattern_start = i + 1;
                    in_body = false;
                }
                b'=' if depth == 1 && code.get(i + 1) == Some(&b'>') => {
                    arms.push(text[pattern_start..i].trim().to_string());
                    in_body = true;
                }
                _ => {}
            }
        }
        let line = text[..start].matches('\n').count() + 1;
        found.push((line, arms));
    }
    found
}

/// Whether `pattern` matches whatever is left: `_`, `_ if ...`, or a bare lower-case binding
/// (read on the pattern's last line: an `else { .. }` of the arm before may precede it).
fn catch_all(pattern: &str) -> bool {
    let last = pattern.lines().last().unwrap_or_default();
    let head = last.split(" if ").next().unwrap_or_default().trim();
    head == "_" || (!head.is_empty() && head.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
}

/// Whether `pattern` names a variant of one of [`TYPES`] (`Target::Cpu`, not `UpmemTarget::`).
fn names_a_target(pattern: &str) -> bool {
    TYPES.iter().any(|t| {
        pattern
            .match_indices(t)
            .any(|(at, _)| !pattern[..at].chars().next_back().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_'))
    })
}

/// The matches over [`TYPES`] in the sources under `dirs` that have a catch-all arm, and how
/// many matches over them there are.
fn catch_alls(dirs: &[&str]) -> (Vec<String>, usize) {
    let (mut found, mut examined) = (Vec::new(), 0);
    for dir in dirs {
        for file in sources(&root().join(dir), &[".rs"]) {
            let source = std::fs::read_to_string(&file).unwrap();
            for (line, arms) in matches(&code_only(&source)) {
                if arms.iter().any(|a| names_a_target(a)) {
                    examined += 1;
                    if arms.iter().any(|a| catch_all(a)) {
                        found.push(format!("{}:{line}", relative(&file)));
                    }
                }
            }
        }
    }
    (found, examined)
}

#[test]
fn no_match_over_targets_has_a_catch_all_arm() {
    let (found, examined) = catch_alls(&["crates", "python/src"]);
    // The parser, Target's accessors and run, the demo, the shells' reports: ten today.
    assert!(examined >= 8, "only {examined} matches over Target or BackendKind found: is the reader blind?");
    assert!(found.is_empty(), "matches over Target or BackendKind with a catch-all arm: {found:#?}");
}

#[test]
fn the_reader_finds_a_planted_catch_all_and_passes_exhaustive_matches() {
    let planted = "fn f(t: &Target) -> u8 {\n    // a comment: match x { _ => 0 }\n    let s = \"{ _ => }\";\n    \
                   match t {\n        Target::Cpu { threads } => { 1 }\n        _ => 2,\n    }\n}\n";
    let found = matches(&code_only(planted));
    assert_eq!(found, vec![(4, vec!["Target::Cpu { threads }".to_string(), "_".to_string()])]);
    assert!(catch_all("_") && catch_all("other") && catch_all("_ if x > 1") && !catch_all("Some(_)"));
    assert!(names_a_target("Target::Cpu { .. }") && names_a_target("(BackendKind::Cpu, _)"));
    assert!(!names_a_target("UpmemTarget::Whole"));
    let exhaustive = "match kind { BackendKind::Cpu => a, BackendKind::UpmemEmu | BackendKind::Nearbank => match x { Some(y) => y, None => 0 } }";
    let found = matches(&code_only(exhaustive));
    assert_eq!(found[0].1, ["BackendKind::Cpu", "BackendKind::UpmemEmu | BackendKind::Nearbank"]);
    assert!(!found[0].1.iter().any(|a| catch_all(a)));
    assert_eq!(found[1].1, ["Some(y)", "None"]);
}

/// Every kind `--backend` lists parses to a target of that kind (`Target::kind` is itself one
/// of the exhaustive matches).
#[test]
fn every_kind_parses_to_its_target() {
    for kind in BackendKind::ALL {
        let flags = TargetFlags { backend: Some(kind.name().to_string()), ..TargetFlags::default() };
        let target: Target = flags.parse(&TargetRules::SERVER).unwrap();
        assert_eq!(target.kind(), kind);
    }
}
