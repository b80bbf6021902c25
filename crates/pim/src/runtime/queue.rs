//! The command queue: operations append commands to per-DPU command lists ([`PimBackend::emit`]),
//! and the lists run in one launch when data must come back ([`PimBackend::flush`]): one launch in
//! parallel mode, one per prime in sequential mode, each counted in the report.

use std::collections::BTreeMap;

use pimhe_math::Modulus;

use super::buffer::{release, LimbPlacement};
use super::placement::{Mode, Share};
use super::{device_error, PimBackend, State};
use crate::counts::DpuCounts;
use crate::device::LaunchCost;
use crate::layout::{self, MramLayout, Opcode, PimheCommand, FLAG_BROADCAST_SRC1};

/// Most commands one DPU runs in one launch; more pending commands force an earlier launch.
pub(super) const MAX_COMMANDS: usize = 256;

/// Per prime slot, per DPU: commands not yet launched.
pub(super) type Pending = BTreeMap<usize, BTreeMap<usize, Vec<PimheCommand>>>;

impl PimBackend {
    /// Runs every pending command list: one launch in parallel mode (each DPU serves one
    /// prime), one launch per prime in sequential mode.
    pub(super) fn flush(&self, state: &mut State) -> pimhe_exec::Result<()> {
        let pending = std::mem::take(&mut state.pending);
        let launched = if pending.is_empty() { Ok(()) } else { self.launch(state, pending) };
        // The queued commands have run, or were dropped with a failed launch: nothing reads the
        // memory of buffers freed while they were queued any more.
        let deferred = std::mem::take(&mut state.deferred);
        release(&mut state.memory, &deferred, self.n);
        launched
    }

    /// Launches the command lists `pending` holds (see [`Self::flush`]).
    fn launch(&self, state: &mut State, pending: Pending) -> pimhe_exec::Result<()> {
        let launches: Vec<BTreeMap<usize, (usize, Vec<PimheCommand>)>> = match self.plan.mode() {
            Mode::Parallel => {
                let mut all = BTreeMap::new();
                for (slot, per_dpu) in pending {
                    for (dpu, commands) in per_dpu {
                        all.insert(dpu, (slot, commands));
                    }
                }
                vec![all]
            }
            Mode::Sequential => pending
                .into_iter()
                .map(|(slot, per_dpu)| per_dpu.into_iter().map(|(dpu, c)| (dpu, (slot, c))).collect())
                .collect(),
        };
        for launch in launches {
            let mut dpus = Vec::with_capacity(launch.len());
            for (&dpu, (slot, commands)) in &launch {
                let (twiddle_offset, inv_twiddle_offset) = state.table_offsets[dpu][slot];
                let layout = MramLayout {
                    n: self.n,
                    twiddle_offset,
                    inv_twiddle_offset,
                    command_offset: layout::HEADER_BYTES as u32,
                    command_capacity: MAX_COMMANDS as u32,
                    data_offset: 0,
                };
                let header = self.tables[*slot].header(self.config.variant, &layout, commands.len() as u32);
                state.dpus.write(dpu, 0, &header.to_bytes()).map_err(device_error)?;
                state
                    .dpus
                    .write(dpu, layout::HEADER_BYTES, &layout::commands_to_bytes(commands))
                    .map_err(device_error)?;
                dpus.push(dpu);
            }
            state.report.compute_s += match state.dpus.launch(&dpus).map_err(device_error)? {
                LaunchCost::Counted(result) => {
                    state.report.counted.accumulate(&result.total());
                    let multiplies: Vec<_> = result.multiplies.into_iter().map(|(_, m)| m).collect();
                    let counts: Vec<DpuCounts> = result.dpus.into_iter().map(|(_, c)| c).collect();
                    self.config.model.launch_seconds_with(&counts, &multiplies)
                }
                LaunchCost::Measured { seconds } => seconds,
            };
            state.report.launches += 1;
        }
        let ranks = self.config.dpus.div_ceil(64) as u32;
        state.report.energy_j = self.config.model.energy_joules(state.report.total_s(), ranks);
        Ok(())
    }

    pub(super) fn enqueue(
        &self,
        state: &mut State,
        slot: usize,
        dpu: usize,
        command: PimheCommand,
    ) -> pimhe_exec::Result<()> {
        let full = state.pending.get(&slot).and_then(|p| p.get(&dpu)).is_some_and(|c| c.len() >= MAX_COMMANDS);
        if full {
            self.flush(state)?;
        }
        state.pending.entry(slot).or_default().entry(dpu).or_default().push(command);
        Ok(())
    }

    /// Emits one command per (limb, share) of `a`'s placement. `build(limb, index, share,
    /// offsets)` gets the position of the share in `a`'s placement and the MRAM offsets of every
    /// operand's polynomials on the share's DPU (`a` first; for each of `others`, the limb with
    /// the same prime; a single-polynomial operand is replicated and so broadcast).
    pub(super) fn emit(
        &self,
        state: &mut State,
        a: &[LimbPlacement],
        others: &[&[LimbPlacement]],
        build: impl Fn(usize, usize, &Share, &[u32]) -> PimheCommand,
    ) -> pimhe_exec::Result<()> {
        for (limb_index, limb) in a.iter().enumerate() {
            for (share_index, (share, offset)) in limb.shares.iter().enumerate() {
                let mut offsets = vec![*offset as u32];
                for placement in others {
                    let other = placement.iter().find(|l| l.slot == limb.slot).expect("operands were validated");
                    let (_, other_offset) = other
                        .shares
                        .iter()
                        .find(|(s, _)| s.dpu == share.dpu)
                        .expect("equal counts (or a replicated single polynomial) share a split");
                    offsets.push(*other_offset as u32);
                }
                let command = build(limb_index, share_index, share, &offsets);
                self.enqueue(state, limb.slot, share.dpu, command)?;
            }
        }
        Ok(())
    }
}

/// A kernel command over `count` sub-polynomials per operand at the given MRAM offsets.
pub(super) fn command(opcode: Opcode, count: usize, src: &[u32], dst: &[u32]) -> PimheCommand {
    let mut command = PimheCommand { opcode: opcode as u32, count: count as u32, ..PimheCommand::default() };
    command.src[..src.len()].copy_from_slice(src);
    command.dst[..dst.len()].copy_from_slice(dst);
    command
}

/// Builder steps for the optional parts of a command.
pub(super) trait CommandExt {
    /// Marks `src[1]` as one sub-polynomial applied to every sub-polynomial of `src[0]`.
    fn broadcast_second(self, single: bool) -> Self;
    /// The MULC constant `c` (reduced modulo `q`) with its Shoup quotient.
    fn scalar(self, c: u32, q: &Modulus) -> Self;
}

impl CommandExt for PimheCommand {
    fn broadcast_second(mut self, single: bool) -> Self {
        if single {
            self.flags |= FLAG_BROADCAST_SRC1;
        }
        self
    }

    fn scalar(mut self, c: u32, q: &Modulus) -> Self {
        self.scalar = c;
        self.scalar_shoup = q.shoup(c);
        self
    }
}
