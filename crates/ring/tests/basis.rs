//! RingBasis: construction, prefix, select, concat and limb_positions_in, with their errors.

use std::sync::Arc;

use pimhe_math::{Modulus, NttTable};
use pimhe_ring::{RingBasis, RingError};
use pimhe_testkit::inputs::distinct_primes;

#[test]
fn new_records_degree_primes_and_tables() {
    let n = 64;
    let primes = distinct_primes(n, &[30, 20, 25]);
    let basis = RingBasis::new(n, &primes).unwrap();
    assert_eq!(basis.degree(), n);
    assert_eq!(basis.len(), 3);
    assert!(!basis.is_empty());
    assert_eq!(basis.primes(), primes);
    for (i, &p) in primes.iter().enumerate() {
        assert_eq!(basis.modulus(i).value(), p);
        assert_eq!(basis.moduli()[i].value(), p);
        assert_eq!(basis.table(i).degree(), n);
        assert_eq!(basis.table(i).modulus().value(), p);
    }
    let expected_log: f64 = primes.iter().map(|&p| (p as f64).log2()).sum();
    assert!((basis.log_modulus() - expected_log).abs() < 1e-9);
}

#[test]
fn new_rejects_bad_prime_lists() {
    let n = 32;
    let primes = distinct_primes(n, &[30, 25]);
    assert!(matches!(RingBasis::new(n, &[primes[0], primes[1], primes[0]]).unwrap_err(), RingError::BasisMismatch(_)));
    assert!(matches!(RingBasis::new(n, &[]).unwrap_err(), RingError::BasisMismatch(_)));
    // 17 is prime but not 1 mod 2N = 64: no negacyclic NTT.
    assert!(matches!(RingBasis::new(n, &[17]).unwrap_err(), RingError::Math(_)));
    // 65 = 1 mod 64 but 5 * 13; and u32::MAX is too large for the arithmetic.
    assert!(matches!(RingBasis::new(n, &[65]).unwrap_err(), RingError::Math(_)));
    assert!(matches!(RingBasis::new(n, &[u32::MAX]).unwrap_err(), RingError::Math(_)));
}

#[test]
fn from_tables_rejects_tables_of_another_degree() {
    let primes = distinct_primes(64, &[30, 25]);
    let t64 = Arc::new(NttTable::new(Modulus::new(primes[0] as u64).unwrap(), 64).unwrap());
    let t32 = Arc::new(NttTable::new(Modulus::new(primes[1] as u64).unwrap(), 32).unwrap());
    assert!(matches!(RingBasis::from_tables(64, vec![t64.clone(), t32]).unwrap_err(), RingError::BasisMismatch(_)));
    let ok = RingBasis::from_tables(64, vec![t64.clone()]).unwrap();
    assert!(Arc::ptr_eq(ok.table(0), &t64));
}

#[test]
fn prefix_takes_the_first_primes_and_shares_tables() {
    let n = 16;
    let primes = distinct_primes(n, &[30, 29, 28, 27]);
    let basis = RingBasis::new(n, &primes).unwrap();
    for count in 1..=4 {
        let prefix = basis.prefix(count).unwrap();
        assert_eq!(prefix.primes(), primes[..count].to_vec());
        assert_eq!(prefix.degree(), n);
        for i in 0..count {
            assert!(Arc::ptr_eq(prefix.table(i), basis.table(i)));
        }
    }
    assert_eq!(basis.prefix(4).unwrap().as_ref(), basis.as_ref());
    assert_eq!(basis.prefix(0).unwrap_err(), RingError::OutOfRange { what: "prefix length", index: 0, size: 4 });
    assert_eq!(basis.prefix(5).unwrap_err(), RingError::OutOfRange { what: "prefix length", index: 5, size: 4 });
}

#[test]
fn select_takes_primes_in_the_given_order() {
    let n = 16;
    let primes = distinct_primes(n, &[30, 29, 28, 27]);
    let basis = RingBasis::new(n, &primes).unwrap();
    let sel = basis.select(&[3, 0, 2]).unwrap();
    assert_eq!(sel.primes(), vec![primes[3], primes[0], primes[2]]);
    assert!(Arc::ptr_eq(sel.table(0), basis.table(3)));
    // Duplicate index -> duplicate prime.
    assert!(matches!(basis.select(&[1, 1]).unwrap_err(), RingError::BasisMismatch(_)));
    assert_eq!(basis.select(&[0, 4]).unwrap_err(), RingError::OutOfRange { what: "limb", index: 4, size: 4 });
    assert!(matches!(basis.select(&[]).unwrap_err(), RingError::BasisMismatch(_)));
}

#[test]
fn concat_appends_and_rejects_overlap_and_other_degrees() {
    let n = 16;
    let primes = distinct_primes(n, &[30, 29, 28, 27]);
    let low = RingBasis::new(n, &primes[..3]).unwrap();
    let special = RingBasis::new(n, &primes[3..]).unwrap();
    let joined = low.concat(&special).unwrap();
    assert_eq!(joined.primes(), primes);
    assert_eq!(joined.degree(), n);
    assert!(Arc::ptr_eq(joined.table(3), special.table(0)));
    let reversed = special.concat(&low).unwrap();
    assert_eq!(reversed.primes(), vec![primes[3], primes[0], primes[1], primes[2]]);
    assert_ne!(reversed.as_ref(), joined.as_ref());

    // A prime in both: duplicate.
    let overlap = RingBasis::new(n, &[primes[3], primes[1]]).unwrap();
    assert!(matches!(low.concat(&overlap).unwrap_err(), RingError::BasisMismatch(_)));
    // Another degree.
    let other_n = RingBasis::new(8, &primes[3..]).unwrap();
    assert!(matches!(low.concat(&other_n).unwrap_err(), RingError::BasisMismatch(_)));
}

#[test]
fn limb_positions_in_finds_each_prime() {
    let n = 16;
    let primes = distinct_primes(n, &[30, 29, 28, 27, 26]);
    let superset = RingBasis::new(n, &[primes[4], primes[2], primes[0], primes[3], primes[1]]).unwrap();
    let sub = RingBasis::new(n, &[primes[0], primes[1], primes[2]]).unwrap();
    let positions = sub.limb_positions_in(&superset).unwrap();
    assert_eq!(positions, vec![2, 4, 1]);
    for (i, &pos) in positions.iter().enumerate() {
        assert_eq!(superset.primes()[pos], sub.primes()[i]);
    }
    assert_eq!(superset.limb_positions_in(&superset).unwrap(), vec![0, 1, 2, 3, 4]);

    let partial = RingBasis::new(n, &[primes[0], primes[1]]).unwrap();
    let err = sub.limb_positions_in(&partial).unwrap_err();
    match err {
        RingError::BasisMismatch(message) => assert!(message.contains(&primes[2].to_string()), "{message}"),
        other => panic!("unexpected error {other:?}"),
    }
    let other_n = RingBasis::new(8, &primes).unwrap();
    assert!(matches!(sub.limb_positions_in(&other_n).unwrap_err(), RingError::BasisMismatch(_)));
}

#[test]
fn equality_is_degree_and_ordered_primes() {
    let n = 16;
    let primes = distinct_primes(n, &[30, 29]);
    let a = RingBasis::new(n, &primes).unwrap();
    let b = RingBasis::new(n, &primes).unwrap();
    let swapped = RingBasis::new(n, &[primes[1], primes[0]]).unwrap();
    let smaller_n = RingBasis::new(8, &primes).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, swapped);
    assert_ne!(a, smaller_n);
}
