//! The CPU backend: every operation on host memory, parallel over (prime, polynomial) pairs.
//!
//! The per-chunk arithmetic is `pimhe_math::simd` (element-wise kernels) and `NttTable`
//! (transforms), which run on the best instruction set of the CPU ([`Isa::active`]: AVX-512,
//! AVX2 or scalar, all giving the same residues).

mod behz;
mod division;
mod fresh;
mod key_switch;
mod memory;
mod pool;
mod rescale;
mod streaming;

use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::sync::{Arc, Mutex};

use pimhe_math::simd::elementwise as kernels;
use pimhe_math::{BaseConverter, Isa, Modulus, RnsBase};
use pimhe_ring::{GaloisPermutation, PolyBatch, Representation, RingBasis};

use crate::backend::{Backend, Shape};
use crate::behz::BehzPlan;
use crate::error::{ExecError, Result};
use crate::key_switch::KeySwitchPlan;
use division::Division;
use fresh::Start;
use rescale::LastPrime;

use crate::operands::{
    broadcast, check_constant_terms, check_constants, check_limb_constants, constant_polynomial, galois_element,
    require, same_shape, Broadcast,
};

/// [`BaseConverter`]s by (from primes, to primes).
type ConverterCache = HashMap<(Vec<u32>, Vec<u32>), Arc<BaseConverter>>;

/// [`GaloisPermutation`]s by (degree, Galois element modulo 2N, representation).
type PermutationCache = HashMap<(usize, usize, Representation), Arc<GaloisPermutation>>;

/// Runs the operations of [`Backend`] on the host, with its own rayon pool.
///
/// Work is split into (prime, polynomial) chunks of N residues, so a large batch and a single
/// ciphertext with many primes both keep every thread busy. Creating a backend asks glibc to
/// keep freed batches in the process for reuse, process-wide (see `cpu/memory.rs`).
///
/// ```
/// use pimhe_exec::{Backend, CpuBackend};
/// use pimhe_ring::{PolyBatch, RingBasis};
/// let backend = CpuBackend::new(Some(2)).unwrap();
/// let basis = RingBasis::new(16, &[97]).unwrap();
/// let one = [1i64; 16];
/// let a = backend.upload(PolyBatch::from_signed(&basis, &[&one]).unwrap()).unwrap();
/// let sum = backend.add(&a, &a).unwrap();
/// assert_eq!(backend.download(&sum).unwrap().poly_limb(0, 0), &[2u32; 16]);
/// ```
pub struct CpuBackend {
    pool: rayon::ThreadPool,
    threads: usize,
    /// FastBConv tables by (from primes, to primes): building one takes big-integer products,
    /// and key switching asks for the same few conversions on every call.
    converters: Mutex<ConverterCache>,
    /// Automorphism index tables: building one costs several times applying it to one limb
    /// (N = 2^16, NTT form: roughly 0.5 ms against 0.06 ms on this machine), and rotations reuse
    /// the same few Galois elements. Not bounded: a table is 4N bytes (about 4.75N in NTT form,
    /// with the vector gather's block order), far less than the Galois key that comes with
    /// each element.
    permutations: Mutex<PermutationCache>,
    /// Bytes from which an element-wise output is written with streaming stores
    /// (`cpu/streaming.rs`).
    stream_above: usize,
}

/// An element-wise kernel writing unwritten memory with streaming stores
/// (`kernels::add_streamed` and its siblings).
type StreamedKernel = fn(Isa, &Modulus, &mut [MaybeUninit<u32>], &[u32], &[u32]);

/// `kernel` (`kernels::add` and its siblings, which need only the chunk's prime) on the active
/// ISA, in the form [`CpuBackend::binary`] takes.
fn on_active_isa(
    kernel: fn(Isa, &Modulus, &mut [u32], &[u32], &[u32]),
) -> impl Fn(usize, &Modulus, &mut [u32], &[u32], &[u32]) + Sync {
    move |_, q, out, x, y| kernel(Isa::active(), q, out, x, y)
}

