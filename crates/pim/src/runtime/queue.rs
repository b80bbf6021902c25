//! The command queue: operations append commands to per-DPU command lists ([`PimBackend::emit`],
//! [`PimBackend::enqueue`]), and the lists run in one launch when data must come back
//! ([`PimBackend::flush`]): one launch in parallel and ciphertext-major modes, one per prime in
//! sequential mode, each counted in the report. In ciphertext-major mode a DPU's list mixes
//! primes in the order the operations queued them, a `SET_PRIME` before each change of prime,
//! so a command may read what a command of another prime wrote (base conversion).

use std::collections::BTreeMap;

use pimhe_math::Modulus;

use super::buffer::{release, LimbPlacement};
use super::placement::{Mode, Share};
use super::{device_error, launch_layout, PimBackend, State};
use crate::counts::DpuCounts;
use crate::device::LaunchCost;
use crate::layout::{self, Opcode, PimheCommand, FLAG_BROADCAST_SRC1};

/// Most commands one DPU runs in one launch; more pending commands force an earlier launch.
pub(super) const MAX_COMMANDS: usize = 1024;

/// Per DPU: the commands not yet launched, in order, each with its prime slot (in
/// ciphertext-major mode including the `SET_PRIME` commands, which carry the slot they switch to).
pub(super) type Pending = BTreeMap<usize, Vec<(usize, PimheCommand)>>;

impl PimBackend {
    /// Runs every pending command list: one launch in parallel mode (each DPU serves one
    /// prime) and ciphertext-major mode (prime switches are commands), one launch per prime in
    /// sequential mode.
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
        // Each launch: per DPU, the slot its header names and its command list.
        let launches: Vec<BTreeMap<usize, (usize, Vec<PimheCommand>)>> = match self.plan.mode() {
            Mode::Parallel | Mode::CiphertextMajor | Mode::Hybrid => vec![pending
                .into_iter()
                .map(|(dpu, commands)| {
                    let slot = commands[0].0;
                    (dpu, (slot, commands.into_iter().map(|(_, c)| c).collect()))
                })
                .collect()],
            Mode::Sequential => {
                let mut per_slot: BTreeMap<usize, BTreeMap<usize, (usize, Vec<PimheCommand>)>> = BTreeMap::new();
                for (dpu, commands) in pending {
                    for (slot, command) in commands {
                        per_slot
                            .entry(slot)
                            .or_default()
                            .entry(dpu)
                            .or_insert_with(|| (slot, Vec::new()))
                            .1
                            .push(command);
                    }
                }
                per_slot.into_values().collect()
            }
        };
        for launch in launches {
            let mut dpus = Vec::with_capacity(launch.len());
            for (&dpu, (slot, commands)) in &launch {
                let layout = launch_layout(self.n, state.table_offsets[dpu][slot]);
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
                    let intervals: Vec<_> = result.intervals.into_iter().map(|(_, i)| i).collect();
                    let counts: Vec<DpuCounts> = result.dpus.into_iter().map(|(_, c)| c).collect();
                    self.config.model.launch_seconds_of(&counts, &multiplies, &intervals)
                }
                LaunchCost::Measured { seconds } => seconds,
            };
            state.report.launches += 1;
        }
        state.report.energy_j = self.config.model.energy_joules(state.report.total_s(), self.ranks());
        self.check_budget(state)
    }

    /// Appends `command` (working modulo prime slot `slot`) to `dpu`'s list, launching the
    /// pending lists first when it is full. In ciphertext-major mode a `SET_PRIME` goes first
    /// when the list's last command worked modulo another prime (the first command's prime is
    /// the header's).
    pub(super) fn enqueue(
        &self,
        state: &mut State,
        slot: usize,
        dpu: usize,
        command: PimheCommand,
    ) -> pimhe_exec::Result<()> {
        let switch = |state: &State| {
            self.plan.mode() == Mode::CiphertextMajor
                && state.pending.get(&dpu).and_then(|list| list.last()).is_some_and(|&(last, _)| last != slot)
        };
        let needed = 1 + usize::from(switch(state));
        if state.pending.get(&dpu).is_some_and(|list| list.len() + needed > MAX_COMMANDS) {
            self.flush(state)?;
        }
        if switch(state) {
            let record = state.prime_records[dpu][&slot];
            state.pending.entry(dpu).or_default().push((slot, PimheCommand::set_prime(record)));
        }
        state.pending.entry(dpu).or_default().push((slot, command));
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
