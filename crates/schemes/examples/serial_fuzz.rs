//! The long run of the serial loaders' mutation fuzzer (the engine of
//! `tests/support/serial_fuzz.rs`, whose short run is the `serial_fuzz` test):
//!
//! ```text
//! cargo run --release -p pimhe-schemes --example serial_fuzz -- --inputs 1000000 --seed 1 [--only ckks]
//! ```
//!
//! Prints a Markdown table per loader (inputs, loaded, panics, allocation bound violations,
//! worst peak allocation ratio, wall time) and exits with status 1 if any input panicked or
//! broke the bound.

#[path = "../tests/support/serial_fuzz.rs"]
mod engine;

fn main() {
    let mut inputs = 1_000_000;
    let mut seed = 1;
    let mut only = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().unwrap_or_else(|| usage(&format!("{arg} needs a value")));
        match arg.as_str() {
            "--inputs" => inputs = value.parse().unwrap_or_else(|_| usage("--inputs takes a count")),
            "--seed" => seed = value.parse().unwrap_or_else(|_| usage("--seed takes an integer")),
            "--only" => only = Some(value),
            _ => usage(&format!("unknown argument {arg}")),
        }
    }
    let start = std::time::Instant::now();
    let reports = engine::run_all(inputs, seed, only.as_deref());
    println!("{}", engine::table(&reports));
    println!(
        "seed {seed}, {inputs} inputs per loader, {} loaders, {:.1} s in all; bound: peak <= {} x max(input, largest valid) + {} bytes",
        reports.len(),
        start.elapsed().as_secs_f64(),
        engine::ALLOCATION_FACTOR,
        engine::ALLOCATION_SLACK
    );
    if reports.iter().any(|r| r.panics > 0 || r.violations > 0) {
        std::process::exit(1);
    }
}

fn usage(problem: &str) -> ! {
    eprintln!("{problem}\nusage: serial_fuzz [--inputs N] [--seed S] [--only SUBSTRING]");
    std::process::exit(2);
}