/// Most worker threads a [`CpuBackend`] starts: far above any core count the batch kernels
/// gain from, and low enough that a typo does not spawn threads until the OS refuses.
pub const MAX_THREADS: usize = 1024;

impl CpuBackend {
    /// A backend with `threads` worker threads, 1 ..= [`MAX_THREADS`] (all cores when `None`).
    pub fn new(threads: Option<usize>) -> Result<Self> {
        let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        if !(1..=MAX_THREADS).contains(&threads) {
            return Err(ExecError::Setup(format!("{threads} threads requested: allowed 1 ..= {MAX_THREADS}")));
        }
        memory::retain_freed_memory();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("pimhe-cpu-{i}"))
            .build()
            .map_err(|e| ExecError::Setup(e.to_string()))?;
        Ok(Self {
            pool,
            threads,
            converters: Mutex::new(HashMap::new()),
            permutations: Mutex::new(HashMap::new()),
            stream_above: streaming::threshold(threads),
        })
    }

    /// The backend, writing the outputs of add, sub and mul above `bytes` with streaming stores,
    /// which bypass the caches (`cpu/streaming.rs`); by default, those larger than the worker
    /// threads' L2 caches together (at most a quarter of the last-level cache). The residues are the same either way; only where they are cached
    /// differs.
    ///
    /// ```
    /// use pimhe_exec::{Backend, CpuBackend};
    /// use pimhe_ring::{PolyBatch, RingBasis};
    /// let backend = CpuBackend::new(Some(1)).unwrap().with_streaming_threshold(0);
    /// let basis = RingBasis::new(64, &[257]).unwrap();
    /// let a = backend.upload(PolyBatch::from_signed(&basis, &[&[200i64; 64]]).unwrap()).unwrap();
    /// let sum = backend.add(&a, &a).unwrap();
    /// assert_eq!(backend.download(&sum).unwrap().poly_limb(0, 0), &[143u32; 64]);
    /// ```
    pub fn with_streaming_threshold(mut self, bytes: usize) -> Self {
        self.stream_above = bytes;
        self
    }

    /// Applies `kernel(limb, q, out, a, b)` to every (limb, polynomial) chunk of `a` and the
    /// matching chunk of `b`, into a fresh batch; or `streamed` where there is one and the
    /// output is above the streaming threshold (`cpu/streaming.rs`).
    fn binary(
        &self,
        operation: &'static str,
        (a, b): (&PolyBatch, &PolyBatch),
        product: bool,
        kernel: impl Fn(usize, &Modulus, &mut [u32], &[u32], &[u32]) + Sync,
        streamed: Option<StreamedKernel>,
    ) -> Result<PolyBatch> {
        let map = broadcast(operation, &Shape::of(a), &Shape::of(b), product)?;
        let (basis, count) = (a.basis(), a.count());
        let shape = (basis, count, a.representation());
        let bytes = basis.len() * count * basis.degree() * std::mem::size_of::<u32>();
        if let Some(streamed) = streamed.filter(|_| bytes > self.stream_above) {
            // SAFETY: a streamed kernel writes every value of its output.
            return Ok(unsafe {
                self.fresh_unwritten(shape, pool::ELEMENTWISE, |index, chunk| {
                    let (limb, poly) = (index / count, index % count);
                    let (x, y) = (a.poly_limb(limb, poly), b_chunk(b, &map, limb, poly));
                    streamed(Isa::active(), basis.modulus(limb), chunk, x, y);
                })
            });
        }
        Ok(self.fresh(
            shape,
            Start::Zeros,
            pool::ELEMENTWISE,
            || (),
            |_, index, chunk| {
                let (limb, poly) = (index / count, index % count);
                kernel(limb, basis.modulus(limb), chunk, a.poly_limb(limb, poly), b_chunk(b, &map, limb, poly));
            },
        ))
    }

    /// Three fresh NTT-form outputs shaped as `a`, each (limb, poly) chunk filled by
    /// `f(limb, poly, modulus, [out0, out1, out2])`: the tensor products.
    fn three_outputs(
        &self,
        a: &PolyBatch,
        cost: usize,
        f: impl Fn(usize, usize, &Modulus, [&mut [u32]; 3]) + Sync,
    ) -> Result<[PolyBatch; 3]> {
        let (n, count) = (a.degree(), a.count());
        let Ok(data) = self.fresh_triple(
            a.data().len(),
            n,
            cost,
            || (),
            |_, index, out| {
                let (limb, poly) = (index / count, index % count);
                f(limb, poly, a.basis().modulus(limb), out);
                Ok::<_, std::convert::Infallible>(())
            },
        );
        let batch = |data| PolyBatch::from_reduced_data(a.basis(), count, Representation::Ntt, data);
        let [d0, d1, d2] = data;
        Ok([batch(d0)?, batch(d1)?, batch(d2)?])
    }

    /// Calls `f(limb, poly, modulus, residues)` on every N-residue chunk of `batch`, in parallel
    /// when `cost` per residue ([`pool::ELEMENTWISE`], [`pool::TRANSFORM`]) makes it worth it.
    fn for_chunks(&self, batch: &mut PolyBatch, cost: usize, f: impl Fn(usize, usize, &Modulus, &mut [u32]) + Sync) {
        let n = batch.degree();
        let count = batch.count();
        let basis = batch.basis().clone();
        let Ok(()) = self.each_chunk(batch.data_mut(), n, cost, |index, chunk| {
            let (limb, poly) = (index / count, index % count);
            f(limb, poly, basis.modulus(limb), chunk);
            Ok::<_, std::convert::Infallible>(())
        });
    }

    /// A fresh batch of `layout` whose (limb, polynomial) chunk is set by `f(limb, poly, q,
    /// chunk)`, each chunk first holding what `start` says, written by the worker that computes
    /// it: no zero-fill or copy pass over the whole batch on the calling thread.
    fn fresh_chunks(
        &self,
        layout: (&Arc<RingBasis>, usize, Representation),
        start: Start<'_>,
        cost: usize,
        f: impl Fn(usize, usize, &Modulus, &mut [u32]) + Sync + Send,
    ) -> PolyBatch {
        let (basis, count) = (layout.0, layout.1);
        self.fresh(
            layout,
            start,
            cost,
            || (),
            |_, index, chunk| {
                let (limb, poly) = (index / count, index % count);
                f(limb, poly, basis.modulus(limb), chunk)
            },
        )
    }

    /// The cached converter from `from`'s primes to `to`'s.
    fn converter(&self, from: &RingBasis, to: &RingBasis) -> Result<Arc<BaseConverter>> {
        let key = (from.primes(), to.primes());
        // A poisoned lock only means another thread panicked while inserting; the map is intact.
        let mut cache = self.converters.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(converter) = cache.get(&key) {
            return Ok(converter.clone());
        }
        let converter = Arc::new(BaseConverter::new(&RnsBase::new(&from.moduli())?, &RnsBase::new(&to.moduli())?)?);
        cache.insert(key, converter.clone());
        Ok(converter)
    }

    /// The cached permutation of X -> X^k (k already reduced modulo 2N and odd) at degree `n`.
    fn permutation(&self, n: usize, k: usize, representation: Representation) -> Result<Arc<GaloisPermutation>> {
        let key = (n, k, representation);
        // A poisoned lock only means another thread panicked while inserting; the map is intact.
        let mut cache = self.permutations.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(permutation) = cache.get(&key) {
            return Ok(permutation.clone());
        }
        let permutation = Arc::new(GaloisPermutation::new(n, k, representation)?);
        cache.insert(key, permutation.clone());
        Ok(permutation)
    }

    /// FastBConv of `a` (coefficient form) to `target`: limbs whose prime is one of `a`'s are
    /// copied from `same_primes` (`a` itself, or `a` in NTT form), on which FastBConv would give
    /// `a + u Q = a` exactly; the others are converted, each (limb, polynomial) chunk in one
    /// task, and transformed there too when `transform` is set (the caller then marks the output
    /// as NTT form).
    fn convert(
        &self,
        operation: &'static str,
        a: &PolyBatch,
        same_primes: &PolyBatch,
        target: &Arc<RingBasis>,
        transform: bool,
    ) -> Result<PolyBatch> {
        require(operation, &Shape::of(a), Representation::Coefficient)?;
        if a.degree() != target.degree() {
            return Err(ExecError::Shape {
                operation,
                detail: format!("ring degree {} cannot convert to a basis of degree {}", a.degree(), target.degree()),
            });
        }
        let (n, polys, from_limbs) = (a.degree(), a.count(), a.basis().len());
        let from_primes = a.basis().primes();
        let shared: Vec<Option<usize>> =
            target.primes().iter().map(|p| from_primes.iter().position(|q| q == p)).collect();
        let new_limbs: Vec<usize> = (0..shared.len()).filter(|&limb| shared[limb].is_none()).collect();
        let mut out = PolyBatch::zeros(target, polys, Representation::Coefficient);
        if new_limbs.is_empty() {
            // Every prime is one of a's.
            self.for_chunks(&mut out, pool::ELEMENTWISE, |limb, poly, _, chunk| {
                if let Some(from) = shared[limb] {
                    chunk.copy_from_slice(same_primes.poly_limb(from, poly))
                }
            });
            return Ok(out);
        }
        let isa = Isa::active();
        let converter = self.converter(a.basis(), &*target.select(&new_limbs)?)?;
        // FastBConv's first half, once per source limb, polynomial-major so each polynomial's
        // limbs are one slice.
        let mut scaled = vec![0u32; polys * from_limbs * n];
        self.each_chunk(&mut scaled, n, pool::ELEMENTWISE, |index, chunk| {
            let (poly, limb) = (index / from_limbs, index % from_limbs);
            chunk.copy_from_slice(a.poly_limb(limb, poly));
            converter.scale_on(isa, limb, chunk)
        })?;
        // Each converted residue sums one product per source limb.
        let cost = from_limbs + if transform { pool::TRANSFORM } else { 0 };
        self.each_chunk(out.data_mut(), n, cost, |index, chunk| {
            let (limb, poly) = (index / polys, index % polys);
            match shared[limb] {
                Some(from) => chunk.copy_from_slice(same_primes.poly_limb(from, poly)),
                None => {
                    // This limb's place among the converted ones.
                    let to_index = limb - shared[..limb].iter().filter(|s| s.is_some()).count();
                    let from = poly * from_limbs * n..(poly + 1) * from_limbs * n;
                    converter.accumulate_on(isa, to_index, &scaled[from], chunk)?;
                    if transform {
                        target.table(limb).forward(chunk);
                    }
                }
            }
            Ok::<_, ExecError>(())
        })?;
        Ok(out)
    }

    /// [`Backend::mod_down`] into a fresh batch of the kept limbs: each chunk is copied from `a`
    /// and divided by the worker that owns it, where a clone of the whole input (dropped limbs
    /// too) on the calling thread cost a tenth of a rescale.
    fn divide_into_fresh(&self, a: &PolyBatch, count: usize, plain_modulus: Option<Modulus>) -> Result<PolyBatch> {
        let division = Division::new(self, a.basis(), count, plain_modulus, a.representation())?;
        let scaled = self.division_scaled(a, &division)?;
        let (n, polys) = (a.degree(), a.count());
        let data = self.fresh_data(
            division.kept() * polys * n,
            n,
            Start::CopyOf(a),
            division_cost(&division, a.representation()),
            || vec![0u32; n],
            |delta, index, chunk| {
                let (limb, poly) = (index / polys, index % polys);
                division.divide(limb, chunk, &scaled[poly * count * n..(poly + 1) * count * n], delta)
            },
        )?;
        Ok(PolyBatch::from_reduced_data(&division.target, polys, a.representation(), data)?)
    }

    /// [`Backend::mod_down`] into `a` itself (left as it was where the division is refused).
    fn divide_in_place(&self, a: &mut PolyBatch, count: usize, plain_modulus: Option<Modulus>) -> Result<()> {
        let division = Division::new(self, a.basis(), count, plain_modulus, a.representation())?;
        let scaled = self.division_scaled(a, &division)?;
        let (n, polys, cost) = (a.degree(), a.count(), division_cost(&division, a.representation()));
        a.truncate_limbs(division.kept())?;
        // Limb by limb: delta' is converted, transformed and combined while it is in cache.
        self.each_chunk_with(
            a.data_mut(),
            n,
            cost,
            || vec![0u32; n],
            |delta, index, chunk| {
                let (limb, poly) = (index / polys, index % polys);
                let scaled = &scaled[poly * count * n..(poly + 1) * count * n];
                division.divide(limb, chunk, scaled, delta)
            },
        )
    }

    /// FastBConv's first half of a division ([`Division::scale`]) on `a`'s dropped limbs,
    /// polynomial-major so a polynomial's dropped limbs are together.
    fn division_scaled(&self, a: &PolyBatch, division: &Division) -> Result<Vec<u32>> {
        let (kept, count) = (division.kept(), division.count());
        let (n, polys) = (a.degree(), a.count());
        let mut scaled = vec![0u32; polys * count * n];
        self.each_chunk(&mut scaled, n, pool::ELEMENTWISE + transform_cost(a.representation()), |index, chunk| {
            let (poly, k) = (index / count, index % count);
            chunk.copy_from_slice(a.poly_limb(kept + k, poly));
            division.scale(k, chunk)
        })?;
        Ok(scaled)
    }
}

