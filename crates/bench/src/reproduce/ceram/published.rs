//! The CE-RAM B/FV paper's published figures (seed 004, sections 4.1-4.3), each with its table,
//! and what follows from them alone.

use pimhe_ceram::program::HomOp;
use pimhe_schemes::bfv::special::SpecialCase;

/// The paper's ring degree (section 4.1).
pub const PAPER_DEGREE: usize = 1 << 14;

/// The paper's |q| (section 4.1: "ciphertext modulus size |q| of at least 438"; section 4.3's
/// CPUs: "N = 2^14, |q| = 438").
pub const PAPER_LOG_Q: u32 = 438;

/// The operations of Table 6 (and Table 7), in its column order.
pub const TABLE_6_OPS: [HomOp; 5] = [HomOp::Multiply, HomOp::Add, HomOp::Sub, HomOp::Decrypt, HomOp::Encrypt];

/// Seed 004, Table 2 (section 4.2): speedup of full-RNS CE-RAM without NTT over Reis et al.'s
/// textbook CE-RAM, homomorphic multiplication, actual transfer ("nearly identical to two
/// decimal places when the specified data transfer time was used").
pub const PUBLISHED_TABLE_2: [(SpecialCase, f64); 3] =
    [(SpecialCase::A, 1.28), (SpecialCase::B, 1.90), (SpecialCase::C, 1.12)];

/// Seed 004, Table 3 (section 4.2): speedup of CE-RAM with NTT over CE-RAM without NTT (full-RNS
/// both), per case and operation: [without transfer, with actual, with specified transfer].
pub const PUBLISHED_TABLE_3: [(SpecialCase, HomOp, [f64; 3]); 9] = [
    (SpecialCase::A, HomOp::Multiply, [396.90, 292.56, 182.22]),
    (SpecialCase::A, HomOp::Decrypt, [236.37, 127.91, 82.69]),
    (SpecialCase::A, HomOp::Encrypt, [1525.53, 554.11, 224.86]),
    (SpecialCase::B, HomOp::Multiply, [412.59, 265.90, 146.28]),
    (SpecialCase::B, HomOp::Decrypt, [315.47, 73.75, 38.89]),
    (SpecialCase::B, HomOp::Encrypt, [1085.19, 162.63, 55.60]),
    (SpecialCase::C, HomOp::Multiply, [449.68, 332.32, 207.53]),
    (SpecialCase::C, HomOp::Decrypt, [338.39, 109.45, 60.77]),
    (SpecialCase::C, HomOp::Encrypt, [1100.51, 249.14, 90.09]),
];

/// Seed 004, Table 4 (section 4.2): speedup of cases B and C (novel optimizations) over case A
/// (none), not including NTT, per operation: [no, actual, specified data transfer].
pub const PUBLISHED_TABLE_4: [(SpecialCase, HomOp, [f64; 3]); 10] = [
    (SpecialCase::B, HomOp::Multiply, [1.49, 1.49, 1.49]),
    (SpecialCase::B, HomOp::Decrypt, [2.91, 2.89, 2.86]),
    (SpecialCase::B, HomOp::Encrypt, [4.56, 4.55, 4.52]),
    (SpecialCase::B, HomOp::Add, [37.08, 1.01, 1.00]),
    (SpecialCase::B, HomOp::Sub, [35.15, 1.01, 1.00]),
    (SpecialCase::C, HomOp::Multiply, [0.87, 0.87, 0.87]),
    (SpecialCase::C, HomOp::Decrypt, [1.72, 1.72, 1.71]),
    (SpecialCase::C, HomOp::Encrypt, [2.71, 2.70, 2.69]),
    (SpecialCase::C, HomOp::Add, [33.94, 1.01, 1.00]),
    (SpecialCase::C, HomOp::Sub, [32.32, 1.01, 1.00]),
];

/// Seed 004, Table 6 (section 4.3): speedup of CE-RAM over the CPUs of Table 5 running SEAL,
/// actual data transfer, per CPU and case, in [`TABLE_6_OPS`] order (multiply, add, sub,
/// decrypt, encrypt). The laptop's case-A subtraction is printed "5.9xx".
pub const PUBLISHED_TABLE_6: [(&str, SpecialCase, [f64; 5]); 9] = [
    ("CPU-Server", SpecialCase::A, [579.9, 5.1, 5.2, 75.8, 225.0]),
    ("CPU-Server", SpecialCase::B, [784.2, 5.1, 5.3, 143.9, 330.3]),
    ("CPU-Server", SpecialCase::C, [575.6, 5.1, 5.3, 122.1, 290.2]),
    ("CPU-Laptop", SpecialCase::A, [577.5, 5.7, 5.9, 78.1, 216.3]),
    ("CPU-Laptop", SpecialCase::B, [781.0, 5.8, 5.9, 148.3, 317.5]),
    ("CPU-Laptop", SpecialCase::C, [573.2, 5.8, 5.9, 125.9, 279.0]),
    ("CPU-Workstation", SpecialCase::A, [406.8, 3.6, 3.8, 52.3, 151.5]),
    ("CPU-Workstation", SpecialCase::B, [550.1, 3.6, 3.9, 99.2, 222.4]),
    ("CPU-Workstation", SpecialCase::C, [403.7, 3.6, 3.9, 84.2, 195.4]),
];

