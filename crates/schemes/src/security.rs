//! The 128-bit security bound on the modulus size, from the HomomorphicEncryption.org standard.

/// Largest log2(Q) (total bits of every prime, including key-switching primes) for 128-bit
/// classical security with a ternary secret, by ring degree: Table 1 of the Homomorphic
/// Encryption Security Standard (Albrecht et al., 2018), the same table SEAL and OpenFHE use, up
/// to N = 2^15. The standard stops there; N = 2^16 (CKKS) takes OpenFHE's extension of the same
/// estimate (`HEStd_128_classic`, ternary, in `src/core/lib/lattice/stdlatticeparms.cpp`): 1747.
pub const MAX_LOG_Q_128: [(usize, u32); 7] =
    [(1024, 27), (2048, 54), (4096, 109), (8192, 218), (16384, 438), (32768, 881), (65536, 1747)];

/// The 128-bit bound for ring degree `n`, or `None` for degrees the table does not cover.
///
/// ```
/// assert_eq!(pimhe_schemes::security::max_log_q_128(8192), Some(218));
/// assert_eq!(pimhe_schemes::security::max_log_q_128(65536), Some(1747));
/// assert_eq!(pimhe_schemes::security::max_log_q_128(512), None);
/// ```
pub fn max_log_q_128(n: usize) -> Option<u32> {
    MAX_LOG_Q_128.iter().find(|&&(degree, _)| degree == n).map(|&(_, bits)| bits)
}
