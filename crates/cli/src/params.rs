//! `pimhe params`: the parameter presets of a scheme and their security.

use clap::Args;
use pimhe_schemes::bgv::BgvParameters;
use pimhe_schemes::ckks::CkksParameters;
use pimhe_schemes::security::max_log_q_128;
use serde::Serialize;

use crate::error::{CliError, Result};

/// Arguments of `pimhe params`.
#[derive(Debug, Args)]
pub struct ParamsArgs {
    /// Scheme whose presets to print: bgv (BFV uses the same sets) or ckks
    #[arg(long, default_value = "bgv")]
    scheme: String,
    /// Print one JSON object per preset instead of a table
    #[arg(long)]
    json: bool,
}

/// One CKKS preset as `pimhe params --scheme ckks` prints it.
#[derive(Serialize)]
struct CkksRow {
    n: usize,
    slots: usize,
    depth: usize,
    scale_bits: u32,
    primes_per_level: usize,
    data_primes: Vec<u32>,
    special_primes: Vec<u32>,
    dnum: usize,
    log_q: u32,
    max_log_q_128: u32,
    security_bits: Option<u32>,
}

/// Prints the presets of `--scheme`.
pub fn run(args: &ParamsArgs) -> Result<()> {
    match args.scheme.as_str() {
        "bgv" | "bfv" => run_integer(args),
        "ckks" => run_ckks(args),
        other => Err(CliError::usage(format!("--scheme {other} is not known; choose one of: bgv, bfv, ckks"))),
    }
}

fn run_ckks(args: &ParamsArgs) -> Result<()> {
    let rows: Vec<CkksRow> = CkksParameters::presets()
        .into_iter()
        .map(|p| CkksRow {
            n: p.degree(),
            slots: p.max_slots(),
            depth: p.depth(),
            scale_bits: p.scale_bits(),
            primes_per_level: p.primes_per_level(),
            data_primes: p.rlwe().data_primes().to_vec(),
            special_primes: p.rlwe().special_primes().to_vec(),
            dnum: p.rlwe().dnum(),
            log_q: p.rlwe().total_bits(),
            max_log_q_128: max_log_q_128(p.degree()).expect("presets use supported degrees"),
            security_bits: p.security_bits(),
        })
        .collect();
    if args.json {
        print_json_lines(&rows);
        return Ok(());
    }
    crate::output::line("CKKS presets (HomomorphicEncryption.org standard, ternary secret; log Q counts every prime)");
    crate::output::line(&format!(
        "{:>6} {:>6} {:>6} {:>6} {:>12} {:>10} {:>5} {:>7} {:>8} {:>9}",
        "N", "slots", "depth", "scale", "primes/level", "special", "dnum", "log Q", "max 128", "security"
    ));
    for row in &rows {
        let security = row.security_bits.map_or("<128".to_string(), |b| format!("{b}-bit"));
        crate::output::line(&format!(
            "{:>6} {:>6} {:>6} {:>6} {:>12} {:>10} {:>5} {:>7} {:>8} {:>9}",
            row.n,
            row.slots,
            row.depth,
            format!("2^{}", row.scale_bits),
            row.primes_per_level,
            format!("{} x 30 b", row.special_primes.len()),
            row.dnum,
            row.log_q,
            row.max_log_q_128,
            security
        ));
    }
    Ok(())
}

#[derive(Serialize)]
struct PresetRow {
    n: usize,
    plain_modulus: u32,
    data_primes: Vec<u32>,
    special_primes: Vec<u32>,
    dnum: usize,
    log_q: u32,
    max_log_q_128: u32,
    security_bits: Option<u32>,
    levels: usize,
    relinearization: bool,
}

fn run_integer(args: &ParamsArgs) -> Result<()> {
    let rows: Vec<PresetRow> = BgvParameters::presets()
        .into_iter()
        .map(|p| PresetRow {
            n: p.degree(),
            plain_modulus: p.plain_modulus(),
            data_primes: p.data_primes().to_vec(),
            special_primes: p.special_primes().to_vec(),
            dnum: p.dnum(),
            log_q: p.total_bits(),
            max_log_q_128: max_log_q_128(p.degree()).expect("presets use supported degrees"),
            security_bits: p.security_bits(),
            levels: p.max_level() + 1,
            relinearization: !p.special_primes().is_empty(),
        })
        .collect();
    if args.json {
        print_json_lines(&rows);
        return Ok(());
    }
    crate::output::line(
        "BGV and BFV presets (HomomorphicEncryption.org standard, ternary secret; log Q counts every prime)",
    );
    crate::output::line(&format!(
        "{:>6} {:>6} {:>22} {:>10} {:>5} {:>7} {:>8} {:>9} {:>7}",
        "N", "t", "data primes", "special", "dnum", "log Q", "max 128", "security", "relin"
    ));
    for row in &rows {
        let bits = |p: u32| 32 - p.leading_zeros();
        let data = format!("{} x {} bits", row.data_primes.len(), bits(row.data_primes[0]));
        let special = match row.special_primes.as_slice() {
            [] => "-".to_string(),
            [first, ..] => format!("{} x {} b", row.special_primes.len(), bits(*first)),
        };
        let security = row.security_bits.map_or("<128".to_string(), |b| format!("{b}-bit"));
        let dnum = if row.relinearization { row.dnum.to_string() } else { "-".to_string() };
        crate::output::line(&format!(
            "{:>6} {:>6} {:>22} {:>10} {:>5} {:>7} {:>8} {:>9} {:>7}",
            row.n,
            row.plain_modulus,
            data,
            special,
            dnum,
            row.log_q,
            row.max_log_q_128,
            security,
            if row.relinearization { "yes" } else { "no" }
        ));
    }
    Ok(())
}

/// One JSON object per row, one per line.
fn print_json_lines<T: Serialize>(rows: &[T]) {
    for row in rows {
        crate::output::line(&serde_json::to_string(row).expect("plain data serializes"));
    }
}