/// Work units per residue of a transform that a division runs on NTT-form limbs (see `pool.rs`).
fn transform_cost(representation: Representation) -> usize {
    if representation == Representation::Ntt {
        pool::TRANSFORM
    } else {
        0
    }
}

/// Work units per residue of [`Division::divide`] (see `pool.rs`).
fn division_cost(division: &Division, representation: Representation) -> usize {
    2 * division.count() + 4 * pool::ELEMENTWISE + transform_cost(representation)
}

fn b_chunk<'a>(b: &'a PolyBatch, map: &Broadcast, limb: usize, poly: usize) -> &'a [u32] {
    let n = b.degree();
    let start = map.chunk(limb, poly, b.count()) * n;
    &b.data()[start..start + n]
}

impl Backend for CpuBackend {
    type Buffer = PolyBatch;

    fn name(&self) -> &str {
        "cpu"
    }

    fn threads(&self) -> usize {
        self.threads
    }

    fn upload(&self, batch: PolyBatch) -> Result<PolyBatch> {
        Ok(batch)
    }

    fn download(&self, buffer: &PolyBatch) -> Result<PolyBatch> {
        Ok(buffer.clone())
    }

    fn download_owned(&self, buffer: PolyBatch) -> Result<PolyBatch> {
        Ok(buffer)
    }

