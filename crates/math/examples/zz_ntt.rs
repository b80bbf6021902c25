use pimhe_math::{ntt_primes, Modulus, NttTable};
use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map(|s| s.parse().unwrap()).unwrap_or(8192);
    let iters: usize = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(20000);
    let p = ntt_primes(30, n, 1, &[]).unwrap()[0];
    let t = NttTable::new(Modulus::new(p as u64).unwrap(), n).unwrap();
    let mut a: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761) % p).collect();
    let (mut bf, mut bi) = (f64::MAX, f64::MAX);
    for _ in 0..iters / 100 {
        let s = Instant::now();
        for _ in 0..100 {
            t.forward(&mut a);
        }
        bf = bf.min(s.elapsed().as_secs_f64() * 1e4);
        let s = Instant::now();
        for _ in 0..100 {
            t.inverse(&mut a);
        }
        bi = bi.min(s.elapsed().as_secs_f64() * 1e4);
    }
    println!("n={n} forward {:.2} us inverse {:.2} us (min over blocks of 100)", bf, bi);
}
