//! The work of key switching and modulus switching that crosses primes, on the DPUs: FastBConv
//! ([`pimhe_exec::Backend::base_convert`], `base_convert_ntt`), ModDown
//! ([`pimhe_exec::Backend::mod_down`]) and the division by the last prime
//! ([`pimhe_exec::Backend::mod_down_last`]), as command lists of the `BCONV` and `DIVIDE_LAST`
//! kernels (dpu/kernels/conversion.h) beside MULC, NTT, INTT, SUB_MULC and CMAC.
//!
//! Each algorithm is the same in three placements; only its step across primes ([`Across`]: the
//! FastBConv sums, DIVIDE_LAST's terms) runs differently. In the ciphertext-major mode
//! ([`super::placement::Mode::CiphertextMajor`]) every limb of a polynomial is on one DPU, so
//! the step is more commands of the same launch. In the sequential mode the limbs are on one
//! DPU too, but each prime runs in its own launch, lowest prime slot first: the step's commands
//! onto target prime q go to q's launch (the kernels take the source prime in the command),
//! after a launch of whatever is pending on a slot not below the first target's, so that the
//! sources are written before they are read. In the hybrid mode the limbs are on their
//! primes' DPU groups, and the step runs on coefficient slices over every DPU (`hybrid.rs`),
//! the rest of the algorithm (scalings, transforms, the final subtraction) on the groups.
//! Each method here returns `None` where none holds (parallel mode, an operand streamed or
//! on the host, no room for the scratch limbs, a barrett-variant prime outside its
//! reduction's range, parameters the CPU refuses); the caller then runs the CPU backend, a
//! counted fallback, which also gives the CPU's error for bad operands. The residues equal the
//! CPU backend's bit for bit: the same integers (FastBConv's sum, its centred form, BGV's
//! t-corrected delta) reduced fully.

use std::sync::Arc;

use pimhe_exec::Shape;
use pimhe_math::{BaseConverter, Modulus, RnsBase};
use pimhe_ring::{Representation, RingBasis};

use super::buffer::{LimbPlacement, PimBuffer};
use super::placement::{Mode, Share};
use super::queue::{command, CommandExt};
use super::residency::Resident;
use super::{PimBackend, State};
use crate::layout::{Opcode, PimheCommand, Variant};

impl PimBackend {
    /// Whether the conversion kernels can reduce residues of `sources` modulo every prime of
    /// `targets`: always with the best variant (Shoup's product takes any word); the barrett
    /// variant's one Barrett reduction of a foreign residue needs it below 2^(2k), k the bit
    /// length of the target prime.
    fn converts(&self, sources: &[u32], targets: &[u32]) -> bool {
        let largest = sources.iter().copied().max().unwrap_or(0) as u64;
        self.config.variant == Variant::Best
            || targets.iter().all(|&q| largest <= 1u64 << (2 * (32 - q.leading_zeros())))
    }

    /// The limbs of `operands`, resident and pinned, when this backend runs conversions on the
    /// DPUs.
    fn conversion_operands(&self, operands: &[&PimBuffer]) -> pimhe_exec::Result<Option<Resident>> {
        if self.conversions_on_host() {
            return Ok(None);
        }
        self.resident(operands)
    }

    /// Runs `across` from `sources` into the limbs `dst`, calling `after_each(state, j)` once
    /// the step has written `dst[j]` (in the ciphertext-major and sequential modes right after
    /// its commands, so one prime's commands stay together; in the hybrid mode once the slices
    /// are back).
    fn across(
        &self,
        state: &mut State,
        sources: &PimBuffer,
        dst: &[&LimbPlacement],
        across: &Across,
        mut after_each: impl FnMut(&PimBackend, &mut State, usize) -> pimhe_exec::Result<()>,
    ) -> pimhe_exec::Result<()> {
        match self.plan.mode() {
            Mode::Hybrid => {
                self.across_on_slices(state, sources, dst, across)?;
                (0..dst.len()).try_for_each(|j| after_each(self, state, j))
            }
            Mode::CiphertextMajor | Mode::Parallel | Mode::Sequential => {
                if self.plan.mode() == Mode::Sequential {
                    self.launch_before(state, dst)?;
                }
                let limbs = sources.placement_in(state)?;
                for (j, limb) in dst.iter().enumerate() {
                    self.queue_across(state, limb, j, &limbs, across)?;
                    after_each(self, state, j)?;
                }
                Ok(())
            }
        }
    }