    fn shape(&self, buffer: &PolyBatch) -> Shape {
        Shape::of(buffer)
    }

    fn copy(&self, buffer: &PolyBatch) -> Result<PolyBatch> {
        Ok(buffer.clone())
    }

    fn zeroize(&self, buffer: &mut PolyBatch) {
        buffer.zeroize();
    }

    fn add(&self, a: &PolyBatch, b: &PolyBatch) -> Result<PolyBatch> {
        self.binary("add", (a, b), false, on_active_isa(kernels::add), Some(kernels::add_streamed))
    }

    fn add_assign(&self, acc: &mut PolyBatch, b: &PolyBatch) -> Result<()> {
        let map = broadcast("add_assign", &Shape::of(acc), &Shape::of(b), false)?;
        self.for_chunks(acc, pool::ELEMENTWISE, |limb, poly, q, chunk| {
            kernels::add_assign(Isa::active(), q, chunk, b_chunk(b, &map, limb, poly))
        });
        Ok(())
    }

    fn sub(&self, a: &PolyBatch, b: &PolyBatch) -> Result<PolyBatch> {
        self.binary("sub", (a, b), false, on_active_isa(kernels::sub), Some(kernels::sub_streamed))
    }

    fn neg(&self, a: &PolyBatch) -> Result<PolyBatch> {
        Ok(self.fresh_chunks(layout_of(a), Start::CopyOf(a), pool::ELEMENTWISE, |_, _, q, chunk| {
            kernels::neg(Isa::active(), q, chunk)
        }))
    }

