//! The modular operations that the wide NTT, FastBConv and the CRT need, shared by the special
//! moduli ([`SpecialModulus`](super::SpecialModulus)) and Barrett-reduced generic moduli
//! ([`BarrettModulus`](super::BarrettModulus)).

use super::wide::Wide;

/// Arithmetic modulo a wide modulus m. Inputs of `add`, `sub`, `mul` and `neg` are residues in
/// [0, m); outputs are too. Implementations are branch-free in the values (not in m).
pub trait WideArith {
    /// The modulus m.
    fn modulus(&self) -> &Wide;
    /// (a + b) mod m.
    fn add(&self, a: &Wide, b: &Wide) -> Wide;
    /// (a - b) mod m.
    fn sub(&self, a: &Wide, b: &Wide) -> Wide;
    /// (a * b) mod m.
    fn mul(&self, a: &Wide, b: &Wide) -> Wide;
    /// Any 256-bit value reduced into [0, m).
    fn reduce(&self, x: &Wide) -> Wide;
    /// (-a) mod m.
    fn neg(&self, a: &Wide) -> Wide {
        self.sub(&Wide::ZERO, a)
    }
    /// a^e mod m by square-and-multiply over the bits of e (variable time in e: use it for
    /// public exponents such as roots of unity and Fermat inverses, not for secrets).
    fn pow(&self, a: &Wide, e: &Wide) -> Wide {
        let mut acc = self.reduce(&Wide::ONE);
        for bit in (0..e.bit_width_vartime()).rev() {
            acc = self.mul(&acc, &acc);
            if e.bit_vartime(bit) {
                acc = self.mul(&acc, a);
            }
        }
        acc
    }
}
