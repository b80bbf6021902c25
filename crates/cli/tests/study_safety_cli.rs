//! The study commands as a careless user and as an attacker would use them, through the
//! binary: the secret key never lands where the server reads, nothing is overwritten without
//! `--force`, and every edited, foreign, duplicated, damaged or out-of-bound file is refused
//! with what is wrong instead of a number printed with exit status 0.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{pimhe, stderr};
use pimhe_schemes::serial::Bundle;

/// `pimhe` with `args`, run in `dir`.
fn pimhe_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pimhe")).args(args).current_dir(dir).output().expect("the pimhe binary runs")
}

fn ok(args: &[&str]) -> serde_json::Value {
    let output = pimhe(args);
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    serde_json::from_slice(&output.stdout).expect("one JSON object")
}

/// Asserts that `output` failed with `code` and a message containing every one of `needles`.
fn refused(output: &Output, code: i32, needles: &[&str]) {
    let message = stderr(output);
    assert_eq!(output.status.code(), Some(code), "{message}");
    for needle in needles {
        assert!(message.contains(needle), "'{needle}' not in: {message}");
    }
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// A fresh directory under the system's temporary one.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pimhe-safety-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A study of the mean of one column `a` (values up to 100, 2 ..= 10 users, N = 4096) in
/// `root/public` and `root/analyst`, and a CSV of `rows` in `root/data.csv`.
struct Study {
    root: PathBuf,
    public: PathBuf,
    analyst: PathBuf,
    data: PathBuf,
}

impl Study {
    fn new(name: &str, rows: &[i64], extra: &[&str]) -> Self {
        let root = scratch(name);
        let (public, analyst, data) = (root.join("public"), root.join("analyst"), root.join("data.csv"));
        let csv: String =
            std::iter::once("a".to_string()).chain(rows.iter().map(i64::to_string)).collect::<Vec<_>>().join("\n");
        std::fs::write(&data, csv).unwrap();
        let mut args =
            vec!["keygen", "--statistic", "mean", "--columns", "a", "--max-value", "100", "--max-users", "10"];
        let (p, a) = (s(&public), s(&analyst));
        args.extend(["--n", "4096", "--public-dir", &p, "--secret-dir", &a, "--json"]);
        args.extend(extra);
        ok(&args);
        Self { root, public, analyst, data }
    }

    fn encrypt(&self, out: &Path) -> Output {
        pimhe(&["encrypt", "--public-dir", &s(&self.public), "--input", &s(&self.data), "--out", &s(out), "--json"])
    }

    fn eval(&self, subs: &Path, out: &Path, extra: &[&str]) -> Output {
        let mut args =
            vec!["eval".to_string(), "--public-dir".into(), s(&self.public), "--submissions".into(), s(subs)];
        args.extend(["--out".into(), s(out), "--json".into()]);
        args.extend(extra.iter().map(|e| e.to_string()));
        pimhe(&args.iter().map(String::as_str).collect::<Vec<_>>())
    }

    fn decrypt(&self, aggregates: &Path) -> Output {
        let (p, a) = (s(&self.public), s(&self.analyst));
        pimhe(&["decrypt", "--public-dir", &p, "--secret-dir", &a, "--input", &s(aggregates), "--json"])
    }

    /// Encrypts the CSV into `root/subs` and adds it up into `root/agg.pimhe`.
    fn submit_and_eval(&self) -> (PathBuf, PathBuf) {
        let (subs, agg) = (self.root.join("subs"), self.root.join("agg.pimhe"));
        assert!(self.encrypt(&subs).status.success());
        let eval = self.eval(&subs, &agg, &[]);
        assert!(eval.status.success(), "{}", stderr(&eval));
        (subs, agg)
    }

    fn secret_file(&self) -> PathBuf {
        self.analyst.join("secret-keys.pimhe")
    }
}

impl Drop for Study {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn keygen_in(dir: &Path, public: &str, secret: &str) -> Output {
    pimhe_in(
        dir,
        &[
            "keygen",
            "--statistic",
            "mean",
            "--columns",
            "a",
            "--max-value",
            "10",
            "--max-users",
            "5",
            "--n",
            "4096",
            "--public-dir",
            public,
            "--secret-dir",
            secret,
        ],
    )
}

#[test]
fn a_secret_directory_that_is_the_public_one_or_inside_or_around_it_is_refused() {
    let root = scratch("aliases");
    let absolute = s(&root.join("X"));
    for (public, secret) in
        [("X", "./X/"), ("X", absolute.as_str()), ("X", "pub1/../X"), ("X", "X/inner"), ("X/inner", "X"), ("./X", "X")]
    {
        std::fs::create_dir_all(root.join("pub1")).unwrap();
        let output = keygen_in(&root, public, secret);
        refused(&output, 2, &["same, or one is inside the other"]);
        assert!(!root.join("X").join("secret-keys.pimhe").exists(), "{public} / {secret}");
        assert!(!root.join("X/inner/secret-keys.pimhe").exists(), "{public} / {secret}");
    }
    std::fs::remove_dir_all(&root).unwrap();
}

#[cfg(unix)]
#[test]
fn a_link_to_the_public_directory_is_followed_before_it_exists() {
    // L points at X, which keygen is about to create as the public directory.
    for secret in ["L/sub", "L"] {
        let root = scratch(&format!("link-{}", secret.replace('/', "-")));
        std::os::unix::fs::symlink("X", root.join("L")).unwrap();
        refused(&keygen_in(&root, "X", secret), 2, &["same, or one is inside the other"]);
        assert!(!root.join("X/sub/secret-keys.pimhe").exists() && !root.join("X/secret-keys.pimhe").exists());
        std::fs::remove_dir_all(&root).unwrap();
    }
}

#[test]
fn a_secret_key_anywhere_under_the_public_directory_is_refused() {
    let study = Study::new("nested-leak", &[1, 2], &["--seed", "3"]);
    let deep = study.public.join("a/b");
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::copy(study.secret_file(), deep.join("secret-keys.pimhe")).unwrap();
    refused(&study.encrypt(&study.root.join("subs")), 2, &["a/b/secret-keys.pimhe is in the public directory"]);
}

#[cfg(unix)]
#[test]
fn a_huge_secret_keys_file_is_refused_not_allocated() {
    let study = Study::new("huge-secret", &[1, 2], &["--seed", "3"]);
    let (_, agg) = study.submit_and_eval();
    std::fs::OpenOptions::new().write(true).open(study.secret_file()).unwrap().set_len(1 << 40).unwrap();
    refused(&study.decrypt(&agg), 2, &["secret-keys.pimhe has 1099511627776 bytes"]);
}

#[cfg(unix)]
#[test]
fn secret_keys_are_the_owners_only_whatever_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let root = scratch("umask");
    let command = format!(
        "umask 000; exec '{}' keygen --statistic mean --columns a --max-value 10 --max-users 5 --n 4096 \
         --public-dir pub --secret-dir sec/deeper",
        env!("CARGO_BIN_EXE_pimhe")
    );
    let output = Command::new("sh").arg("-c").arg(&command).current_dir(&root).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&root.join("sec/deeper/secret-keys.pimhe")), 0o600);
    assert_eq!(mode(&root.join("sec/deeper")), 0o700);
    assert_eq!(mode(&root.join("sec")), 0o700);
    // An existing secret directory open to others is refused, not silently used.
    std::fs::create_dir(root.join("open")).unwrap();
    std::fs::set_permissions(root.join("open"), std::fs::Permissions::from_mode(0o755)).unwrap();
    refused(&keygen_in(&root, "pub2", "open"), 2, &["chmod 700"]);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn nothing_is_overwritten_without_force() {
    let study = Study::new("overwrite", &[1, 2], &["--seed", "3"]);
    let secret = std::fs::read(study.secret_file()).unwrap();
    // keygen over an existing study.
    let again = pimhe(&[
        "keygen",
        "--statistic",
        "mean",
        "--columns",
        "a",
        "--max-value",
        "100",
        "--max-users",
        "10",
        "--n",
        "4096",
        "--public-dir",
        &s(&study.public),
        "--secret-dir",
        &s(&study.analyst),
    ]);
    refused(&again, 2, &["a study is already there", "--force"]);
    assert_eq!(std::fs::read(study.secret_file()).unwrap(), secret);
    // eval --out onto the secret key.
    let subs = study.root.join("subs");
    assert!(study.encrypt(&subs).status.success());
    refused(&study.eval(&subs, &study.secret_file(), &[]), 2, &["already exists", "--force"]);
    assert_eq!(std::fs::read(study.secret_file()).unwrap(), secret);
    // With --force, eval replaces its own output.
    let agg = study.root.join("agg.pimhe");
    assert!(study.eval(&subs, &agg, &[]).status.success());
    refused(&study.eval(&subs, &agg, &[]), 2, &["already exists"]);
    assert!(study.eval(&subs, &agg, &["--force"]).status.success());
}

