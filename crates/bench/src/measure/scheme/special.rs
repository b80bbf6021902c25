//! Timing of BFV on special moduli (`pimhe_schemes::bfv::special`): the CE-RAM B/FV paper's
//! own bases on the CPU, on wide words, with the operations of its Table 6, each result checked
//! against the plaintext computation.

use pimhe_schemes::bfv::special::{
    add, decrypt, encrypt, multiply, relinearize, sub, SecretKey, SpecialBfvContext, SpecialBfvParameters,
};
use pimhe_schemes::encoder::BatchEncoder;

use super::rounds::{check_product, check_slots, time_rounds, OpTiming, Rounds};
use crate::error::{check_repeat, Result};
use crate::measure::inputs::{random_slots, seed_stream};
use pimhe_workloads::progress::Progress;

/// Times encrypt, decrypt, add, sub and multiply + relinearize (`multiply_relin`) of one
/// ciphertext under `params`, a warm-up and `repeat` rounds, keys and randomness from `seed`;
/// fails if a result does not decrypt to the plaintext computation.
pub fn measure_special_bfv_ops(
    params: SpecialBfvParameters,
    repeat: usize,
    seed: u64,
    progress: &dyn Progress,
) -> Result<Vec<OpTiming>> {
    check_repeat(repeat, "round")?;
    let ctx = SpecialBfvContext::new(params)?;
    let mut keys = seed_stream(seed, 0);
    let secret = SecretKey::generate(&ctx, &mut keys);
    let (public, relin) = (secret.public_key(&mut keys), secret.relin_key(&mut keys));
    let encoder = BatchEncoder::new(&ctx);
    let t = *pimhe_schemes::encoder::PlainContext::plain_space(&*ctx).modulus();
    let tv = t.value() as u64;
    let (x, y) = random_slots(&t, ctx.params().degree(), 1, seed_stream(seed, 1));
    let (plain_x, plain_y) = (encoder.encode(&x[0])?, encoder.encode(&y[0])?);
    let mut randomness = seed_stream(seed, 2);
    let cy = encrypt(&public, &plain_y, &mut randomness)?;

    let mut rounds = Rounds::new(None);
    progress.start(repeat as u64 + 1, "rounds");
    time_rounds(repeat, progress, |round| {
        let cx = rounds.time("encrypt", || Ok(encrypt(&public, &plain_x, &mut randomness)?))?;
        let decrypted = rounds.time("decrypt", || Ok(decrypt(&secret, &cx)?))?;
        let sum = rounds.time("add", || Ok(add(&cx, &cy)?))?;
        let difference = rounds.time("sub", || Ok(sub(&cx, &cy)?))?;
        let product = rounds.time("multiply_relin", || Ok(relinearize(&multiply(&cx, &cy)?, &relin)?))?;
        if round == 0 {
            check_slots("decrypt", &encoder, &[decrypted], |_, i| x[0][i])?;
            check_slots("add", &encoder, &[decrypt(&secret, &sum)?], |_, i| (x[0][i] + y[0][i]) % tv)?;
            check_slots("sub", &encoder, &[decrypt(&secret, &difference)?], |_, i| (x[0][i] + tv - y[0][i]) % tv)?;
            check_product(&encoder, &[decrypt(&secret, &product)?], &x, &y, t.value())?;
        }
        Ok(())
    })?;
    Ok(rounds.finish(1))
}