    /// In sequential mode, where each prime slot runs in its own launch in ascending order:
    /// launches what is pending when any of it is on a slot not below the lowest of `dst`'s, so
    /// that the step's commands, queued on `dst`'s slots, read sources already written (pending
    /// commands on lower slots run before them in the same flush anyway).
    fn launch_before(&self, state: &mut State, dst: &[&LimbPlacement]) -> pimhe_exec::Result<()> {
        let Some(first_target) = dst.iter().map(|limb| limb.slot).min() else { return Ok(()) };
        match state.pending.values().flatten().any(|&(slot, _)| slot >= first_target) {
            true => self.flush(state),
            false => Ok(()),
        }
    }

    /// Queues `across`'s commands writing `dst`, the `j`-th target limb, from `sources` (all on
    /// the same DPUs: ciphertext-major or sequential placements of one count).
    pub(super) fn queue_across(
        &self,
        state: &mut State,
        dst: &LimbPlacement,
        j: usize,
        sources: &[LimbPlacement],
        across: &Across,
    ) -> pimhe_exec::Result<()> {
        match across {
            Across::FastBaseConvert { source_primes, constants, centred } => {
                self.queue_fast_base_convert(state, dst, sources, source_primes, &constants[j], *centred)
            }
            Across::DivideLast { last, plain_modulus } => {
                let q = self.primes[dst.slot];
                // The parameters once (a missing inverse is an error before anything is queued);
                // each share's command differs in its operands and count only.
                let template = PimheCommand::divide_last(0, 0, *last, plain_modulus.as_ref(), &q, 0)?;
                self.queue_limb(state, dst, &[&sources[0]], |share, offsets, out| {
                    let mut divide = template;
                    divide.count = share.len as u32;
                    divide.src[0] = offsets[0];
                    divide.dst[0] = out;
                    divide
                })
            }
        }
    }

    /// Queues one command per share of `dst` (a limb), working modulo `dst`'s prime: `build`
    /// gets the share, the offsets of the same share of each of `sources` (limbs of buffers of
    /// the same polynomial count, so placed alike) and `dst`'s offset.
    fn queue_limb(
        &self,
        state: &mut State,
        dst: &LimbPlacement,
        sources: &[&LimbPlacement],
        build: impl Fn(&Share, &[u32], u32) -> PimheCommand,
    ) -> pimhe_exec::Result<()> {
        for (index, (share, offset)) in dst.shares.iter().enumerate() {
            let offsets: Vec<u32> = sources
                .iter()
                .map(|source| {
                    let (source_share, source_offset) = source.shares[index];
                    debug_assert_eq!(
                        source_share.dpu, share.dpu,
                        "ciphertext-major buffers of one count share a split"
                    );
                    source_offset as u32
                })
                .collect();
            self.enqueue(state, dst.slot, share.dpu, build(share, &offsets, *offset as u32))?;
        }
        Ok(())
    }

    /// `dst := src * c` on every share of one limb.
    fn queue_scale(
        &self,
        state: &mut State,
        dst: &LimbPlacement,
        src: &LimbPlacement,
        c: u32,
    ) -> pimhe_exec::Result<()> {
        let q = self.primes[dst.slot];
        self.queue_limb(state, dst, &[src], |share, offsets, out| {
            command(Opcode::MulC, share.len, &[offsets[0]], &[out]).scalar(c, &q)
        })
    }

    /// NTT or INTT of one limb in place.
    fn queue_transform(&self, state: &mut State, limb: &LimbPlacement, opcode: Opcode) -> pimhe_exec::Result<()> {
        self.queue_limb(state, limb, &[], |share, _, at| command(opcode, share.len, &[at], &[]))
    }