    fn mul(&self, a: &PolyBatch, b: &PolyBatch) -> Result<PolyBatch> {
        self.binary("mul", (a, b), true, on_active_isa(kernels::mul), Some(kernels::mul_streamed))
    }

    fn mac(&self, acc: &mut PolyBatch, a: &PolyBatch, b: &PolyBatch) -> Result<()> {
        same_shape("mac", &Shape::of(acc), &Shape::of(a))?;
        let map = broadcast("mac", &Shape::of(a), &Shape::of(b), true)?;
        self.for_chunks(acc, pool::ELEMENTWISE, |limb, poly, q, chunk| {
            kernels::mac(Isa::active(), q, chunk, a.poly_limb(limb, poly), b_chunk(b, &map, limb, poly))
        });
        Ok(())
    }

    fn mul_scalar(&self, a: &PolyBatch, c: u64) -> Result<PolyBatch> {
        Ok(self.fresh_chunks(layout_of(a), Start::CopyOf(a), pool::ELEMENTWISE, |_, _, q, chunk| {
            kernels::mul_scalar(Isa::active(), q, chunk, q.reduce_u64(c))
        }))
    }

    fn tensor(&self, a0: &PolyBatch, a1: &PolyBatch, b0: &PolyBatch, b1: &PolyBatch) -> Result<[PolyBatch; 3]> {
        let shape = Shape::of(a0);
        require("tensor", &shape, Representation::Ntt)?;
        for other in [a1, b0, b1] {
            same_shape("tensor", &shape, &Shape::of(other))?;
        }
        // Four products per coefficient.
        self.three_outputs(a0, 4 * pool::ELEMENTWISE, |limb, poly, q, out| {
            let x = [a0.poly_limb(limb, poly), a1.poly_limb(limb, poly)];
            let y = [b0.poly_limb(limb, poly), b1.poly_limb(limb, poly)];
            kernels::tensor(Isa::active(), q, out, x, y);
        })
    }