#[test]
fn no_party_reads_a_public_directory_that_holds_the_secret_key() {
    let study = Study::new("leak", &[1, 2], &["--seed", "3"]);
    let (subs, agg) = study.submit_and_eval();
    std::fs::copy(study.secret_file(), study.public.join("secret-keys.pimhe")).unwrap();
    refused(&study.encrypt(&study.root.join("subs2")), 2, &["secret-keys.pimhe is in the public directory"]);
    refused(&study.eval(&subs, &study.root.join("agg2.pimhe"), &[]), 2, &["is in the public directory"]);
    refused(&study.decrypt(&agg), 2, &["is in the public directory"]);
    std::fs::remove_file(study.public.join("secret-keys.pimhe")).unwrap();
    let p = s(&study.public);
    let same = pimhe(&["decrypt", "--public-dir", &p, "--secret-dir", &p, "--input", &s(&agg)]);
    refused(&same, 2, &["is the public directory"]);
}

/// The aggregates file `agg` rewritten with its user count set to `users` (and a valid
/// checksum: what a server that edits the count would write).
fn restate_users(agg: &Path, users: u64) {
    let bundle = Bundle::from_bytes(&std::fs::read(agg).unwrap()).unwrap();
    let mut rewritten = Bundle::new();
    for name in bundle.names() {
        let bytes = if name == "users" { users.to_le_bytes().to_vec() } else { bundle.get(name).unwrap().to_vec() };
        rewritten.push(name, bytes).unwrap();
    }
    std::fs::write(agg, rewritten.to_bytes()).unwrap();
}