    /// FastBConv of `sources` (scaled residues, one limb per prime of `source_primes`) onto
    /// `dst`: one BCONV per source limb, the first overwriting; `constants[i]` multiplies source
    /// limb i (reduced modulo `dst`'s prime).
    fn queue_fast_base_convert(
        &self,
        state: &mut State,
        dst: &LimbPlacement,
        sources: &[LimbPlacement],
        source_primes: &[u32],
        constants: &[u32],
        centred: bool,
    ) -> pimhe_exec::Result<()> {
        let q = self.primes[dst.slot];
        for (i, source) in sources.iter().enumerate() {
            let c = q.reduce_u64(constants[i].into());
            self.queue_limb(state, dst, &[source], |share, offsets, out| {
                PimheCommand::bconv(out, offsets[0], source_primes[i], c, centred, i > 0, &q, share.len as u32)
            })?;
        }
        Ok(())
    }

    /// [`pimhe_exec::Backend::base_convert`] (`same` = `a`, `transform` false) or
    /// `base_convert_ntt` (`same` = `a` in NTT form, `transform` true) on the DPUs: target limbs
    /// over `a`'s primes are copies of `same`'s, the others FastBConv's sum (transformed when
    /// `transform`).
    pub(super) fn base_convert_resident(
        &self,
        a: &PimBuffer,
        same: &PimBuffer,
        target: &Arc<RingBasis>,
        transform: bool,
    ) -> pimhe_exec::Result<Option<PimBuffer>> {
        let Some(resident) = self.conversion_operands(&[a, same])? else { return Ok(None) };
        let (a_limbs, same_limbs) = (&resident.limbs[0], &resident.limbs[1]);
        let from = a.shape.basis.primes();
        let to = target.primes();
        let same_form = if transform { Representation::Ntt } else { Representation::Coefficient };
        if a.shape.representation != Representation::Coefficient
            || same.shape != (Shape { representation: same_form, ..a.shape.clone() })
            || self.slots(target).is_none()
            || !self.converts(&from, &to)
        {
            return Ok(None);
        }
        let new_limbs: Vec<usize> = (0..to.len()).filter(|&j| !from.contains(&to[j])).collect();
        let source_base = RnsBase::new(&a.shape.basis.moduli())?;
        // None when every target prime is one of a's (nothing to convert).
        let converter = match new_limbs.is_empty() {
            true => None,
            false => Some(BaseConverter::new(&source_base, &RnsBase::new(&target.select(&new_limbs)?.moduli())?)?),
        };
        let out_shape = Shape { basis: target.clone(), count: a.shape.count, representation: same_form };
        let scaled_shape = a.shape.clone();
        // (With no new limb there is nothing across primes: the target limbs are copies.)
        if !new_limbs.is_empty() {
            let new_shape = Shape { basis: target.select(&new_limbs)?, ..out_shape.clone() };
            if !self.across_fits(&scaled_shape, &new_shape) {
                return Ok(None);
            }
        }
        let mut state = self.lock();
        let Some(mut placed) = self.allocate_all(&mut state, &[&out_shape, &scaled_shape])? else { return Ok(None) };
        let (scaled, out) = (placed.pop().expect("two"), placed.pop().expect("two"));
        if !new_limbs.is_empty() {
            // FastBConv's first half, y_i = [a_i (Q/q_i)^-1]_{q_i}, once per source limb.
            for (i, (y, source)) in scaled.iter().zip(a_limbs).enumerate() {
                self.queue_scale(&mut state, y, source, source_base.q_hat_inv()[i])?;
            }
        }
        for (j, limb) in out.iter().enumerate() {
            if let Some(i) = from.iter().position(|&p| p == to[j]) {
                self.queue_scale(&mut state, limb, &same_limbs[i], 1)?;
            }
        }
        let scaled = self.register(&mut state, scaled_shape, scaled);
        if let Some(converter) = converter {
            let constants = (0..new_limbs.len())
                .map(|to_index| converter.q_hat_mod_target(to_index).map(<[u32]>::to_vec))
                .collect::<Result<Vec<_>, _>>()?;
            let across = Across::FastBaseConvert { source_primes: from.to_vec(), constants, centred: false };
            let dst: Vec<&LimbPlacement> = new_limbs.iter().map(|&j| &out[j]).collect();
            let crossed = self.across(&mut state, &scaled, &dst, &across, |backend, state, j| match transform {
                true => backend.queue_transform(state, dst[j], Opcode::Ntt),
                false => Ok(()),
            });
            // The lock goes before the buffer: dropping a buffer takes it.
            if let Err(e) = crossed {
                drop(state);
                return Err(e);
            }
        }
        drop(state);
        // Dropped while its commands are queued: released after they run.
        drop(scaled);
        Ok(Some(self.device_buffer(out_shape, out)))
    }