/// Seed 004, Table 7 (section 4.3): CE-RAM operations per second with the actual transfer, per
/// case, in [`TABLE_6_OPS`] order. With Table 6 it gives the paper's CPU times.
pub const PUBLISHED_TABLE_7_ACTUAL: [(SpecialCase, [f64; 5]); 3] = [
    (SpecialCase::A, [4150.0, 15568.0, 15567.0, 8558.0, 12734.0]),
    (SpecialCase::B, [5611.0, 15740.0, 15740.0, 16248.0, 18694.0]),
    (SpecialCase::C, [4118.0, 15739.0, 15739.0, 13789.0, 16426.0]),
];

/// Seed 004, Table 7: operations per second with DDR4's specified transfer, in [`TABLE_6_OPS`]
/// order.
pub const PUBLISHED_TABLE_7_SPECIFIED: [(SpecialCase, [f64; 5]); 3] = [
    (SpecialCase::A, [2579.0, 4727.0, 4740.0, 4658.0, 5671.0]),
    (SpecialCase::B, [3078.0, 4756.0, 4756.0, 6275.0, 6609.0]),
    (SpecialCase::C, [2567.0, 4756.0, 4756.0, 5871.0, 6301.0]),
];

/// Seed 004, Table 7: operations per second, computation only, in [`TABLE_6_OPS`] order.
pub const PUBLISHED_TABLE_7_COMPUTE: [(SpecialCase, [f64; 5]); 3] = [
    (SpecialCase::A, [5635.0, 1383126.0, 1381215.0, 13421.0, 27636.0]),
    (SpecialCase::B, [8719.0, 51282051.0, 48543689.0, 52074.0, 89685.0]),
    (SpecialCase::C, [5577.0, 46948357.0, 44642857.0, 33138.0, 53946.0]),
];

/// Why Table 4 is read as "without NTT on both sides": Table 4 x Table 3 (B's NTT speedup /
/// A's) must then equal Table 7's computation-only B vs A ratio (with NTT). Returns, per
/// operation (multiply, decrypt, encrypt), (Table 4 x Table 3 ratio, Table 7 ratio).
pub fn table_4_reading() -> Vec<(HomOp, f64, f64)> {
    let t3 = |case, op| PUBLISHED_TABLE_3.iter().find(|(c, o, _)| *c == case && *o == op).map(|r| r.2[0]).unwrap();
    let t4 = |op| {
        PUBLISHED_TABLE_4.iter().find(|(c, o, _)| *c == SpecialCase::B && *o == op).map(|r| r.2[0]).unwrap_or(f64::NAN)
    };
    let t7 = |case, op| {
        let i = TABLE_6_OPS.iter().position(|o| *o == op).unwrap();
        PUBLISHED_TABLE_7_COMPUTE.iter().find(|(c, _)| *c == case).map(|r| r.1[i]).unwrap()
    };
    [HomOp::Multiply, HomOp::Decrypt, HomOp::Encrypt]
        .into_iter()
        .map(|op| {
            (
                op,
                t4(op) * t3(SpecialCase::B, op) / t3(SpecialCase::A, op),
                t7(SpecialCase::B, op) / t7(SpecialCase::A, op),
            )
        })
        .collect()
}

/// The paper's compute-only time of `op` in `case` (seconds): with NTT 1 / Table 7's
/// computation-only operations per second; without NTT that times Table 3's speedup without
/// transfer (addition and subtraction have no products: the same time).
pub fn published_compute_s(case: SpecialCase, op: HomOp, ntt: bool) -> f64 {
    let i = TABLE_6_OPS.iter().position(|o| *o == op).expect("a Table 6 operation");
    let with = 1.0 / PUBLISHED_TABLE_7_COMPUTE.iter().find(|(c, _)| *c == case).map(|r| r.1[i]).unwrap();
    if ntt {
        return with;
    }
    PUBLISHED_TABLE_3.iter().find(|(c, o, _)| *c == case && *o == op).map_or(with, |r| with * r.2[0])
}

/// Seed 004, Table 8 (section 4.5): speedup of homomorphic multiplication, this design (with
/// NTT) over the existing CE-RAM design of Reis et al. [33], per case: [specified, actual
/// transfer].
pub const PUBLISHED_TABLE_8: [(SpecialCase, [f64; 2]); 3] =
    [(SpecialCase::A, [232.8, 374.6]), (SpecialCase::B, [277.8, 506.5]), (SpecialCase::C, [231.7, 371.8])];

/// Seed 004, section 4.4: homomorphic multiplications per second of two 16 MB banks, case B,
/// actual transfer ("approximately doubles ... to 11222").
pub const PUBLISHED_TWO_BANKS: f64 = 11222.0;

/// Seed 004, Table 9 (section 4.5): speedup of homomorphic multiplication, case B, over Roy et
/// al.'s FPGA [35] at N = 2^13, |q| = 360: [actual transfer, specified transfer, computation
/// only].
pub const PUBLISHED_TABLE_9: [f64; 3] = [66.85, 36.6, 103.48];

/// The operations of Table 10, in its column order.
pub const TABLE_10_OPS: [HomOp; 4] = [HomOp::Multiply, HomOp::Add, HomOp::Decrypt, HomOp::Encrypt];

/// Seed 004, Table 10 (section 4.5): speedup of CE-RAM over Al Badawi et al.'s B/FV on a GPU
/// [2] at N = 2^13, |q| = 360, per case, in [`TABLE_10_OPS`] order.
pub const PUBLISHED_TABLE_10: [(SpecialCase, [f64; 4]); 3] = [
    (SpecialCase::A, [19.9, 4.1, 2.0, 29.9]),
    (SpecialCase::B, [30.8, 153.8, 7.9, 96.9]),
    (SpecialCase::C, [19.7, 140.8, 5.0, 58.3]),
];
