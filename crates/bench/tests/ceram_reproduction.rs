//! The CE-RAM B/FV reproduction (`pimhe bench reproduce ceram`): modeled cells against a second
//! computation through pimhe-ceram, the published constants against the paper's tables, the
//! JSON form, and the CPU measurement at a small ring degree (no timed assertions).

use std::path::PathBuf;

use pimhe_bench::format::to_json;
use pimhe_bench::reproduce::ceram::{self, CeramConfig, CeramReport, RatioTable};
use pimhe_bench::{NoProgress, Render};
use pimhe_ceram::model::CeramModel;
use pimhe_ceram::params::Params;
use pimhe_ceram::program::HomOp;
use pimhe_schemes::bfv::special::SpecialCase as Case;

fn modeled_only() -> CeramReport {
    ceram::reproduce(&CeramConfig { skip_cpu: true, ..CeramConfig::default() }, &NoProgress).unwrap()
}

fn table(report: &CeramReport, n: u32) -> &RatioTable {
    report.tables.iter().find(|t| t.table == n).unwrap()
}

/// The seconds of `op` under `params` with `transfer`, straight from the model.
fn seconds(op: HomOp, params: &Params, transfer: &str) -> f64 {
    let cost = CeramModel::default().price_op(op, params).unwrap();
    match transfer {
        "none" => cost.compute_s,
        "actual" => cost.compute_s + cost.transfer_actual_s,
        "specified" => cost.compute_s + cost.transfer_specified_s,
        other => panic!("unknown transfer {other}"),
    }
}

fn params(case: &str, ntt: bool) -> Params {
    match case {
        "A" => Params::case_a(ntt),
        "B" => Params::case_b(ntt),
        "C" => Params::case_c(ntt),
        other => panic!("unknown case {other}"),
    }
}

fn op(name: &str) -> HomOp {
    HomOp::ALL.into_iter().find(|o| o.name() == name).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs()
}

#[test]
fn modeled_cells_equal_the_model_computed_directly() {
    let report = modeled_only();
    assert_eq!(report.model, "ceram@1 (modeled)");
    // Table 2: Reis et al.'s textbook design at N = 2^14, |q| = 438 over full-RNS without NTT.
    let t2 = table(&report, 2);
    assert_eq!(t2.cells.len(), 3);
    for c in &t2.cells {
        let textbook = seconds(HomOp::Multiply, &Params::textbook(1 << 14, 438), "actual");
        let full = seconds(HomOp::Multiply, &params(&c.case, false), "actual");
        assert!(close(c.modeled, textbook / full), "{c:?}");
    }
    // Table 3: without NTT over with NTT, each transfer.
    let t3 = table(&report, 3);
    assert_eq!(t3.cells.len(), 27);
    for c in &t3.cells {
        let expected = seconds(op(&c.op), &params(&c.case, false), &c.transfer)
            / seconds(op(&c.op), &params(&c.case, true), &c.transfer);
        assert!(close(c.modeled, expected), "{c:?}");
        assert!(close(c.ours_over_published, c.modeled / c.published), "{c:?}");
        assert_eq!(c.within, (0.75..=1.25).contains(&c.ours_over_published), "{c:?}");
    }
    // Table 4: case A over case B or C, both without NTT.
    let t4 = table(&report, 4);
    assert_eq!(t4.cells.len(), 30);
    for c in &t4.cells {
        let o = op(&c.op);
        let expected = seconds(o, &params("A", false), &c.transfer) / seconds(o, &params(&c.case, false), &c.transfer);
        assert!(close(c.modeled, expected), "{c:?}");
    }
    // Table 6's CE-RAM side: with NTT, actual transfer.
    assert_eq!(report.table6.rows.len(), 15);
    for r in &report.table6.rows {
        assert!(close(r.ceram_s, seconds(op(&r.op), &params(&r.case, true), "actual")), "{r:?}");
        assert_eq!(r.published.len(), 3);
    }
    // Every miss is listed with a reason: Tables 2-4's with the breakdown of both programs, then
    // Tables 7, 8 and section 4.4's against the paper's compute-only time.
    let cells = report.tables.iter().chain(&report.throughput).flat_map(|t| &t.cells);
    let misses: Vec<&str> =
        cells.chain([&report.two_banks.cell]).filter(|c| !c.within).map(|c| c.id.as_str()).collect();
    assert_eq!(report.misses.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), misses);
    for m in &report.misses {
        let breakdown = if m.id.starts_with("t2-") || m.id.starts_with("t3-") || m.id.starts_with("t4-") {
            "compute:"
        } else {
            "the paper's"
        };
        assert!(m.reason.contains(breakdown), "{m:?}");
    }
}

