//! Sampler determinism, ranges and distribution shape (fixed seeds, so no flakiness).

use pimhe_math::{GaussianTable, Modulus, Sampler, DEFAULT_SIGMA};

fn mean_and_variance(samples: &[i64]) -> (f64, f64) {
    let n = samples.len() as f64;
    let mean = samples.iter().map(|&x| x as f64).sum::<f64>() / n;
    let variance = samples.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, variance)
}

/// Pearson chi-square statistic of observed counts against expected counts.
fn chi_square(observed: &[u64], expected: &[f64]) -> f64 {
    observed.iter().zip(expected).map(|(&o, &e)| (o as f64 - e).powi(2) / e).sum()
}

#[test]
fn same_seed_same_stream() {
    let q = Modulus::new(1_073_479_681).unwrap();
    let table = GaussianTable::default();
    let run = |mut s: Sampler| {
        let mut bytes = [0u8; 37];
        s.fill_bytes(&mut bytes);
        (
            s.next_u32(),
            s.next_u64(),
            bytes,
            s.uniform_vec(&q, 100),
            s.ternary(100),
            s.gaussian(&table, 100),
            s.centered_binomial(100, 21),
        )
    };
    assert_eq!(run(Sampler::from_seed_u64(42)), run(Sampler::from_seed_u64(42)));
    let seed = [7u8; 32];
    assert_eq!(run(Sampler::from_seed(seed)), run(Sampler::from_seed(seed)));
    assert_ne!(run(Sampler::from_seed_u64(42)), run(Sampler::from_seed_u64(43)));
    assert_ne!(run(Sampler::from_seed([7u8; 32])), run(Sampler::from_seed([8u8; 32])));
}

#[test]
fn different_seeds_differ_per_sampler() {
    let q = Modulus::new(1_073_479_681).unwrap();
    let table = GaussianTable::default();
    let (mut a, mut b) = (Sampler::from_seed_u64(1), Sampler::from_seed_u64(2));
    assert_ne!(a.uniform_vec(&q, 64), b.uniform_vec(&q, 64));
    assert_ne!(a.ternary(256), b.ternary(256));
    assert_ne!(a.gaussian(&table, 256), b.gaussian(&table, 256));
    assert_ne!(a.centered_binomial(256, 8), b.centered_binomial(256, 8));
    // The stream advances: consecutive draws differ.
    let mut c = Sampler::from_seed_u64(1);
    assert_ne!(c.uniform_vec(&q, 64), c.uniform_vec(&q, 64));
    // OS seeding works and gives independent streams.
    let (mut x, mut y) = (Sampler::from_os().unwrap(), Sampler::from_os().unwrap());
    assert_ne!(x.uniform_vec(&q, 64), y.uniform_vec(&q, 64));
}

#[test]
fn uniform_in_range() {
    let mut s = Sampler::from_seed_u64(3);
    for q in [2u32, 3, 17, 7681, 805_306_368, (1 << 30) - 1, 1_073_479_681] {
        let m = Modulus::new(q as u64).unwrap();
        let values = s.uniform_vec(&m, 20_000);
        assert!(values.iter().all(|&x| x < q), "q={q}");
        if q > 1000 {
            // Both halves are hit and the largest value is close to q.
            assert!(values.iter().any(|&x| x < q / 2) && values.iter().any(|&x| x >= q / 2));
            assert!(*values.iter().max().unwrap() as u64 > q as u64 * 99 / 100);
        } else {
            // Small moduli: every residue appears.
            for r in 0..q {
                assert!(values.contains(&r), "q={q} never produced {r}");
            }
        }
    }
}

#[test]
fn uniform_is_roughly_uniform() {
    let mut s = Sampler::from_seed_u64(4);
    // Small modulus: one bin per residue. 16 degrees of freedom; the 99.99% quantile is ~42.
    let q = 17u32;
    let samples = 170_000;
    let mut counts = vec![0u64; q as usize];
    for x in s.uniform_vec(&Modulus::new(q as u64).unwrap(), samples) {
        counts[x as usize] += 1;
    }
    let expected = vec![samples as f64 / q as f64; q as usize];
    let stat = chi_square(&counts, &expected);
    assert!(stat < 50.0, "chi-square {stat} for q=17: {counts:?}");

    // Large modulus: 32 equal-width buckets of [0, q).
    let q = 805_306_368u32; // 3 * 2^28: 2^32 mod q = 2^28, so an unrejected sampler is biased
    let mut counts = vec![0u64; 32];
    for x in s.uniform_vec(&Modulus::new(q as u64).unwrap(), 320_000) {
        counts[(x as u64 * 32 / q as u64) as usize] += 1;
    }
    let stat = chi_square(&counts, &[10_000.0; 32]);
    assert!(stat < 80.0, "chi-square {stat} for q={q}: {counts:?}");
}

#[test]
fn ternary_is_uniform_on_three_values() {
    let mut s = Sampler::from_seed_u64(5);
    let samples = s.ternary(300_000);
    let mut counts = [0u64; 3];
    for x in samples {
        assert!((-1..=1).contains(&x), "ternary produced {x}");
        counts[(x + 1) as usize] += 1;
    }
    for (value, &count) in [-1, 0, 1].iter().zip(&counts) {
        let frequency = count as f64 / 300_000.0;
        assert!(
            (frequency - 1.0 / 3.0).abs() < 0.01 / 3.0,
            "frequency of {value} is {frequency}, not within 1% of 1/3"
        );
    }
}

