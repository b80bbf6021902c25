//! Every paper's reproduction behind the common trait: each row has every common field with
//! consistent values (the ratio recomputed, the verdict recomputed from it), the published
//! figures are the papers' (transcribed here from the seeds' text and the reference CSV, not
//! from the modules' constants), and the by-name entry returns what the trait's printer prints.

use std::collections::HashSet;
use std::path::PathBuf;

use pimhe_bench::reproduce::anaheim::{Anaheim, AnaheimConfig};
use pimhe_bench::reproduce::ceram::{Ceram, CeramConfig};
use pimhe_bench::reproduce::dramatic::{Dramatic, DramaticConfig};
use pimhe_bench::reproduce::{by_name, report_json, report_text, with_comparison, Reproduction};
use pimhe_bench::NoProgress;
use serde_json::Value;

/// Runs `R` and returns its comparison rows as the JSON printer writes them, after checking
/// the fields every row of every paper has.
fn rows_of<R: Reproduction>(config: &R::Config) -> (R::Report, Vec<Value>) {
    let report = R::run(config, &NoProgress).unwrap();
    let json: Value = serde_json::from_str(&report_json::<R>(&report).unwrap()).unwrap();
    assert_eq!((json["paper"].as_str(), json["citation"].as_str()), (Some(R::NAME), Some(R::CITATION)));
    let rows = json["comparison"].as_array().unwrap().clone();
    assert!(!rows.is_empty(), "{} has rows", R::NAME);
    let mut ids = HashSet::new();
    for row in &rows {
        assert!(ids.insert(row["id"].as_str().unwrap().to_string()), "ids are unique: {row}");
        for text in ["quantity", "unit", "source"] {
            assert!(!row[text].as_str().unwrap().is_empty(), "{text} in {row}");
        }
        for figure in ["published", "ours", "ratio"] {
            assert!(row[figure].is_null() || row[figure].is_f64(), "{figure} in {row}");
        }
        match row["basis"].as_str() {
            Some("modeled") => assert!(row["model"].as_str().unwrap().contains("(modeled)"), "{row}"),
            Some("measured") => assert!(!row["machine"].as_str().unwrap().is_empty(), "{row}"),
            other => panic!("basis {other:?} in {row}"),
        }
        let (published, ours) = (row["published"].as_f64(), row["ours"].as_f64());
        let ratio = ours.zip(published.filter(|&p| p != 0.0)).map(|(o, p)| o / p);
        // Recomputed from the printed figures.
        match (row["ratio"].as_f64(), ratio) {
            (Some(printed), Some(ratio)) => assert!(close(printed, ratio), "{row}"),
            (printed, ratio) => assert_eq!(printed, ratio, "{row}"),
        }
        let why_not = row["why_not"].as_str();
        match row["verdict"].as_str() {
            Some(verdict @ ("within" | "outside")) => {
                let (ratio, tolerance) = (ratio.unwrap(), row["tolerance"].as_f64().unwrap());
                assert_eq!(verdict == "within", (ratio - 1.0).abs() <= tolerance + 1e-12, "{row}");
                assert_eq!(why_not.is_some(), verdict == "outside", "{row}");
            }
            Some("not_judged") => assert!(!why_not.unwrap().is_empty(), "{row}"),
            other => panic!("verdict {other:?} in {row}"),
        }
    }
    (report, rows)
}

/// Equal to the last bit or so: serde_json's parsing of a printed float may differ by an ulp.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs()
}

fn row<'a>(rows: &'a [Value], id: &str) -> &'a Value {
    rows.iter().find(|r| r["id"] == id).unwrap_or_else(|| panic!("no row {id}"))
}

fn shared(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared").join(path)
}