#[test]
fn tables_7_and_8_and_the_two_banks_follow_from_the_model_times() {
    let report = modeled_only();
    let throughput = |n: u32| report.throughput.iter().find(|t| t.table == n).unwrap();
    // Table 7: 1 / the time with NTT, per transfer; 3 transfers x 3 cases x 5 operations.
    let t7 = throughput(7);
    assert_eq!(t7.cells.len(), 45);
    for c in &t7.cells {
        assert!(close(c.modeled, 1.0 / seconds(op(&c.op), &params(&c.case, true), &c.transfer)), "{c:?}");
        assert_eq!(c.within, (0.75..=1.25).contains(&c.ours_over_published), "{c:?}");
    }
    let published = |id: &str| t7.cells.iter().find(|c| c.id == id).unwrap().published;
    assert_eq!(
        (published("t7-B-multiply-actual"), published("t7-C-encrypt-specified"), published("t7-A-add-none")),
        (5611.0, 6301.0, 1383126.0)
    );
    // Table 8 = Table 2 x Table 3 (multiplication, actual transfer), in the model as in the paper.
    let t8 = throughput(8);
    assert_eq!(t8.cells.len(), 6);
    for case in ["A", "B", "C"] {
        let find = |t: &RatioTable, id: String| t.cells.iter().find(|c| c.id == id).unwrap().clone();
        let t2 = find(table(&report, 2), format!("t2-{case}-multiply-actual"));
        let t3 = find(table(&report, 3), format!("t3-{case}-multiply-actual"));
        let t8 = find(t8, format!("t8-{case}-multiply-actual"));
        assert!((t8.modeled / (t2.modeled * t3.modeled) - 1.0).abs() < 1e-9, "{t8:?}");
        // Table 2 is printed to two decimals (1.90 +- 0.005: 0.26%).
        assert!((t8.published / (t2.published * t3.published) - 1.0).abs() < 3e-3, "{t8:?}");
    }
    // Section 4.4: the rule by hand, then on the paper's own Table 7 (case B: 1 / 8719 s of
    // compute, 1 / 5611 - 1 / 8719 s of transfer) it gives the paper's 11222.
    assert_eq!(ceram::two_banks_ops_per_s(3.0, 1.0), 0.5);
    assert!(close(ceram::two_banks_ops_per_s(1.0, 3.0), 1.0 / 3.0));
    let p = &report.two_banks;
    assert!((p.rule_on_paper_ops_per_s - 11222.0).abs() < 0.5, "{p:?}");
    assert_eq!(p.rows.len(), 6);
    let b = p.rows.iter().find(|r| r.case == "B" && r.transfer == "actual").unwrap();
    let total = seconds(HomOp::Multiply, &params("B", true), "actual");
    let compute = seconds(HomOp::Multiply, &params("B", true), "none");
    assert!(close(b.one_bank_ops_per_s, 1.0 / total));
    assert!(close(b.two_banks_ops_per_s, (2.0 / total).min(1.0 / (total - compute))));
    assert!(close(p.cell.modeled, b.two_banks_ops_per_s) && p.cell.published == 11222.0);
    // Tables 9 and 10: published only, each saying why.
    let only: Vec<(u32, usize)> = report.published_only.iter().map(|t| (t.table, t.rows.len())).collect();
    assert_eq!(only, [(9, 1), (10, 3)]);
    assert_eq!(report.published_only[1].rows[1].1, [30.8, 153.8, 7.9, 96.9]);
    assert!(report.published_only.iter().all(|t| t.why_not_ours.contains("circular")));
    let rows = <ceram::Ceram as pimhe_bench::reproduce::Reproduction>::comparison(&report);
    let t9: Vec<_> = rows.iter().filter(|r| r.id.starts_with("t9-") || r.id.starts_with("t10-")).collect();
    assert_eq!(t9.len(), 3 + 12);
    assert!(t9.iter().all(|r| r.ours.is_none() && r.within().is_none()));
}

