//! Random differential programs: a generator of random programs and an interpreter generic over
//! [`pimhe_exec::Backend`], so that every backend runs the same program as the CPU backend, the
//! reference, and must give bit-identical results or the same refusal at every step.
//!
//! - [`backend_programs`]: every `Backend` operation over a small register file of buffers of
//!   random shapes, sometimes on purpose with operands the trait refuses;
//! - [`scheme_programs`]: BGV and BFV at real parameters, whose results are also decrypted and
//!   compared with the same computation on the plaintexts.
//!
//! A program is plain data (printed with `{program}` for a replay); running it on a backend
//! gives a trace of [`Event`]s that [`compare`] holds against the reference's. Adding a backend
//! to the differential test is one more `run` on it and one more `compare`.

pub mod backend_programs;
pub mod ckks_programs;
pub mod scheme_programs;

use pimhe_ring::PolyBatch;
use rand_chacha::rand_core::Rng;
use rand_chacha::ChaCha20Rng;

/// The random choices of a program generator, from one seeded stream.
pub struct Draws(ChaCha20Rng);

impl Draws {
    /// The stream of `seed` (the program's identity: the same seed, the same program).
    pub fn new(seed: u64) -> Self {
        Self(pimhe_testkit::inputs::rng(seed))
    }

    /// A raw 64-bit word (a seed, a residue before reduction).
    pub fn word(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..bound`.
    pub fn below(&mut self, bound: usize) -> usize {
        (self.word() % bound as u64) as usize
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// One of `items`, uniformly.
    pub fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }

    /// A uniform permutation of `items` in place (Fisher-Yates).
    pub fn shuffle(&mut self, items: &mut [usize]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

/// What a step brought back to the host.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// A downloaded buffer (or ciphertext component).
    Batch(PolyBatch),
    /// Decoded slots of a decrypted ciphertext (or noise budgets).
    Slots(Vec<u64>),
    /// A refusal that is an observation, not a failed step (a decryption without budget).
    Refused(String),
}

/// What one step did on one backend: what it brought back, or the refusal's text.
pub type Outcome = Result<Vec<Seen>, String>;

/// One step of a run.
#[derive(Debug, Clone)]
pub struct Event {
    /// Index of the step in its program (the final read-back of every register comes last, with
    /// the index one past the last step).
    pub step: usize,
    /// Whether the generator built the step to succeed (it built it to be refused otherwise).
    pub valid: bool,
    pub outcome: Outcome,
}

/// The trace of a scheme-level program on one machine: each step's outcome (`execute`), then
/// one last event (index one past the last step) that reads back and decrypts every register
/// left live (`live`), with the two operations `reads` gives for a register.
pub fn trace<'s, M, Op: 's>(
    machine: &mut M,
    steps: impl ExactSizeIterator<Item = (&'s Op, bool)>,
    mut execute: impl FnMut(&mut M, &Op) -> Outcome,
    live: impl Fn(&M) -> Vec<usize>,
    reads: impl Fn(usize) -> [Op; 2],
) -> Vec<Event> {
    let last = steps.len();
    let mut events: Vec<Event> = Vec::with_capacity(last + 1);
    for (step, (op, valid)) in steps.enumerate() {
        events.push(Event { step, valid, outcome: execute(machine, op) });
    }
    let outcome = live(machine)
        .into_iter()
        .map(|a| {
            let [download, decrypt] = reads(a);
            let mut seen = execute(machine, &download)?;
            seen.extend(execute(machine, &decrypt)?);
            Ok(seen)
        })
        .collect::<Result<Vec<Vec<Seen>>, String>>()
        .map(|all| all.concat());
    events.push(Event { step: last, valid: true, outcome });
    events
}

/// How a candidate's trace compares with the reference's.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Identical results and identical refusals throughout.
    Same,
    /// Identical up to `step`, where the candidate refused for lack of a resource the reference
    /// does not have (MRAM) and its state left the reference's; the rest is not comparable.
    Exhausted { step: usize, reason: String },
    /// A difference, described.
    Differ(String),
}

/// Compares two traces of one program event by event. `resource_limit` says whether a refusal
/// of the candidate alone names a resource limit of its own (not a mismatch, but the end of
/// what can be compared).
pub fn compare(reference: &[Event], candidate: &[Event], resource_limit: impl Fn(&str) -> bool) -> Verdict {
    for (expected, got) in reference.iter().zip(candidate) {
        let step = expected.step;
        match (&expected.outcome, &got.outcome) {
            (Ok(x), Ok(y)) => {
                if let Some(difference) = first_difference(x, y) {
                    // A decryption refused inside an observation for lack of memory ends it too.
                    let limit = y.iter().find_map(|s| match s {
                        Seen::Refused(text) if resource_limit(text) && !x.contains(s) => Some(text.clone()),
                        _ => None,
                    });
                    return match limit {
                        Some(reason) => Verdict::Exhausted { step, reason },
                        None => Verdict::Differ(format!("step {step}: {difference}")),
                    };
                }
            }
            (Err(x), Err(y)) if x == y => {}
            // Both refuse, the candidate first for lack of a resource (e.g. MRAM before the
            // missing key both would report): the end of what it can run, not a mismatch.
            (Err(_), Err(y)) if resource_limit(y) => return Verdict::Exhausted { step, reason: y.clone() },
            (Err(x), Err(y)) => {
                return Verdict::Differ(format!(
                    "step {step}: refused differently:\n  reference: {x}\n  candidate: {y}"
                ))
            }
            (Ok(_), Err(y)) if resource_limit(y) => return Verdict::Exhausted { step, reason: y.clone() },
            (Ok(_), Err(y)) => return Verdict::Differ(format!("step {step}: only the candidate refused: {y}")),
            (Err(x), Ok(_)) => return Verdict::Differ(format!("step {step}: only the reference refused: {x}")),
        }
    }
    if reference.len() != candidate.len() {
        return Verdict::Differ(format!("{} events against {}", reference.len(), candidate.len()));
    }
    Verdict::Same
}

/// The first event of the reference whose success or refusal is not what the generator built it
/// for: a generator that misjudges the rules would otherwise drift into comparing refusals only.
pub fn unexpected(reference: &[Event]) -> Option<String> {
    reference.iter().find(|e| e.valid != e.outcome.is_ok()).map(|e| match &e.outcome {
        Ok(_) => format!("step {} was built to be refused but succeeded", e.step),
        Err(text) => format!("step {} was built to succeed but was refused: {text}", e.step),
    })
}

/// Where two lists of observations first differ, or `None`.
fn first_difference(x: &[Seen], y: &[Seen]) -> Option<String> {
    if x.len() != y.len() {
        // Name the refusals, which are what usually makes the lengths differ.
        let refusals = |seen: &[Seen]| -> Vec<String> {
            seen.iter().filter_map(|s| if let Seen::Refused(text) = s { Some(text.clone()) } else { None }).collect()
        };
        return Some(format!(
            "{} observations against {} (refusals {:?} against {:?})",
            x.len(),
            y.len(),
            refusals(x),
            refusals(y)
        ));
    }
    x.iter().zip(y).enumerate().find_map(|(index, pair)| match pair {
        (Seen::Batch(a), Seen::Batch(b)) => batch_difference(a, b).map(|d| format!("observation {index}: {d}")),
        (a, b) if a == b => None,
        (a, b) => Some(format!("observation {index}: {a:?} against {b:?}")),
    })
}

/// The shape or first residue where two batches differ, or `None`.
fn batch_difference(a: &PolyBatch, b: &PolyBatch) -> Option<String> {
    if a.basis() != b.basis() || a.count() != b.count() || a.representation() != b.representation() {
        return Some(format!("shapes differ: {a:?} against {b:?}"));
    }
    let per_limb = (a.count() * a.degree()).max(1);
    let index = a.data().iter().zip(b.data()).position(|(x, y)| x != y)?;
    let (limb, within) = (index / per_limb, index % per_limb);
    Some(format!(
        "residue {} of polynomial {} modulo {} (limb {limb}): {} against {} (of {a:?})",
        within % a.degree(),
        within / a.degree(),
        a.basis().primes()[limb],
        a.data()[index],
        b.data()[index]
    ))
}