#[test]
fn dramatic_rows_carry_the_csv_and_the_section5_text() {
    let config = DramaticConfig {
        rows: Some("t2-ntt-1,t2-ntt-64,t3-bgv-mul-1024,s5-ntt-4096-dummy".into()),
        max_emulation_s: 2.0,
        ..DramaticConfig::default()
    };
    let (report, rows) = rows_of::<Dramatic>(&config);
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let csv = shared("reference/dramatic_calibration.csv");
    if csv.exists() {
        // Table 2's NTT of 1 and 64 ciphertexts, as the CSV has them.
        let text = std::fs::read_to_string(&csv).unwrap();
        assert!(text.contains("2,DRAMatic,NTT,2,2048,54,1,0.042,0.0,0.0,311"));
        assert!(text.contains("2,DRAMatic,NTT,128,2048,54,64,0.042,0.001,0.001,313"));
        assert_eq!(
            &ids[..8],
            [
                "t2-ntt-1/compute",
                "t2-ntt-1/transfer",
                "t2-ntt-1/retrieve",
                "t2-ntt-1/power",
                "t2-ntt-64/compute",
                "t2-ntt-64/transfer",
                "t2-ntt-64/retrieve",
                "t2-ntt-64/power"
            ]
        );
        let compute = row(&rows, "t2-ntt-64/compute");
        assert_eq!((compute["published"].as_f64(), compute["unit"].as_str()), (Some(0.042), Some("s")));
        // The model-fidelity target: DRAMatic's kernel within 20% of its published compute.
        assert_eq!((compute["verdict"].as_str(), compute["tolerance"].as_f64()), (Some("within"), Some(0.2)));
        assert_eq!(row(&rows, "t2-ntt-64/power")["published"].as_f64(), Some(313.0));
        let rounded = row(&rows, "t2-ntt-1/transfer");
        assert_eq!((rounded["published"].as_f64(), rounded["ratio"].as_f64()), (Some(0.0), None));
        assert!(rounded["why_not"].as_str().unwrap().contains("rounds to the millisecond"), "{rounded}");
    }
    // A row the paper publishes nothing for says so.
    let bgv = row(&rows, "t3-bgv-mul-1024/compute");
    assert!(bgv["published"].is_null() && bgv["ours"].as_f64().unwrap() > 0.0, "{bgv}");
    assert_eq!(bgv["verdict"], "not_judged");
    // Section 5.1: "For NTT, the dummy multiplication brings a 2.7 times speed-up."
    let stated = row(&rows, "s5-ntt-4096-dummy/speed-up");
    assert_eq!((stated["published"].as_f64(), stated["tolerance"].as_f64()), (Some(2.7), Some(0.1)));
    assert_eq!(stated["model"], "upmem-v1b@2+mul=4/6 (modeled)");
    let quote = "For NTT, the dummy multiplication brings a 2.7 times speed-up.";
    assert!(stated["source"].as_str().unwrap().contains(quote), "{stated}");
    let seed = shared("seeds/000_4ec3de4d77182756.txt");
    if seed.exists() {
        assert!(std::fs::read_to_string(seed).unwrap().contains(quote));
    }
    // Each row printed as it is made carries its own rows (the CLI's --json lines).
    let first = &report.rows[0];
    let line: Value = serde_json::from_str(&with_comparison(first, &first.comparison()).unwrap()).unwrap();
    assert_eq!((line["id"].as_str(), line["op"].as_str()), (Some("t2-ntt-1"), Some("ntt")));
    assert_eq!(line["comparison"][0], rows[0]);
    assert!(report_text::<Dramatic>(&report).contains("Comparison with dramatic (N. Klinger"));
}