#[test]
fn published_constants_are_the_papers() {
    // Spot checks against seed 004's tables.
    assert_eq!(ceram::PUBLISHED_TABLE_2, [(Case::A, 1.28), (Case::B, 1.90), (Case::C, 1.12)]);
    let t3 = |case, o| ceram::PUBLISHED_TABLE_3.iter().find(|r| r.0 == case && r.1 == o).unwrap().2;
    assert_eq!(t3(Case::A, HomOp::Multiply), [396.90, 292.56, 182.22]);
    assert_eq!(t3(Case::B, HomOp::Decrypt), [315.47, 73.75, 38.89]);
    assert_eq!(t3(Case::C, HomOp::Encrypt), [1100.51, 249.14, 90.09]);
    let t4 = |case, o| ceram::PUBLISHED_TABLE_4.iter().find(|r| r.0 == case && r.1 == o).unwrap().2;
    assert_eq!(t4(Case::B, HomOp::Add), [37.08, 1.01, 1.00]);
    assert_eq!(t4(Case::C, HomOp::Multiply), [0.87, 0.87, 0.87]);
    assert_eq!(t4(Case::C, HomOp::Sub), [32.32, 1.01, 1.00]);
    let t6 = |cpu, case| ceram::PUBLISHED_TABLE_6.iter().find(|r| r.0 == cpu && r.1 == case).unwrap().2;
    assert_eq!(t6("CPU-Server", Case::B), [784.2, 5.1, 5.3, 143.9, 330.3]);
    assert_eq!(t6("CPU-Workstation", Case::A), [406.8, 3.6, 3.8, 52.3, 151.5]);
    assert_eq!(t6("CPU-Laptop", Case::C), [573.2, 5.8, 5.9, 125.9, 279.0]);
    assert_eq!(ceram::PUBLISHED_TABLE_7_ACTUAL[1], (Case::B, [5611.0, 15740.0, 15740.0, 16248.0, 18694.0]));
    assert_eq!(ceram::PUBLISHED_TABLE_7_COMPUTE[0].1[1], 1383126.0);
    // Table 4 read as "both without NTT": Table 4 x Table 3 (B / A) is Table 7's compute-only B / A.
    for (o, product, table7) in ceram::table_4_reading() {
        assert!((product / table7 - 1.0).abs() < 0.005, "{o:?}: {product} vs {table7}");
    }
    // Table 7's add/sub without transfer are Table 4's (no NTT involved): 37.08x and 35.15x.
    let (a, b) = (ceram::PUBLISHED_TABLE_7_COMPUTE[0].1, ceram::PUBLISHED_TABLE_7_COMPUTE[1].1);
    assert!((b[1] / a[1] - 37.08).abs() < 0.01 && (b[2] / a[2] - 35.15).abs() < 0.01);
    // The paper's transfers: three ciphertexts for multiply, add, sub; two for decrypt, encrypt.
    let transfers = ceram::transfers(&CeramModel::default()).unwrap();
    let published: Vec<f64> = transfers.iter().map(|t| (t.published_ciphertexts * 10.0).round() / 10.0).collect();
    assert_eq!(published, [3.0, 3.0, 3.0, 2.0, 2.0]);
}

