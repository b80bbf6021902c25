//! Outputs that a redesign must not change: a fixed set of commands (the demo on each backend,
//! `bench OP` on each backend, `bench scheme`, `stats`, each reproduction, `params`) run
//! through the binary and compared with what the binary printed before the redesign of the
//! architecture issue (tests/golden/outputs.json, recorded from commit a18d0f7; README.md there
//! says how). JSON: every field the recording has is still there with the same value, times
//! measured on this host aside (new fields may be added). Text: the same lines, numbers and
//! their units aside (timings).

mod common;

use common::{pimhe, stderr};
use serde_json::Value;

/// Fields measured on this host (times, rates, thread counts, machine facts): compared for
/// presence only.
const MEASURED: [&str; 15] = [
    "server_s",
    "wall",
    "times",
    "best",
    "median",
    "mean_s",
    "per_s",
    "throughput",
    "threads",
    "client_",
    "server_wall",
    "encrypt_s",
    "decrypt_s",
    "host_",
    "elapsed",
];

fn measured(path: &str) -> bool {
    let field = path.rsplit('/').next().unwrap_or(path);
    MEASURED.iter().any(|m| field.contains(m))
}

/// Where `old` (a recorded value at `path`) and `new` differ, beyond measured fields.
fn differences(path: &str, old: &Value, new: &Value, found: &mut Vec<String>) {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            for (key, value) in o {
                let at = format!("{path}/{key}");
                match n.get(key) {
                    Some(new_value) => differences(&at, value, new_value, found),
                    None => found.push(format!("{at}: missing")),
                }
            }
        }
        (Value::Array(o), Value::Array(n)) if o.len() == n.len() => {
            for (i, (a, b)) in o.iter().zip(n).enumerate() {
                differences(&format!("{path}[{i}]"), a, b, found);
            }
        }
        _ if measured(path) => {}
        _ if old != new => found.push(format!("{path}: {old} then, {new} now")),
        _ => {}
    }
}

/// A text line with every number and the unit after it masked, and runs of spaces as one.
fn masked(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            while chars.peek().is_some_and(|c| c.is_ascii_digit() || *c == '.' || *c == 'e' || *c == '-') {
                chars.next();
            }
            // A unit of time right after a number is as measured as the number.
            for unit in ["ms", "us", "ns", "s"] {
                let rest: String = chars.clone().skip_while(|c| *c == ' ').take(unit.len() + 1).collect();
                if rest.starts_with(unit) && !rest[unit.len()..].starts_with(|c: char| c.is_alphanumeric()) {
                    while chars.peek() == Some(&' ') {
                        chars.next();
                    }
                    chars.nth(unit.len() - 1);
                    break;
                }
            }
            out.push('#');
        } else if c == ' ' {
            if !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// DRAMatic's published measurements, where the pim crate's loader looks for them (outside
/// the repository, in ../shared/reference, or where `PIMHE_DRAMATIC_CSV` says).
fn dramatic_reference() -> std::path::PathBuf {
    std::env::var_os(pimhe_pim::model::reference::PATH_ENV)
        .map_or_else(|| pimhe_pim::model::reference::DEFAULT_PATH.into(), std::path::PathBuf::from)
}

#[test]
fn the_recorded_commands_print_what_they_printed_before() {
    let recorded: Vec<Value> =
        serde_json::from_str(include_str!("golden/outputs.json")).expect("the recording is JSON");
    let mut failures = Vec::new();
    for case in &recorded {
        let args: Vec<&str> = case["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        if args.contains(&"dramatic") && !dramatic_reference().exists() {
            // Recorded beside the published measurements; without them the rows say so instead.
            eprintln!("skipped {args:?}: no {} (the shared reference data)", dramatic_reference().display());
            continue;
        }
        let output = pimhe(&args);
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
        let now = String::from_utf8_lossy(&output.stdout).into_owned();
        let then = case["stdout"].as_str().unwrap();
        let mut found = Vec::new();
        if case["json"].as_bool().unwrap() {
            let lines = |text: &str| -> Vec<Value> {
                text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
            };
            let (old, new) = (lines(then), lines(&now));
            if old.len() != new.len() {
                found.push(format!("{} JSON lines then, {} now", old.len(), new.len()));
            }
            for (i, (o, n)) in old.iter().zip(&new).enumerate() {
                differences(&format!("line {i}"), o, n, &mut found);
            }
        } else {
            let (old, new): (Vec<String>, Vec<String>) =
                (then.lines().map(masked).collect(), now.lines().map(masked).collect());
            if old != new {
                let first = old.iter().zip(&new).position(|(a, b)| a != b).unwrap_or(old.len().min(new.len()));
                found.push(format!(
                    "line {first}: {:?} then, {:?} now",
                    old.get(first).map(String::as_str).unwrap_or("(none)"),
                    new.get(first).map(String::as_str).unwrap_or("(none)")
                ));
            }
        }
        if !found.is_empty() {
            failures.push(format!("pimhe {}:\n  {}", args.join(" "), found.join("\n  ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_comparison_sees_a_changed_value_and_a_missing_field_but_not_a_timing() {
    let old: Value = serde_json::from_str(r#"{"op":"ntt","wall_s":1.0,"modeled":{"compute_s":2.0}}"#).unwrap();
    let new: Value = serde_json::from_str(r#"{"op":"ntt","wall_s":9.0,"modeled":{"compute_s":3.0},"x":1}"#).unwrap();
    let mut found = Vec::new();
    differences("", &old, &new, &mut found);
    assert_eq!(found, ["/modeled/compute_s: 2.0 then, 3.0 now"]);
    let mut missing = Vec::new();
    differences("", &new, &old, &mut missing);
    assert_eq!(missing, ["/modeled/compute_s: 3.0 then, 2.0 now", "/x: missing"]);
    assert_eq!(masked("  key generation (cpu)      1.786 ms"), " key generation (cpu) #");
    assert_eq!(masked("total 12.5 us energy 0.3 J"), "total # energy # J");
}