#[test]
fn dramatic_section72_fig3_and_table1_carry_the_texts_figures() {
    let config = DramaticConfig { rows: Some("s72-ntt-509,fig3,table1".into()), ..DramaticConfig::default() };
    let (report, rows) = rows_of::<Dramatic>(&config);
    // 7.2: "using all 509 DPUs of our PIM test machine, DRAMatic's NTT time drops to 23 ms per
    // polynomial" (4096 polynomials, 1241-bit coefficients, N = 2^16).
    let s72 = row(&rows, "s72-ntt-509/ms-per-polynomial");
    assert_eq!((s72["published"].as_f64(), s72["unit"].as_str()), (Some(23.0), Some("ms")));
    assert_eq!((s72["verdict"].as_str(), s72["tolerance"].as_f64()), (Some("within"), Some(0.25)), "{s72}");
    let run = &report.rows[0];
    let line: Value = serde_json::from_str(&with_comparison(run, &run.comparison()).unwrap()).unwrap();
    assert_eq!(
        (line["n"].as_u64(), line["primes"].as_u64(), line["ciphertexts"].as_u64()),
        (Some(65536), Some(42), Some(2048))
    );
    // The row's ms per polynomial is its modeled total over the 4096 polynomials.
    let total_s = line["total_s"].as_f64().unwrap();
    assert!(close(s72["ours"].as_f64().unwrap(), total_s * 1e3 / 4096.0), "{s72}");
    let emulation = line["emulation"].as_str().unwrap();
    assert!(
        emulation.contains("bit-identical to the CPU backend") && emulation.contains("per prime's pass"),
        "{emulation}"
    );
    // 3.1.1: the custom 32x32->32 is faster "when both factors are longer than 16 bits".
    let crossover = row(&rows, "fig3/crossover");
    assert_eq!((crossover["published"].as_f64(), crossover["ours"].as_f64()), (Some(16.0), Some(16.0)));
    // Table 1, N = 4096 with 3 moduli on 2560 DPUs: "6826 CTs 640 MB"; pimhe's placement
    // gives each prime 853 DPUs, so 6824 fill them.
    let rule = row(&rows, "t1-4096-2560/cts-rule");
    assert_eq!(
        (rule["published"].as_f64(), rule["ours"].as_f64(), rule["verdict"].as_str()),
        (Some(6826.0), Some(6826.0), Some("within"))
    );
    let pimhe = row(&rows, "t1-4096-2560/cts-pimhe");
    assert_eq!((pimhe["ours"].as_f64(), pimhe["verdict"].as_str()), (Some(6824.0), Some("outside")));
    assert!(pimhe["why_not"].as_str().unwrap().contains("floor(2560 / 3) DPUs (1 idle)"), "{pimhe}");
    let memory = row(&rows, "t1-32768-2560/memory");
    assert_eq!((memory["published"].as_f64(), memory["ours"].as_f64()), (Some(5.0 * 1024.0), Some(5.0 * 1024.0)));
    let text = report_text::<Dramatic>(&report);
    assert!(text.contains("Table 1 (DRAMatic 3.5)") && text.contains("Fig. 3 (DRAMatic 3.1.1)"), "{text}");
}

#[test]
fn anaheim_rows_carry_section_vii_figures() {
    let (_, rows) = rows_of::<Anaheim>(&AnaheimConfig { workload_n: 0, threads: Some(1), ..AnaheimConfig::default() });
    // Section VII-C: "Especially high speedups are achieved for PAccum (7.26x 3.98x 3.63x) and
    // CAccum (10.33x 4.31x 6.20x)" on A100 near-bank, A100 custom-HBM, RTX 4090 near-bank, each at
    // its Table III B (16, 16, 32).
    let stated = [
        ("fig9-a100-nearbank-PAccum(4)-b16", 7.26),
        ("fig9-a100-custom-hbm-PAccum(4)-b16", 3.98),
        ("fig9-rtx4090-nearbank-PAccum(4)-b32", 3.63),
        ("fig9-a100-nearbank-CAccum(8)-b16", 10.33),
        ("fig9-a100-custom-hbm-CAccum(8)-b16", 4.31),
        ("fig9-rtx4090-nearbank-CAccum(8)-b32", 6.20),
    ];
    let judged: Vec<&Value> = rows.iter().filter(|r| r["verdict"] != "not_judged").collect();
    assert_eq!(judged.len(), stated.len());
    for (id, published) in stated {
        let r = row(&rows, id);
        assert_eq!(r["published"].as_f64(), Some(published), "{r}");
        // The target: within 20% of each stated speedup.
        assert_eq!((r["verdict"].as_str(), r["tolerance"].as_f64()), (Some("within"), Some(0.2)), "{r}");
    }
    // Section VII-D: "2.24x and 2.11x slower on A100 80GB and RTX 4090": the workloads were
    // not run, so ours is missing and the row says why.
    let cp = row(&rows, "without-cp-a100-nearbank");
    assert_eq!((cp["published"].as_f64(), cp["ours"].as_f64()), (Some(2.24), None));
    assert!(cp["why_not"].as_str().unwrap().contains("--workload-n 0"), "{cp}");
    assert_eq!(row(&rows, "without-cp-rtx4090-nearbank")["published"].as_f64(), Some(2.11));
    // Section VII-C: "1.65-10.33x speedups and 2.63-17.39x energy efficiency".
    assert_eq!(row(&rows, "fig9-range-speedup-min")["published"].as_f64(), Some(1.65));
    assert_eq!(row(&rows, "fig9-range-efficiency-max")["published"].as_f64(), Some(17.39));
    // Fig. 8 and Table V have no workload of ours yet.
    let boot = row(&rows, "table5-bootstrapping-a100-nearbank");
    assert_eq!(
        (boot["published"].as_f64(), boot["unit"].as_str(), boot["ours"].as_f64()),
        (Some(29.3), Some("ms"), None)
    );
}