    fn tensor_square(&self, a0: &PolyBatch, a1: &PolyBatch) -> Result<[PolyBatch; 3]> {
        let shape = Shape::of(a0);
        require("tensor_square", &shape, Representation::Ntt)?;
        same_shape("tensor_square", &shape, &Shape::of(a1))?;
        // Three products per coefficient.
        self.three_outputs(a0, 3 * pool::ELEMENTWISE, |limb, poly, q, out| {
            kernels::tensor_square(Isa::active(), q, out, [a0.poly_limb(limb, poly), a1.poly_limb(limb, poly)]);
        })
    }

    fn behz_multiply(&self, plan: &BehzPlan, a: [&PolyBatch; 2], b: [&PolyBatch; 2]) -> Result<[PolyBatch; 3]> {
        self.fused_behz(plan, a, Some(b))
    }

    fn behz_square(&self, plan: &BehzPlan, a: [&PolyBatch; 2]) -> Result<[PolyBatch; 3]> {
        self.fused_behz(plan, a, None)
    }

    fn constant_accumulate(&self, terms: &[(&PolyBatch, &[u64])], offset: Option<&[u64]>) -> Result<PolyBatch> {
        let shape = check_constant_terms(self, terms, offset)?;
        let constant = offset.map(|offset| constant_polynomial(&shape, offset));
        // One product and one addition per term and coefficient, the sum kept in cache.
        let layout = (&shape.basis, shape.count, shape.representation);
        Ok(self.fresh_chunks(layout, Start::Zeros, terms.len() * pool::ELEMENTWISE, |limb, poly, q, chunk| {
            if let Some(constant) = &constant {
                chunk.copy_from_slice(constant.poly_limb(limb, 0));
            }
            for &(a, constants) in terms {
                kernels::mac_scalar(Isa::active(), q, chunk, a.poly_limb(limb, poly), q.reduce_u64(constants[limb]));
            }
        }))
    }