#[test]
fn a_rewritten_user_count_is_refused_not_printed() {
    let study = Study::new("count", &[10, 20, 30], &["--seed", "3"]);
    let (_, agg) = study.submit_and_eval();
    assert_eq!(
        ok(&[
            "decrypt",
            "--public-dir",
            &s(&study.public),
            "--secret-dir",
            &s(&study.analyst),
            "--input",
            &s(&agg),
            "--json"
        ])["estimates"][0]["value"],
        20.0
    );
    restate_users(&agg, 5);
    refused(&study.decrypt(&agg), 1, &["counts 3 users", "states 5"]);
}

#[test]
fn an_edited_study_json_is_refused_by_decrypt() {
    let study = Study::new("edited", &[10, 20], &["--seed", "3", "--decimals", "1"]);
    let (_, agg) = study.submit_and_eval();
    let path = study.public.join("study.json");
    let text = std::fs::read_to_string(&path).unwrap().replace("\"decimals\": 1", "\"decimals\": 2");
    std::fs::write(&path, text).unwrap();
    refused(&study.decrypt(&agg), 2, &["decimals 1 (kept) vs 2 (public)"]);
}

#[test]
fn foreign_and_duplicated_submissions_are_refused_by_name() {
    let study = Study::new("foreign", &[10, 20], &[]);
    let twin = Study::new("foreign-twin", &[10, 20], &[]);
    let subs = study.root.join("subs");
    assert!(study.encrypt(&subs).status.success());
    // Same declaration, another study: its submission is named and refused.
    let twin_subs = twin.root.join("subs");
    assert!(twin.encrypt(&twin_subs).status.success());
    let foreign = std::fs::read_dir(&twin_subs).unwrap().next().unwrap().unwrap().path();
    std::fs::copy(&foreign, subs.join("zz-foreign.pimhe")).unwrap();
    refused(&study.eval(&subs, &study.root.join("agg.pimhe"), &[]), 2, &["zz-foreign.pimhe", "another study"]);
    std::fs::remove_file(subs.join("zz-foreign.pimhe")).unwrap();
    // A byte-identical copy: both files named.
    let original = std::fs::read_dir(&subs).unwrap().next().unwrap().unwrap().path();
    std::fs::copy(&original, subs.join("zz-copy.pimhe")).unwrap();
    refused(&study.eval(&subs, &study.root.join("agg.pimhe"), &[]), 2, &["zz-copy.pimhe", "the same submission"]);
}

#[test]
fn clients_sharing_a_directory_never_overwrite_each_other() {
    let study = Study::new("shared", &[10], &["--min-users", "1"]);
    let subs = study.root.join("subs");
    for _ in 0..2 {
        assert!(study.encrypt(&subs).status.success());
    }
    assert_eq!(std::fs::read_dir(&subs).unwrap().count(), 2);
    let agg = study.root.join("agg.pimhe");
    assert!(study.eval(&subs, &agg, &[]).status.success());
    let result: serde_json::Value = serde_json::from_slice(&study.decrypt(&agg).stdout).unwrap();
    assert_eq!(result["users"], 2);
    assert_eq!(result["estimates"][0]["value"], 10.0);
}