#[test]
fn ceram_rows_carry_tables_2_to_10_and_the_projection() {
    let (report, rows) = rows_of::<Ceram>(&CeramConfig { skip_cpu: true, ..CeramConfig::default() });
    // Tables 2-4: 3 + 27 + 30 cells, each judged against 25% as the report's own `within`.
    let cells: Vec<_> = report.tables.iter().flat_map(|t| &t.cells).collect();
    assert_eq!(cells.len(), 60);
    for c in &cells {
        let r = row(&rows, &c.id);
        assert_eq!(r["published"].as_f64(), Some(c.published));
        assert!(close(r["ours"].as_f64().unwrap(), c.modeled), "{r}");
        assert_eq!(r["verdict"] == "within", c.within, "{r}");
        if !c.within {
            let reason = &report.misses.iter().find(|m| m.id == c.id).unwrap().reason;
            assert_eq!(r["why_not"].as_str(), Some(reason.as_str()));
        }
    }
    // Seed 004, Table 3, case A, multiplication without transfer: 396.90x.
    assert_eq!(row(&rows, "t3-A-multiply-none")["published"].as_f64(), Some(396.90));
    // Table 7, actual transfer, case A multiplication: 4150 operations per second.
    let t7 = row(&rows, "t7-A-multiply-actual");
    assert!(close(t7["published"].as_f64().unwrap(), 4150.0) && t7["unit"] == "ops/s", "{t7}");
    // Table 6, CPU-Server, case A multiplication: 579.9x; ours is not measured (--skip-cpu).
    let t6 = row(&rows, "t6-A-multiply-CPU-Server");
    assert_eq!((t6["published"].as_f64(), t6["ours"].as_f64()), (Some(579.9), None));
    assert_eq!((t6["basis"].as_str(), t6["why_not"].as_str()), (Some("measured"), Some("skipped (--skip-cpu)")));
    // Tables 2-4, Table 6 (15 cells x 3 CPUs), Table 7 (45), Table 8 (6), Tables 9 and 10
    // (3 + 12, published only), section 4.4's projection (1), the transfer sizes (5).
    assert_eq!(rows.len(), 60 + 45 + 45 + 6 + 3 + 12 + 1 + 5);
    let fpga = row(&rows, "t9-B-actual-transfer");
    assert!(fpga["ours"].is_null() && fpga["published"].as_f64() == Some(66.85), "{fpga}");
    let transfers = row(&rows, "transfers-multiply");
    assert_eq!(transfers["unit"], "ciphertexts");
}

#[test]
fn by_name_returns_what_the_printer_prints() {
    let options = serde_json::json!({"workload_n": 0});
    let json: Value = serde_json::from_str(&by_name::run("anaheim", options, &NoProgress).unwrap()).unwrap();
    let report = Anaheim::run(&AnaheimConfig { workload_n: 0, ..AnaheimConfig::default() }, &NoProgress).unwrap();
    let printed: Value = serde_json::from_str(&report_json::<Anaheim>(&report).unwrap()).unwrap();
    assert_eq!(json, printed);
    // Each paper's options are its own: another paper's flag is refused, naming the allowed.
    for (name, foreign) in [("dramatic", "skip_cpu"), ("anaheim", "kernel"), ("ceram", "workload_n")] {
        let error = by_name::run(name, serde_json::json!({ foreign: 1 }), &NoProgress).unwrap_err();
        assert!(error.is_usage(), "{error}");
        let message = error.to_string();
        assert!(message.starts_with(&format!("reproduce {name}: unknown field `{foreign}`")), "{message}");
    }
    let error = by_name::run("dramatic", serde_json::json!({"what_if": ["zero-copy"]}), &NoProgress).unwrap_err();
    assert!(error.to_string().contains("`what_ifs`"), "{error}");
}
