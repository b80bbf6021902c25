//! The NTT product must equal schoolbook negacyclic multiplication.

use pimhe_math::{ntt_primes, Modulus, NttTable};
use pimhe_testkit::inputs::{random_residues, rng};
use pimhe_testkit::oracle::schoolbook;

#[test]
fn ntt_product_matches_schoolbook() {
    let mut rng = rng(1);
    for log_n in 4..=10 {
        let n = 1usize << log_n;
        for bits in [17u32, 25, 30] {
            for &p in &ntt_primes(bits, n, 2, &[]).unwrap() {
                let q = Modulus::new(p as u64).unwrap();
                let table = NttTable::new(q, n).unwrap();
                let a = random_residues(&mut rng, n, p);
                let b = random_residues(&mut rng, n, p);
                let expected = schoolbook(&a, &b, p);
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
