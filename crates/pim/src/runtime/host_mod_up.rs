//! ModUp on the host, whole, where the placement puts conversions there (the parallel mode:
//! one DPU group per prime, so nothing on a DPU sees a coefficient's other residues).
//!
//! The composed ModUp ([`pimhe_exec::key_switch::composed_mod_up`]) is a copy and an INTT of
//! the input, and per digit two restrictions (copies) and a FastBConv with its NTTs. In this
//! placement the FastBConv is a host fallback that pulls its operands anyway, so the copy, the
//! INTT and the restrictions on the DPUs only prepare what the host then reads: the busiest
//! DPU spent more time on them than on the tensor product (`pimhe demo`, N = 8192: an INTT and
//! three copies of 8192 words each). Pulling the input once in NTT form moves the same bytes
//! as pulling the coefficient form; the host's INTT of those limbs is priced by the host model
//! with the conversions. The digits are pushed back as the composed fallbacks push them. The
//! residues are the CPU backend's `mod_up`, which equals the composed one by the `Backend`
//! contract.

use pimhe_exec::{Backend, KeySwitchPlan, Shape};
use pimhe_ring::Representation;

use super::backend::conversion_work;
use super::buffer::PimBuffer;
use super::placement::Mode;
use super::PimBackend;
use crate::model::host::HostWork;

impl PimBackend {
    /// Whether this placement runs the conversions across primes on the host (the parallel
    /// mode), and with them ModUp whole.
    pub(super) fn conversions_on_host(&self) -> bool {
        self.plan.mode() == Mode::Parallel
    }

    /// [`Backend::mod_up`] as one counted fallback: `c` pulled, the CPU backend's ModUp, every
    /// digit pushed.
    pub(super) fn host_mod_up(&self, c: &PimBuffer, plan: &KeySwitchPlan) -> pimhe_exec::Result<Vec<PimBuffer>> {
        let digits = self.fallback(&[c], |cpu, host| cpu.mod_up(&host[0], plan))?;
        let mut state = self.lock();
        state.report.host_fallback_modeled_s += self.config.host.seconds(&mod_up_work(&c.shape, plan), self.n);
        let pushed = digits.into_iter().map(|digit| self.push(&mut state, digit)).collect();
        self.check_budget(&state)?;
        pushed
    }
}

/// The host's work in a ModUp of `c` (NTT form): each limb inverse-transformed once, then per
/// digit a FastBConv onto the primes of `plan.extended` outside it (each digit limb scaled,
/// one product per digit limb and new limb) and the new limbs transformed.
fn mod_up_work(c: &Shape, plan: &KeySwitchPlan) -> HostWork {
    let polys = c.count as u64;
    let inverse = if c.representation == Representation::Ntt { polys * c.basis.len() as u64 } else { 0 };
    plan.digits.iter().fold(HostWork { transforms: inverse, products: 0 }, |work, digit| {
        let digit = Shape { basis: digit.clone(), count: c.count, representation: Representation::Coefficient };
        work.plus(conversion_work(&digit, plan.extended, true))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use pimhe_math::ntt_primes;
    use pimhe_ring::RingBasis;

    #[test]
    fn mod_up_work_counts_the_inverse_transforms_and_each_digits_conversion() {
        // Hand count: 2 polynomials over 3 primes, digits {q0, q1} and {q2}, one special prime.
        let primes = ntt_primes(30, 16, 4, &[]).unwrap();
        let basis = |ps: &[u32]| RingBasis::new(16, ps).unwrap();
        let input = basis(&primes[..3]);
        let extended = basis(&primes);
        let digits = [basis(&primes[..2]), basis(&primes[2..3])];
        let plan = KeySwitchPlan { digits: &digits, extended: &extended, plain_modulus: None };
        let shape = Shape { basis: input, count: 2, representation: Representation::Ntt };
        // INTT: 2 x 3. Digit 0: 2 new limbs (q2, p), 2 x 2 NTTs, 2 x 16 x 2 x 3 products.
        // Digit 1: 3 new limbs (q0, q1, p), 2 x 3 NTTs, 2 x 16 x 1 x 4 products.
        assert_eq!(mod_up_work(&shape, &plan), HostWork { transforms: 6 + 4 + 6, products: 192 + 128 });
    }
}
