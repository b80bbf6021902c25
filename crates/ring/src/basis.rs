//! A ring degree together with an ordered list of primes and their NTT tables.

use std::fmt;
use std::sync::Arc;

use pimhe_math::{Modulus, NttTable};

use crate::error::{Result, RingError};

/// The RNS basis of a batch: ring degree N and primes q_0, ..., q_{L-1}, each with its NTT
/// twiddles. Tables are shared (`Arc`) between bases, so taking a prefix or a sub-basis of a
/// basis (a lower level, a key-switching basis) costs no recomputation.
///
/// ```
/// use pimhe_ring::RingBasis;
/// let primes = pimhe_math::ntt_primes(30, 1024, 3, &[]).unwrap();
/// let basis = RingBasis::new(1024, &primes).unwrap();
/// assert_eq!(basis.len(), 3);
/// assert_eq!(basis.prefix(2).unwrap().primes(), primes[..2].to_vec());
/// ```
#[derive(Clone)]
pub struct RingBasis {
    n: usize,
    tables: Vec<Arc<NttTable>>,
}

impl RingBasis {
    /// Builds the basis of degree `n` over `primes` (each prime, = 1 mod 2N, distinct).
    pub fn new(n: usize, primes: &[u32]) -> Result<Arc<Self>> {
        let tables = primes
            .iter()
            .map(|&p| Ok(Arc::new(NttTable::new(Modulus::new(p as u64)?, n)?)))
            .collect::<Result<Vec<_>>>()?;
        Self::from_tables(n, tables)
    }

    /// Builds a basis from existing tables (shared, not recomputed).
    pub fn from_tables(n: usize, tables: Vec<Arc<NttTable>>) -> Result<Arc<Self>> {
        if tables.is_empty() {
            return Err(RingError::BasisMismatch("a basis needs at least one prime".into()));
        }
        for (i, table) in tables.iter().enumerate() {
            if table.degree() != n {
                return Err(RingError::BasisMismatch(format!(
                    "prime {} has tables for N={}, the basis has N={n}",
                    table.modulus().value(),
                    table.degree()
                )));
            }
            if tables[..i].iter().any(|t| t.modulus() == table.modulus()) {
                return Err(RingError::BasisMismatch(format!("prime {} appears twice", table.modulus().value())));
            }
        }
        Ok(Arc::new(Self { n, tables }))
    }

    /// The ring degree N.
    pub fn degree(&self) -> usize {
        self.n
    }

    /// The number of primes L.
    pub fn len(&self) -> usize {
        self.tables.len()
    }

    /// Always false: a basis has at least one prime.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// The NTT table of limb `i`.
    pub fn table(&self, i: usize) -> &Arc<NttTable> {
        &self.tables[i]
    }

    /// All NTT tables, in limb order.
    pub fn tables(&self) -> &[Arc<NttTable>] {
        &self.tables
    }

    /// The modulus of limb `i`.
    pub fn modulus(&self, i: usize) -> &Modulus {
        self.tables[i].modulus()
    }

    /// The moduli, in limb order.
    pub fn moduli(&self) -> Vec<Modulus> {
        self.tables.iter().map(|t| *t.modulus()).collect()
    }

    /// The primes, in limb order.
    pub fn primes(&self) -> Vec<u32> {
        self.tables.iter().map(|t| t.modulus().value()).collect()
    }

    /// Total size of the modulus product in bits (sum of log2 of the primes).
    pub fn log_modulus(&self) -> f64 {
        self.tables.iter().map(|t| (t.modulus().value() as f64).log2()).sum()
    }

    /// The basis of the first `count` primes (a lower level of a modulus chain).
    pub fn prefix(&self, count: usize) -> Result<Arc<Self>> {
        if count == 0 || count > self.len() {
            return Err(RingError::OutOfRange { what: "prefix length", index: count, size: self.len() });
        }
        Self::from_tables(self.n, self.tables[..count].to_vec())
    }

    /// The basis of the primes at `indices`, in that order.
    pub fn select(&self, indices: &[usize]) -> Result<Arc<Self>> {
        let tables = indices
            .iter()
            .map(|&i| {
                self.tables.get(i).cloned().ok_or(RingError::OutOfRange { what: "limb", index: i, size: self.len() })
            })
            .collect::<Result<Vec<_>>>()?;
        Self::from_tables(self.n, tables)
    }

    /// This basis followed by the primes of `other` (e.g. a level plus the key-switching prime).
    pub fn concat(&self, other: &RingBasis) -> Result<Arc<Self>> {
        if other.n != self.n {
            return Err(RingError::BasisMismatch(format!("cannot join bases of N={} and N={}", self.n, other.n)));
        }
        Self::from_tables(self.n, self.tables.iter().chain(&other.tables).cloned().collect())
    }

    /// For each limb of `self`, the index of the same prime in `superset`; an error naming the
    /// first missing prime otherwise. This is how a key or plaintext kept at the top level is
    /// used by a ciphertext at a lower level without copying.
    pub fn limb_positions_in(&self, superset: &RingBasis) -> Result<Vec<usize>> {
        if self.n != superset.n {
            return Err(RingError::BasisMismatch(format!("ring degree {} differs from {}", self.n, superset.n)));
        }
        let primes = superset.primes();
        self.tables
            .iter()
            .map(|t| {
                let p = t.modulus().value();
                primes
                    .iter()
                    .position(|&x| x == p)
                    .ok_or_else(|| RingError::BasisMismatch(format!("prime {p} is missing from {superset}")))
            })
            .collect()
    }
}

impl PartialEq for RingBasis {
    fn eq(&self, other: &Self) -> bool {
        self.n == other.n && self.primes() == other.primes()
    }
}

impl Eq for RingBasis {}

impl fmt::Debug for RingBasis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for RingBasis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RingBasis(N={}, primes={:?})", self.n, self.primes())
    }
}