#[cfg(unix)]
#[test]
fn special_files_among_the_submissions_are_refused_without_hanging() {
    let study = Study::new("special", &[10, 20], &["--seed", "3"]);
    let subs = study.root.join("subs");
    assert!(study.encrypt(&subs).status.success());
    std::os::unix::fs::symlink("/dev/zero", subs.join("zero.pimhe")).unwrap();
    refused(&study.eval(&subs, &study.root.join("agg.pimhe"), &[]), 2, &["zero.pimhe", "not a regular file"]);
    std::fs::remove_file(subs.join("zero.pimhe")).unwrap();
    let fifo = subs.join("fifo.pimhe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let start = Instant::now();
    refused(&study.eval(&subs, &study.root.join("agg.pimhe"), &[]), 2, &["fifo.pimhe", "FIFO"]);
    assert!(start.elapsed() < Duration::from_secs(60));
    std::fs::remove_file(&fifo).unwrap();
    // A file larger than any submission of this study is refused before it is read.
    std::fs::write(subs.join("large.pimhe"), vec![0u8; 8 << 20]).unwrap();
    refused(&study.eval(&subs, &study.root.join("agg.pimhe"), &[]), 2, &["large.pimhe", "at most"]);
}

#[test]
fn a_damaged_aggregate_says_damaged() {
    let study = Study::new("damaged", &[10, 20], &["--seed", "3"]);
    let (_, agg) = study.submit_and_eval();
    let mut bytes = std::fs::read(&agg).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x10;
    std::fs::write(&agg, bytes).unwrap();
    refused(&study.decrypt(&agg), 2, &["damaged"]);
}

#[test]
fn a_client_past_the_declared_bound_is_detected_at_decryption() {
    let study = Study::new("bound", &[10, 20], &["--seed", "3"]);
    // One client edits its own copy of the study (max value 100 -> 1000, which keeps the
    // plaintext modulus) and submits 900.
    let copy = study.root.join("client-copy");
    std::fs::create_dir_all(&copy).unwrap();
    for file in ["study.json", "public-keys.pimhe"] {
        std::fs::copy(study.public.join(file), copy.join(file)).unwrap();
    }
    let json = std::fs::read_to_string(copy.join("study.json"))
        .unwrap()
        .replace("\"max_value\": 100,", "\"max_value\": 1000,");
    std::fs::write(copy.join("study.json"), json).unwrap();
    let subs = study.root.join("subs");
    assert!(study.encrypt(&subs).status.success());
    let cheat = study.root.join("cheat.csv");
    std::fs::write(&cheat, "a\n900\n").unwrap();
    let output = pimhe(&["encrypt", "--public-dir", &s(&copy), "--input", &s(&cheat), "--out", &s(&subs)]);
    assert!(output.status.success(), "{}", stderr(&output));
    let agg = study.root.join("agg.pimhe");
    assert!(study.eval(&subs, &agg, &[]).status.success());
    refused(&study.decrypt(&agg), 1, &["beyond", "no statistic is printed"]);
}

#[test]
fn a_seeded_study_warns_in_every_command_and_few_users_are_not_decrypted() {
    let study = Study::new("seeded", &[42], &["--seed", "3"]);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(study.public.join("study.json")).unwrap()).unwrap();
    assert_eq!(json["seeded_keys"], true);
    let subs = study.root.join("subs");
    let encrypt = study.encrypt(&subs);
    assert!(String::from_utf8_lossy(&encrypt.stdout).contains("insecure"));
    let agg = study.root.join("agg.pimhe");
    let eval = study.eval(&subs, &agg, &[]);
    assert!(String::from_utf8_lossy(&eval.stdout).contains("insecure"));
    // One user's mean is that user's value.
    refused(&study.decrypt(&agg), 2, &["hold 1 users", "at least 2"]);
}

#[test]
fn declarations_a_later_step_would_refuse_are_refused_by_keygen() {
    let root = scratch("declarations");
    for (flag, value, needle) in [
        ("--decimals", "10", "0 ..= 9"),
        ("--columns", "", "non-empty"),
        ("--columns", "a,,b", "non-empty"),
        ("--columns", "a,b,a", "named twice"),
        ("--min-users", "0", "min users 0"),
        ("--min-users", "6", "min users 6"),
    ] {
        let mut args = vec!["keygen", "--statistic", "mean", "--max-value", "10", "--max-users", "5", "--n", "4096"];
        args.extend(["--public-dir", "pub", "--secret-dir", "sec", flag, value]);
        if flag != "--columns" {
            args.extend(["--columns", "a"]);
        }
        refused(&pimhe_in(&root, &args), 2, &[needle]);
        assert!(!root.join("sec/secret-keys.pimhe").exists());
    }
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn eval_refuses_dpus_on_the_cpu() {
    let study = Study::new("dpus", &[1, 2], &["--seed", "3"]);
    let subs = study.root.join("subs");
    assert!(study.encrypt(&subs).status.success());
    refused(
        &study.eval(&subs, &study.root.join("agg.pimhe"), &["--dpus", "8"]),
        2,
        &["--dpus applies to --backend upmem-emu"],
    );
}
