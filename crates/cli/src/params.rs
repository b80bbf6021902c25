//! `pimhe params`: the BGV parameter presets and their security.

use clap::Args;
use pimhe_schemes::bgv::BgvParameters;
use pimhe_schemes::security::max_log_q_128;
use serde::Serialize;

use crate::error::Result;

/// Arguments of `pimhe params`.
#[derive(Debug, Args)]
pub struct ParamsArgs {
    /// Print one JSON object per preset instead of a table
    #[arg(long)]
    json: bool,
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

/// Prints the presets.
pub fn run(args: &ParamsArgs) -> Result<()> {
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
        for row in &rows {
            println!("{}", serde_json::to_string(row).expect("plain data serializes"));
        }
        return Ok(());
    }
    println!("BGV presets (HomomorphicEncryption.org standard, ternary secret; log Q counts every prime)");
    println!(
        "{:>6} {:>6} {:>22} {:>10} {:>5} {:>7} {:>8} {:>9} {:>7}",
        "N", "t", "data primes", "special", "dnum", "log Q", "max 128", "security", "relin"
    );
    for row in &rows {
        let bits = |p: u32| 32 - p.leading_zeros();
        let data = format!("{} x {} bits", row.data_primes.len(), bits(row.data_primes[0]));
        let special = match row.special_primes.as_slice() {
            [] => "-".to_string(),
            [first, ..] => format!("{} x {} b", row.special_primes.len(), bits(*first)),
        };
        let security = row.security_bits.map_or("<128".to_string(), |b| format!("{b}-bit"));
        let dnum = if row.relinearization { row.dnum.to_string() } else { "-".to_string() };
        println!(
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
        );
    }
    Ok(())
}