    fn mod_down_epilogue(&self, a: &PolyBatch, b: &PolyBatch, constants: &[u64]) -> Result<PolyBatch> {
        check_constants("mod_down_epilogue", &Shape::of(a), constants)?;
        let kernel = |limb: usize, q: &Modulus, out: &mut [u32], x: &[u32], y: &[u32]| {
            kernels::sub_mul_scalar(Isa::active(), q, out, x, y, q.reduce_u64(constants[limb]))
        };
        self.binary("mod_down_epilogue", (a, b), false, kernel, None)
    }

    fn sum(&self, a: &PolyBatch) -> Result<PolyBatch> {
        let layout = (a.basis(), 1, a.representation());
        Ok(self.fresh_chunks(layout, Start::Zeros, a.count() * pool::ELEMENTWISE, |limb, _, q, chunk| {
            for poly in 0..a.count() {
                kernels::add_assign(Isa::active(), q, chunk, a.poly_limb(limb, poly));
            }
        }))
    }

    fn ntt(&self, a: &mut PolyBatch) -> Result<()> {
        require("ntt", &Shape::of(a), Representation::Coefficient)?;
        let basis = a.basis().clone();
        self.for_chunks(a, pool::TRANSFORM, |limb, _, _, chunk| basis.table(limb).forward(chunk));
        a.set_representation(Representation::Ntt);
        Ok(())
    }

    fn intt(&self, a: &mut PolyBatch) -> Result<()> {
        require("intt", &Shape::of(a), Representation::Ntt)?;
        let basis = a.basis().clone();
        self.for_chunks(a, pool::TRANSFORM, |limb, _, _, chunk| basis.table(limb).inverse(chunk));
        a.set_representation(Representation::Coefficient);
        Ok(())
    }

    fn restrict(&self, a: &PolyBatch, target: &Arc<RingBasis>) -> Result<PolyBatch> {
        Ok(a.restrict(target)?)
    }

    fn base_convert(&self, a: &PolyBatch, target: &Arc<RingBasis>) -> Result<PolyBatch> {
        self.convert("base_convert", a, a, target, false)
    }

    fn base_convert_ntt(&self, a: &PolyBatch, a_ntt: &PolyBatch, target: &Arc<RingBasis>) -> Result<PolyBatch> {
        require("base_convert_ntt", &Shape::of(a_ntt), Representation::Ntt)?;
        if a_ntt.basis().primes() != a.basis().primes() || a_ntt.count() != a.count() {
            return Err(ExecError::Shape {
                operation: "base_convert_ntt",
                detail: format!(
                    "the NTT-form input ({} polynomials over {:?}) must be the coefficient-form input's ({} over {:?})",
                    a_ntt.count(),
                    a_ntt.basis().primes(),
                    a.count(),
                    a.basis().primes()
                ),
            });
        }
        let mut out = self.convert("base_convert_ntt", a, a_ntt, target, true)?;
        out.set_representation(Representation::Ntt);
        Ok(out)
    }

