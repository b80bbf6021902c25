//! Rough single-thread timings of the special-moduli arithmetic (not a benchmark suite):
//! `cargo run --release -p pimhe-math --example special_speed`.

use std::hint::black_box;
use std::time::Instant;

use pimhe_math::special::{ntt_primes_above, BarrettModulus, SpecialModulus, Wide, WideArith, WideNtt};

fn time_mul<M: WideArith>(name: &str, m: &M, iters: u32) {
    let mut x =
        m.reduce(&Wide::from_u64(0x1234_5678_9abc_def1).wrapping_mul(&Wide::from_u64(u64::MAX)).shl_vartime(60));
    let y = m.reduce(&Wide::MAX.shr_vartime(10));
    let start = Instant::now();
    for _ in 0..iters {
        x = m.mul(black_box(&x), &y);
    }
    black_box(x);
    println!("{name:<44} {:>8.1} ns/mul", start.elapsed().as_nanos() as f64 / iters as f64);
}

fn time_ntt<M: WideArith>(name: &str, ntt: &WideNtt<M>, reps: u32) {
    let n = ntt.degree();
    let mut a: Vec<Wide> =
        (0..n as u64).map(|i| ntt.modulus().reduce(&Wide::from_u64(i * 0x9e37_79b9_7f4a_7c15))).collect();
    let start = Instant::now();
    for _ in 0..reps {
        ntt.forward(black_box(&mut a));
    }
    let fwd = start.elapsed().as_secs_f64() / reps as f64;
    let start = Instant::now();
    for _ in 0..reps {
        ntt.inverse(black_box(&mut a));
    }
    let inv = start.elapsed().as_secs_f64() / reps as f64;
    println!("{name:<44} forward {:>7.2} ms, inverse {:>7.2} ms", fwd * 1e3, inv * 1e3);
}

fn main() {
    let iters = 2_000_000;
    for g in [146, 220] {
        for q in [
            SpecialModulus::mersenne(g).unwrap(),
            SpecialModulus::power_of_two(g).unwrap(),
            SpecialModulus::fermat_like(g).unwrap(),
        ] {
            time_mul(&format!("special mul mod {q}"), &q, iters);
            time_mul(&format!("Barrett mul mod {q}"), q.barrett(), iters);
        }
        let q = SpecialModulus::fermat_like(g).unwrap();
        let x = q.reduce(&Wide::MAX.shr_vartime(40));
        let start = Instant::now();
        let mut acc = x;
        for i in 0..iters {
            acc = q.mul_pow2(black_box(&acc), (i % 200) as u64 + 1);
        }
        black_box(acc);
        println!("{:<44} {:>8.1} ns/op", format!("mul_pow2 mod {q}"), start.elapsed().as_nanos() as f64 / iters as f64);
    }
    let n = 1 << 14;
    for g in [146, 220] {
        let p = ntt_primes_above(g, n, 1, &[]).unwrap()[0];
        let ntt = WideNtt::for_prime(BarrettModulus::new(p).unwrap(), n, 1).unwrap();
        time_mul(&format!("Barrett mul mod {}-bit NTT prime", g + 1), ntt.modulus(), iters);
        time_ntt(&format!("wide NTT N = 2^14, {}-bit prime", g + 1), &ntt, 5);
    }
}
