//! `pimhe params`: the parameter presets of a scheme and their security
//! ([`pimhe_bench::params`]), as a table or one JSON object per preset.

use clap::Args;
use pimhe_bench::params::presets;
use pimhe_bench::Render;

use crate::error::Result;

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

/// Prints the presets of `--scheme`.
pub fn run(args: &ParamsArgs) -> Result<()> {
    let presets = presets(&args.scheme)?;
    crate::output::line(&if args.json { presets.json_lines()? } else { presets.render() });
    Ok(())
}