#[test]
fn gaussian_moments_and_support() {
    let mut s = Sampler::from_seed_u64(6);
    let table = GaussianTable::default();
    assert_eq!(table.sigma(), DEFAULT_SIGMA);
    assert_eq!(table.bound(), (6.0 * DEFAULT_SIGMA).ceil() as i64);
    let samples = s.gaussian(&table, 200_000);
    assert!(samples.iter().all(|&x| x.abs() <= table.bound()));
    let (mean, variance) = mean_and_variance(&samples);
    assert!(mean.abs() < 0.05, "mean {mean}");
    let std = variance.sqrt();
    assert!((std - DEFAULT_SIGMA).abs() < 0.03 * DEFAULT_SIGMA, "std {std}");
    // Symmetry: as many positive as negative samples, within a loose bound.
    let positive = samples.iter().filter(|&&x| x > 0).count() as f64;
    let negative = samples.iter().filter(|&&x| x < 0).count() as f64;
    assert!((positive - negative).abs() < 0.02 * (positive + negative));
}

#[test]
fn gaussian_matches_pmf() {
    // Compare the central bins with exp(-x^2 / 2 sigma^2) normalised over the support.
    for (seed, sigma) in [(7u64, DEFAULT_SIGMA), (8, 1.0), (9, 10.5)] {
        let mut s = Sampler::from_seed_u64(seed);
        let table = GaussianTable::new(sigma);
        let bound = table.bound();
        let total = 200_000;
        let samples = s.gaussian(&table, total);
        let weights: Vec<f64> = (-bound..=bound).map(|x| (-((x * x) as f64) / (2.0 * sigma * sigma)).exp()).collect();
        let normaliser: f64 = weights.iter().sum();
        // Bins with at least 50 expected samples, plus one bin collecting both tails.
        let central: Vec<i64> =
            (-bound..=bound).filter(|&x| weights[(x + bound) as usize] / normaliser * total as f64 >= 50.0).collect();
        let mut observed = vec![0u64; central.len() + 1];
        let mut expected = vec![0f64; central.len() + 1];
        for x in -bound..=bound {
            let e = weights[(x + bound) as usize] / normaliser * total as f64;
            match central.iter().position(|&c| c == x) {
                Some(k) => expected[k] += e,
                None => expected[central.len()] += e,
            }
        }
        for &x in &samples {
            match central.iter().position(|&c| c == x) {
                Some(k) => observed[k] += 1,
                None => observed[central.len()] += 1,
            }
        }
        let stat = chi_square(&observed, &expected);
        let dof = central.len() as f64;
        // Mean dof, sd sqrt(2 dof): allow dof + 6 sd + 10.
        assert!(stat < dof + 6.0 * (2.0 * dof).sqrt() + 10.0, "sigma={sigma}: chi-square {stat} with {dof} dof");
        let (_, variance) = mean_and_variance(&samples);
        assert!((variance.sqrt() - sigma).abs() < 0.03 * sigma, "sigma={sigma}: std {}", variance.sqrt());
    }
}

#[test]
fn centered_binomial_variance() {
    let mut s = Sampler::from_seed_u64(10);
    for eta in [1u32, 2, 3, 8, 21, 32] {
        let samples = s.centered_binomial(200_000, eta);
        assert!(samples.iter().all(|&x| x.abs() <= eta as i64), "eta={eta}");
        let (mean, variance) = mean_and_variance(&samples);
        let expected = eta as f64 / 2.0;
        assert!(mean.abs() < 0.05 * expected.sqrt().max(1.0), "eta={eta}: mean {mean}");
        assert!((variance - expected).abs() < 0.03 * expected, "eta={eta}: variance {variance}, want {expected}");
        // The extremes are reachable for small eta.
        if eta <= 3 {
            assert!(samples.contains(&(eta as i64)) && samples.contains(&-(eta as i64)));
        }
    }
}

#[test]
#[should_panic(expected = "centered binomial needs 1 <= eta <= 32")]
fn centered_binomial_rejects_eta_zero() {
    Sampler::from_seed_u64(0).centered_binomial(1, 0);
}

#[test]
fn extend_uniform_is_the_same_stream_as_one_residue_at_a_time() {
    // Small primes reject often (2^32 mod q is large relative to q), large ones rarely.
    for q in [3u32, 257, 12289, 65537, 786_433, 1_073_479_681] {
        let modulus = Modulus::new(q as u64).unwrap();
        let mut one_by_one = Sampler::from_seed([7; 32]);
        let expected: Vec<u32> = (0..5000).map(|_| one_by_one.uniform(&modulus)).collect();
        let mut at_once = Sampler::from_seed([7; 32]);
        let mut got = vec![42];
        at_once.extend_uniform(&modulus, 5000, &mut got);
        assert_eq!(got[0], 42, "what was there stays");
        assert_eq!(&got[1..], &expected[..]);
        assert!(got[1..].iter().all(|&r| r < q));
        // Both read the same words: what follows is the same too.
        assert_eq!(one_by_one.uniform(&modulus), at_once.uniform(&modulus));
        assert_eq!(Sampler::from_seed([7; 32]).uniform_vec(&modulus, 5000), expected);
    }
}
