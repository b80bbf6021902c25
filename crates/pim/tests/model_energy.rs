//! Transfers, what-ifs, energy and the labelled breakdown of `upmem-v1b`, against
//! hand-computed values.

use pimhe_pim::model::{Breakdown, MultiplierCycles, UpmemModel};

#[test]
fn transfer_formula_by_hand() {
    let m = UpmemModel::v1b();
    // 64 MiB to one full rank: latency + bytes / per-rank bandwidth.
    let bytes = 64u64 << 20;
    let expected =
        m.transfer_latency_s + 64.0 * m.transfer_latency_s_per_dpu + bytes as f64 / m.transfer_bytes_per_s_per_rank;
    assert!((m.transfer_seconds(&[1 << 20; 64]) - expected).abs() < 1e-15);
    // 40 ranks: capped by the host.
    let expected = m.transfer_latency_s
        + 2560.0 * m.transfer_latency_s_per_dpu
        + (2560u64 << 20) as f64 / m.max_transfer_bytes_per_s;
    assert!((m.transfer_seconds(&[1 << 20; 2560]) - expected).abs() < 1e-12);
    // Retrieval: 2 ranks' worth of DPUs but only 10 take part, in 2 ranks.
    let mut per_dpu = vec![0u64; 128];
    for i in (0..128).step_by(13) {
        per_dpu[i] = 4096;
    }
    assert_eq!(m.footprint(&per_dpu), (10 * 4096, 10, 2));
    let expected = m.retrieve_latency_s
        + 10.0 * m.retrieve_latency_s_per_dpu
        + (10.0 * 4096.0) / (2.0 * m.retrieve_bytes_per_s_per_rank).min(m.max_retrieve_bytes_per_s);
    assert!((m.retrieve_seconds(&per_dpu) - expected).abs() < 1e-15);
    // Nothing moved, nothing paid.
    assert_eq!(m.transfer_seconds(&[0; 64]), 0.0);
    assert_eq!(m.retrieve_seconds(&[]), 0.0);
    // More ranks never make the same bytes slower (apart from per-DPU latency).
    let one = m.transfer_seconds_for(1 << 30, 64, 1);
    let six = m.transfer_seconds_for(1 << 30, 64, 6);
    assert!(six < one);
}

#[test]
fn zero_copy_gives_zero_transfer() {
    let mut m = UpmemModel::v1b();
    assert!(m.transfer_seconds(&[1 << 20; 383]) > 0.0);
    m.zero_copy = true;
    assert_eq!(m.transfer_seconds(&[1 << 20; 383]), 0.0);
    assert_eq!(m.retrieve_seconds(&[1 << 20; 383]), 0.0);
    assert_eq!(m.transfer_seconds_for(1 << 30, 383, 6), 0.0);
    assert_eq!(m.retrieve_seconds_for(1 << 30, 383, 6), 0.0);
    // Compute and power are untouched.
    assert_eq!(m.power_watts(6), UpmemModel::v1b().power_watts(6));
    assert_eq!(m.label(), "upmem-v1b@1+zero-copy (modeled)");
}

#[test]
fn energy_is_power_times_time() {
    let m = UpmemModel::v1b();
    for ranks in [0u32, 1, 2, 6, 8, 40] {
        let power = 310.0 + m.power_per_active_rank_w * ranks as f64;
        assert_eq!(m.power_watts(ranks), power);
        for seconds in [0.0, 1e-3, 1.5, 62.335] {
            let e = m.energy_joules(seconds, ranks);
            assert!((e - power * seconds).abs() <= 1e-12 * power * seconds.max(1.0));
        }
    }
    // Breakdown: energy of the total time.
    let b = m.breakdown(0.258, 4.130, 0.705, 6);
    assert!((b.energy_j - m.power_watts(6) * (0.258 + 4.130 + 0.705)).abs() < 1e-9);
    assert!((b.total_s() - 5.093).abs() < 1e-12);
}

#[test]
fn breakdown_serializes_with_the_model_label() {
    let m = UpmemModel::v1b();
    let b = m.breakdown(0.1, 1.0, 0.2, 2);
    assert_eq!(b.model, "upmem-v1b@1 (modeled)");
    let json = serde_json::to_value(&b).unwrap();
    assert_eq!(json["model"], "upmem-v1b@1 (modeled)");
    assert_eq!(json["transfer_s"], 0.1);
    assert_eq!(json["compute_s"], 1.0);
    assert_eq!(json["retrieve_s"], 0.2);
    assert!(json["energy_j"].as_f64().unwrap() > 0.0);
    let back: Breakdown = serde_json::from_value(json).unwrap();
    assert_eq!(back, b);

    let mut what_if = UpmemModel::v1b();
    what_if.multiplier_cycles = Some(MultiplierCycles::DRAMATIC_DUMMY);
    what_if.zero_copy = true;
    let label = what_if.breakdown(0.0, 1.0, 0.0, 2).model;
    assert_eq!(label, "upmem-v1b@1+mul=2/4+zero-copy (modeled)");

    // The model's own constants serialize too (for reports that quote them).
    let model = serde_json::to_value(&m).unwrap();
    assert_eq!(model["name"], "upmem-v1b");
    assert_eq!(model["dpu_hz"], 350e6);
}