    /// [`pimhe_exec::Backend::mod_down`] on the DPUs: the dropped limbs scaled (and, in NTT
    /// form, inverse-transformed), the centred FastBConv onto each kept prime with t folded into
    /// its constants (BGV), transformed back, and `(a - delta) P^-1` (SUB_MULC).
    pub(super) fn mod_down_resident(
        &self,
        a: &PimBuffer,
        count: usize,
        plain_modulus: Option<Modulus>,
    ) -> pimhe_exec::Result<Option<PimBuffer>> {
        let Some(resident) = self.conversion_operands(&[a])? else { return Ok(None) };
        let a_limbs = &resident.limbs[0];
        let basis = &a.shape.basis;
        let limbs = basis.len();
        if count == 0 || count >= limbs {
            return Ok(None);
        }
        let kept = limbs - count;
        let moduli = basis.moduli();
        let (kept_moduli, dropped_moduli) = moduli.split_at(kept);
        let dropped_primes: Vec<u32> = dropped_moduli.iter().map(Modulus::value).collect();
        if !self.converts(&dropped_primes, &basis.primes()[..kept]) {
            return Ok(None);
        }
        let dropped_base = RnsBase::new(dropped_moduli)?;
        let converter = BaseConverter::new(&dropped_base, &RnsBase::new(kept_moduli)?)?;
        // y_k = [a t^-1 (P/p_k)^-1]_{p_k}: the CPU's two products as one constant.
        let scale = dropped_moduli
            .iter()
            .zip(dropped_base.q_hat_inv())
            .map(|(p, &q_hat_inv)| match plain_modulus {
                Some(t) => Ok(p.mul(q_hat_inv, p.inv(p.reduce_u64(t.value().into()))?)),
                None => Ok(q_hat_inv),
            })
            .collect::<pimhe_exec::Result<Vec<u32>>>()?;
        let target = basis.prefix(kept)?;
        let representation = a.shape.representation;
        let out_shape = Shape { basis: target.clone(), count: a.shape.count, representation };
        let delta_shape = out_shape.clone();
        let scaled_shape = Shape { basis: basis.select(&(kept..limbs).collect::<Vec<_>>())?, ..out_shape.clone() };
        if !self.across_fits(&scaled_shape, &delta_shape) {
            return Ok(None);
        }
        let ntt_form = representation == Representation::Ntt;
        let mut constants = Vec::with_capacity(kept);
        let mut p_inverses = Vec::with_capacity(kept);
        for (limb, q) in kept_moduli.iter().enumerate() {
            let t = plain_modulus.map_or(1, |t| q.reduce_u64(t.value().into()));
            constants.push(converter.q_hat_mod_target(limb)?.iter().map(|&c| q.mul(c, t)).collect());
            let p_mod_q = dropped_primes.iter().fold(1, |acc, &p| q.mul(acc, q.reduce_u64(p.into())));
            p_inverses.push(q.inv(p_mod_q)?);
        }
        let mut state = self.lock();
        let Some(mut placed) = self.allocate_all(&mut state, &[&out_shape, &delta_shape, &scaled_shape])? else {
            return Ok(None);
        };
        let (scaled, delta, out) =
            (placed.pop().expect("three"), placed.pop().expect("three"), placed.pop().expect("three"));
        for (k, y) in scaled.iter().enumerate() {
            self.queue_scale(&mut state, y, &a_limbs[kept + k], scale[k])?;
            if ntt_form {
                self.queue_transform(&mut state, y, Opcode::Intt)?;
            }
        }
        let scaled = self.register(&mut state, scaled_shape, scaled);
        let across = Across::FastBaseConvert { source_primes: dropped_primes, constants, centred: true };
        let dst: Vec<&LimbPlacement> = delta.iter().collect();
        let crossed = self.across(&mut state, &scaled, &dst, &across, |backend, state, limb| {
            if ntt_form {
                backend.queue_transform(state, &delta[limb], Opcode::Ntt)?;
            }
            let q = kept_moduli[limb];
            backend.queue_limb(state, &out[limb], &[&a_limbs[limb], &delta[limb]], |share, offsets, dst| {
                command(Opcode::SubMulC, share.len, offsets, &[dst]).scalar(p_inverses[limb], &q)
            })
        });
        // The lock goes before the buffers: dropping a buffer takes it.
        drop(state);
        crossed?;
        drop(scaled);
        drop(self.device_buffer(delta_shape, delta));
        Ok(Some(self.device_buffer(out_shape, out)))
    }

