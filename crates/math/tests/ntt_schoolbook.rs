//! The NTT product must equal schoolbook negacyclic multiplication.

use pimhe_math::{ntt_primes, Modulus, NttTable};
use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

fn schoolbook_negacyclic(a: &[u32], b: &[u32], q: u64) -> Vec<u32> {
    let n = a.len();
    let mut acc = vec![0i128; n];
    for i in 0..n {
        for j in 0..n {
            let prod = a[i] as i128 * b[j] as i128;
            if i + j < n {
                acc[i + j] += prod;
            } else {
                acc[i + j - n] -= prod;
            }
        }
    }
    acc.iter().map(|&x| x.rem_euclid(q as i128) as u32).collect()
}

#[test]
fn ntt_product_matches_schoolbook() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    for log_n in 4..=10 {
        let n = 1usize << log_n;
        for bits in [17u32, 25, 30] {
            for &p in &ntt_primes(bits, n, 2, &[]).unwrap() {
                let q = Modulus::new(p as u64).unwrap();
                let table = NttTable::new(q, n).unwrap();
                let a: Vec<u32> = (0..n).map(|_| rng.next_u32() % p).collect();
                let b: Vec<u32> = (0..n).map(|_| rng.next_u32() % p).collect();
                let expected = schoolbook_negacyclic(&a, &b, p as u64);
                let (mut fa, mut fb) = (a.clone(), b.clone());
                table.forward(&mut fa);
                table.forward(&mut fb);
                let mut prod: Vec<u32> = fa.iter().zip(&fb).map(|(&x, &y)| q.mul(x, y)).collect();
                table.inverse(&mut prod);
                assert_eq!(prod, expected, "n={n} p={p}");
            }
        }
    }
}