    fn mod_down_last(&self, a: &PolyBatch, plain_modulus: Option<Modulus>) -> Result<PolyBatch> {
        let last = LastPrime::of(self, a, plain_modulus)?;
        let shape = (last.target(), a.count(), a.representation());
        Ok(self.fresh(
            shape,
            Start::CopyOf(a),
            last.cost(),
            || vec![0u32; a.degree()],
            |term, index, chunk| last.divide(term, index, chunk),
        ))
    }

    fn mod_down_last_in_place(&self, a: &mut PolyBatch, plain_modulus: Option<Modulus>) -> Result<()> {
        let last = LastPrime::of(self, a, plain_modulus)?;
        a.truncate_limbs(last.target().len())?;
        let n = a.degree();
        let Ok(()) = self.each_chunk_with(
            a.data_mut(),
            n,
            last.cost(),
            || vec![0u32; n],
            |term, index, chunk| {
                last.divide(term, index, chunk);
                Ok::<_, std::convert::Infallible>(())
            },
        );
        Ok(())
    }

    fn mul_limb_constants(&self, a: &PolyBatch, constants: &[u64]) -> Result<PolyBatch> {
        check_limb_constants(&Shape::of(a), constants)?;
        Ok(self.fresh_chunks(layout_of(a), Start::CopyOf(a), pool::ELEMENTWISE, |limb, _, q, chunk| {
            kernels::mul_scalar(Isa::active(), q, chunk, q.reduce_u64(constants[limb]))
        }))
    }

    fn mod_down(&self, a: &PolyBatch, count: usize, plain_modulus: Option<Modulus>) -> Result<PolyBatch> {
        self.divide_into_fresh(a, count, plain_modulus)
    }

    fn mod_down_in_place(&self, a: &mut PolyBatch, count: usize, plain_modulus: Option<Modulus>) -> Result<()> {
        self.divide_in_place(a, count, plain_modulus)
    }

    fn automorphism(&self, a: &PolyBatch, k: usize) -> Result<PolyBatch> {
        let k = galois_element(&Shape::of(a), k)?;
        let permutation = self.permutation(a.degree(), k, a.representation())?;
        Ok(self.fresh_chunks(layout_of(a), Start::Zeros, pool::ELEMENTWISE, |limb, poly, q, chunk| {
            permutation.apply(q, chunk, a.poly_limb(limb, poly))
        }))
    }

    fn key_switch(
        &self,
        c: &PolyBatch,
        keys: &[(PolyBatch, PolyBatch)],
        plan: &KeySwitchPlan,
    ) -> Result<(PolyBatch, PolyBatch)> {
        self.fused_key_switch(c, keys, plan)
    }

    fn mod_up(&self, c: &PolyBatch, plan: &KeySwitchPlan) -> Result<Vec<PolyBatch>> {
        self.fused_mod_up(c, plan)
    }

    fn key_switch_decomposed(
        &self,
        digits: &[PolyBatch],
        keys: &[(PolyBatch, PolyBatch)],
        galois_element: Option<usize>,
        plan: &KeySwitchPlan,
    ) -> Result<(PolyBatch, PolyBatch)> {
        self.fused_key_switch_decomposed(digits, keys, galois_element, plan)
    }

    fn key_switch_decomposed_lazy(
        &self,
        digits: &[PolyBatch],
        keys: &[(PolyBatch, PolyBatch)],
        galois_element: Option<usize>,
        plan: &KeySwitchPlan,
    ) -> Result<(PolyBatch, PolyBatch)> {
        self.fused_key_switch_decomposed_lazy(digits, keys, galois_element, plan)
    }
}

/// The basis, count and representation of `a`: the layout of an output shaped like it.
fn layout_of(a: &PolyBatch) -> (&Arc<RingBasis>, usize, Representation) {
    (a.basis(), a.count(), a.representation())
}