    /// [`pimhe_exec::Backend::mod_down_last`] on the DPUs: the last limb r copied (and, in NTT
    /// form, inverse-transformed), DIVIDE_LAST's term `s - r p^-1` onto each kept prime
    /// (transformed back), then `a p^-1` added (CMAC).
    pub(super) fn mod_down_last_resident(
        &self,
        a: &PimBuffer,
        plain_modulus: Option<Modulus>,
    ) -> pimhe_exec::Result<Option<PimBuffer>> {
        let Some(resident) = self.conversion_operands(&[a])? else { return Ok(None) };
        let a_limbs = &resident.limbs[0];
        let basis = &a.shape.basis;
        let limbs = basis.len();
        let primes = basis.primes();
        if limbs < 2 || !self.converts(&primes[limbs - 1..], &primes[..limbs - 1]) {
            return Ok(None);
        }
        let last = limbs - 1;
        let p = primes[last];
        let moduli = basis.moduli();
        // The CPU refuses a plain modulus with a kept prime at or below t/2 + 1 (|s| < q).
        if plain_modulus.is_some_and(|t| moduli[..last].iter().any(|q| q.value() <= t.value() / 2 + 1)) {
            return Ok(None);
        }
        let representation = a.shape.representation;
        let out_shape = Shape { basis: basis.prefix(last)?, count: a.shape.count, representation };
        let residue_shape = Shape { basis: basis.select(&[last])?, ..out_shape.clone() };
        if !self.across_fits(&residue_shape, &out_shape) {
            return Ok(None);
        }
        let ntt_form = representation == Representation::Ntt;
        let p_inverses = moduli[..last].iter().map(|q| q.inv(q.reduce_u64(p.into()))).collect::<Result<Vec<_>, _>>()?;
        let mut state = self.lock();
        let Some(mut placed) = self.allocate_all(&mut state, &[&out_shape, &residue_shape])? else { return Ok(None) };
        let (residue, out) = (placed.pop().expect("two"), placed.pop().expect("two"));
        self.queue_scale(&mut state, &residue[0], &a_limbs[last], 1)?;
        if ntt_form {
            self.queue_transform(&mut state, &residue[0], Opcode::Intt)?;
        }
        let residue = self.register(&mut state, residue_shape, residue);
        let across = Across::DivideLast { last: p, plain_modulus };
        let dst: Vec<&LimbPlacement> = out.iter().collect();
        let crossed = self.across(&mut state, &residue, &dst, &across, |backend, state, limb| {
            if ntt_form {
                backend.queue_transform(state, &out[limb], Opcode::Ntt)?;
            }
            let q = moduli[limb];
            backend.queue_limb(state, &out[limb], &[&a_limbs[limb]], |share, offsets, dst| {
                command(Opcode::CMac, share.len, &[offsets[0]], &[dst]).scalar(p_inverses[limb], &q)
            })
        });
        // The lock goes before the buffer: dropping a buffer takes it.
        drop(state);
        crossed?;
        drop(residue);
        Ok(Some(self.device_buffer(out_shape, out)))
    }
}

/// The step of a conversion that combines residues of different primes, writing one target
/// limb from every source limb (see the module documentation).
pub(super) enum Across {
    /// FastBConv's sum onto target limb `j`: `sum_i [y_i constants[j][i]]`, the scaled source
    /// residues `y_i` taken as centred (those above half their prime negative) when `centred`.
    FastBaseConvert {
        /// The source limbs' primes.
        source_primes: Vec<u32>,
        /// Per target limb, one constant per source limb.
        constants: Vec<Vec<u32>>,
        /// Whether the sources are centred.
        centred: bool,
    },
    /// DIVIDE_LAST's term `s - r p^-1` of the one source limb `r` (modulo the last prime `p`)
    /// under each target prime, with BGV's correction when there is a plain modulus.
    DivideLast {
        /// The last prime `p`.
        last: u32,
        /// BGV's plain modulus t.
        plain_modulus: Option<Modulus>,
    },
}
