//! A short run of the serial loaders' mutation fuzzer (`support/serial_fuzz.rs`; the long run
//! is `cargo run --release -p pimhe-schemes --example serial_fuzz`): no input may panic, and no
//! load may allocate more than the engine's bound. One test only, so that the counting
//! allocator sees no other test's allocations.

#[path = "support/serial_fuzz.rs"]
mod engine;

#[test]
fn mutated_encodings_never_panic_nor_allocate_beyond_the_bound() {
    let reports = engine::run_all(2_000, 1, None);
    eprintln!("{}", engine::table(&reports));
    for report in &reports {
        assert_eq!(report.panics, 0, "{}: {:?}", report.name, report.first_panic);
        assert_eq!(
            report.violations, 0,
            "{}: a load allocated {} bytes ({:.2} x its input or the largest valid object)",
            report.name, report.worst_peak, report.worst_ratio
        );
        // The valid encodings load, and some mutations too (payload bits that stay below a
        // prime); most are refused.
        assert!(report.loaded >= 1, "{}", report.name);
    }
}