#[test]
fn json_round_trips_with_every_table() {
    let report = modeled_only();
    let json = to_json(&report).unwrap();
    let back: CeramReport = serde_json::from_str(&json).unwrap();
    // Equal but for the last bit of a float (serde_json parses to within an ulp or so).
    assert_eq!(back.tables.len(), report.tables.len());
    for (b, r) in back.tables.iter().zip(&report.tables) {
        assert_eq!((b.table, &b.title, b.cells.len()), (r.table, &r.title, r.cells.len()));
        for (bc, rc) in b.cells.iter().zip(&r.cells) {
            assert_eq!((&bc.id, bc.within, bc.published), (&rc.id, rc.within, rc.published));
            assert!(close(bc.modeled, rc.modeled), "{bc:?}");
        }
    }
    assert_eq!(back.table6.rows.len(), report.table6.rows.len());
    assert_eq!(back.throughput.iter().map(|t| t.cells.len()).collect::<Vec<_>>(), [45, 6]);
    assert_eq!((back.two_banks.rows.len(), &back.published_only), (6, &report.published_only));
    assert_eq!(
        back.misses.iter().map(|m| &m.id).collect::<Vec<_>>(),
        report.misses.iter().map(|m| &m.id).collect::<Vec<_>>()
    );
    assert_eq!(back.notes, report.notes);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let tables: Vec<u64> = value["tables"].as_array().unwrap().iter().map(|t| t["table"].as_u64().unwrap()).collect();
    assert_eq!(tables, [2, 3, 4]);
    assert_eq!(value["table6"]["rows"].as_array().unwrap().len(), 15);
    assert_eq!(value["table6"]["skipped"], "skipped (--skip-cpu)");
    let text = report.render();
    for needle in [
        "Table 2:",
        "Table 3:",
        "Table 4:",
        "Table 6:",
        "Table 7:",
        "Table 8:",
        "Section 4.4:",
        "Table 9:",
        "Table 10:",
        "ceram@1 (modeled)",
        "Target (Tables 2-4",
    ] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
}

#[test]
fn cpu_parameters_reach_the_papers_438_bits_within_the_bound() {
    let p = ceram::cpu_params(1 << 14).unwrap();
    assert_eq!(p.total_bits(), 438);
    assert_eq!(p.security_bits(), Some(128));
    assert_eq!(p.special_primes().len(), 1);
    assert_eq!(p.dnum(), p.data_primes().len());
    let bits: Vec<u32> = p.data_primes().iter().map(|q| 32 - q.leading_zeros()).collect();
    assert_eq!(bits.iter().sum::<u32>(), 408);
    assert!(ceram::cpu_params(1000).is_err());
}

#[test]
fn cpu_side_measures_pimhe_and_reports_a_missing_seal_as_na() {
    let config = CeramConfig {
        n: 4096,
        repeat: 1,
        threads: Some(1),
        seal_python: Some(PathBuf::from("/nonexistent/python")),
        ..CeramConfig::default()
    };
    let columns = ceram::measure_cpus(&config, &NoProgress).unwrap();
    assert_eq!(columns.len(), 4);
    let pimhe = columns[0].measured.as_ref().unwrap();
    assert!(pimhe.checked);
    assert_eq!((pimhe.n, pimhe.threads, pimhe.batch, pimhe.log_q_total), (4096, 1, 1, 109));
    let ops: Vec<&str> = pimhe.median_s.keys().map(String::as_str).collect();
    assert_eq!(ops, ["add", "decrypt", "encrypt", "multiply", "sub"]);
    assert!(pimhe.median_s.values().all(|&s| s > 0.0));
    // The paper's 438-bit special base is not 128-bit secure at N = 4096: that column says so.
    assert_eq!(columns[1].label, ceram::SPECIAL_LABEL);
    assert!(columns[1].unavailable.as_deref().unwrap().contains("insecure"), "{:?}", columns[1]);
    for seal in &columns[2..] {
        assert!(seal.measured.is_none());
        assert!(seal.unavailable.as_deref().unwrap().starts_with("n/a: "), "{seal:?}");
    }
    let t6 = ceram::table_6(&CeramModel::default(), columns, None).unwrap();
    assert!(t6.rows.iter().all(|r| r.measured[0].speedup.is_some() && r.measured[1].speedup.is_none()));
    assert_eq!(t6.pimhe_vs_seal.len(), 5);
}

#[test]
fn special_moduli_bfv_is_timed_with_every_result_checked() {
    use pimhe_bench::measure::scheme::special::measure_special_bfv_ops;
    use pimhe_schemes::bfv::special::{SpecialBfvParameters, SpecialCase};
    let base = SpecialCase::B.base().unwrap();
    let params = SpecialBfvParameters::new(64, 65537, base, true).unwrap().allow_insecure();
    let ops = measure_special_bfv_ops(params, 1, 3, &NoProgress).unwrap();
    let names: Vec<&str> = ops.iter().map(|o| o.op).collect();
    assert_eq!(names, ["encrypt", "decrypt", "add", "sub", "multiply_relin"]);
    assert!(ops.iter().all(|o| o.median_per_ciphertext_s > 0.0));
}
