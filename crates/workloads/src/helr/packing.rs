//! How a batch sits in CKKS slots, so that one HELR iteration is a few rotations and
//! multiplications: the design the encrypted trainer follows. It is the row-major matrix
//! packing of Kim et al. (JMIR Med. Inform. 2018), whose rotate-and-sum and mask-and-replicate
//! steps Han et al. (2019) keep for each block of their mini-batches.
//!
//! ## Layout
//! A batch of `m` samples with `f` features is the `m x (f + 1)` matrix `Z` whose row `i` is
//! `z_i = y'_i (1, x_i)` ([`super::train`]). It is padded with zeros to `R x W`, `R` and `W` the
//! powers of two at least `m` and `f + 1`, and laid out row-major in the slots of one
//! ciphertext: slot `i W + j` holds `Z[i][j]`, so a batch needs `R W <= N/2` for ring degree N
//! (a larger one is cut over several ciphertexts: below).
//! Step 5 relies on rotations being cyclic within those `R W` slots. The encrypted trainer
//! ([`super::encrypted`]) packs all N/2 slots, as bootstrapping needs, with the `R W` block
//! repeated `N / (2 R W)` times ([`Packing::tile`]): a cyclic rotation of the N/2 slots then
//! moves every copy as a rotation within `R W` would (the block's period divides N/2). The
//! weights `v` are
//! kept *replicated*, `v_j` in slot `i W + j` of every row `i`: the layout in which the
//! gradient comes out (below), so no step re-packs them.
//!
//! ## One iteration (rot(c, k) moves slot s + k to slot s)
//! 1. `P = Z * V`: one ciphertext product (rescale): slot `i W + j` holds `z_ij v_j`.
//! 2. Sum over a row: `P += rot(P, 2^d)` for d = 0 .. log2 W - 1 (log2 W rotations); slot
//!    `i W` now holds the margin `z_i . v` (the padding columns are zero, and a row's sum never
//!    reaches into the next row at column 0).
//! 3. Keep column 0 and replicate it across its row: multiply by the plaintext mask of ones at
//!    slots `i W` (one level), then `M += rot(M, -2^d)` for d = 0 .. log2 W - 1 (log2 W
//!    rotations): every slot of row `i` holds `margin_i`.
//! 4. `S = p(-M)`, the degree-3 sigmoid: `M^2` (one product), then `(c0 - c1 M) - c3 M^2 M`
//!    (one more product, constants folded into plaintext multiplications): two levels.
//! 5. `G = S * Z` (one product): slot `i W + j` holds `s_i z_ij`. Sum over the rows:
//!    `G += rot(G, 2^d W)` for d = 0 .. log2 R - 1 (log2 R rotations); every row now holds
//!    `sum_i s_i z_i` — already replicated, the layout of the weights. The padding rows are
//!    zero in `Z`, so they add nothing; the mean divides by the real `m`, folded into the
//!    constant `gamma / (k m)` of the update at iteration k.
//! 6. The Nesterov update `w' = v + (gamma / (k m)) G`, `v' = (1 - eta) w' + eta w`: constant
//!    multiplications and additions, no rotation.
//!
//! One iteration thus costs `2 log2 W + log2 R` rotations, three ciphertext products and a
//! depth of about five levels (so bootstrapping every few iterations, as Anaheim's HELR does).
//!
//! ## A batch over several ciphertexts
//! A batch larger than one ciphertext ([`Packing::split`]: Anaheim's 1024 samples; Han et
//! al.'s MNIST, 196 features, takes `R W = 2^18` slots) is cut by rows into `C` blocks of
//! `R / C` rows, one ciphertext each (`C` a power of two, each block filling all N/2 slots).
//! Steps 1-4 run on each block alone (a row never straddles two blocks); step 5 multiplies
//! each block's `S` by its `Z`, adds the `C` products (the gradient's partial sums) and only
//! then sums over the `R / C` rows of the block: `C (2 log2 W) + log2 (R / C)` rotations.
//! The weights stay one ciphertext, their row replicated over the `R / C` rows of a block.
//! [`Packing::new`] keeps a batch to one ciphertext (the plaintext trainer's slot check).
//!
//! [`Packing::gradient_in_slots`] runs steps 1-5 on plain slot vectors with these rotations,
//! the check that the layout computes [`super::train::gradient`].

use serde::Serialize;

use super::{HelrError, Sigmoid};

/// The slot layout of one batch (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Packing {
    /// Samples in a batch, `m`.
    pub batch: usize,
    /// Features per sample, `f` (the intercept column comes on top).
    pub features: usize,
    /// Rows, `R`: the power of two at least `m`.
    pub rows: usize,
    /// Row width, `W`: the power of two at least `f + 1`.
    pub width: usize,
    /// Slots a ciphertext offers (N/2, or fewer), of which each block uses `R W / C`.
    pub capacity: usize,
    /// Ciphertexts the batch is cut into, `C` (1 where `R W` fits `capacity`).
    pub ciphertexts: usize,
}

impl Packing {
    /// The layout of a batch of `batch` samples with `features` features in a ciphertext of
    /// `capacity` slots (a power of two); refused where the padded batch does not fit, with the
    /// largest batch and feature count that would.
    ///
    /// ```
    /// use pimhe_workloads::helr::Packing;
    /// let p = Packing::new(64, 54, 1 << 15).unwrap();
    /// assert_eq!((p.rows, p.width, p.rotations()), (64, 64, 18));
    /// let too_wide = Packing::new(1024, 196, 1 << 16).unwrap_err().to_string();
    /// assert!(too_wide.contains("at most 63 features"), "{too_wide}");
    /// ```
    pub fn new(batch: usize, features: usize, capacity: usize) -> Result<Self, HelrError> {
        if batch == 0 || !capacity.is_power_of_two() {
            return Err(HelrError::Input(format!(
                "a batch of {batch} samples in {capacity} slots: the batch must be at least 1 and the slots a power \
                 of two (N/2 for ring degree N)"
            )));
        }
        let too_many = || HelrError::Capacity(format!("a batch of {batch} samples of {features} features: too many"));
        let rows = batch.checked_next_power_of_two().ok_or_else(too_many)?;
        let width = features.checked_add(1).and_then(usize::checked_next_power_of_two).ok_or_else(too_many)?;
        if rows.saturating_mul(width) <= capacity {
            return Ok(Self { batch, features, rows, width, capacity, ciphertexts: 1 });
        }
        // The widest row that `rows` rows leave room for, and the most rows `width` allows.
        let most_features = (capacity / rows).saturating_sub(1);
        let most_batch = capacity / width;
        let features_hint = if most_features == 0 {
            format!("no features fit a batch of {batch}")
        } else {
            format!("at most {most_features} features fit a batch of {batch}")
        };
        let batch_hint = if most_batch == 0 {
            format!("no batch fits {features} features")
        } else {
            format!("a batch of at most {most_batch} fits {features} features")
        };
        Err(HelrError::Capacity(format!(
            "{features} features and the intercept take {width} slots per sample (padded to a power of two), so a \
             batch of {batch} ({rows} rows) needs {} slots and a ciphertext has {capacity}: {features_hint}, or \
             {batch_hint}",
            rows.saturating_mul(width)
        )))
    }

    /// The layout of a batch of `batch` samples with `features` features over as many
    /// ciphertexts of `capacity` slots as it needs (see the module doc): one where it fits, as
    /// [`Packing::new`]. Refused where one sample's row does not fit a ciphertext.
    ///
    /// ```
    /// use pimhe_workloads::helr::Packing;
    /// // Han et al.'s MNIST batch at N = 2^16: eight ciphertexts of 128 rows.
    /// let p = Packing::split(1024, 196, 1 << 15).unwrap();
    /// assert_eq!((p.ciphertexts, p.block_rows(), p.slots()), (8, 128, 1 << 15));
    /// assert_eq!(p.rotations(), 8 * 16 + 7);
    /// assert!(Packing::split(4, 600, 512).unwrap_err().to_string().contains("at most 511 features"));
    /// ```
    pub fn split(batch: usize, features: usize, capacity: usize) -> Result<Self, HelrError> {
        match Self::new(batch, features, capacity) {
            Err(HelrError::Capacity(_)) if features < capacity => {
                let one = Self::new(1, features, capacity)?;
                let rows = batch.next_power_of_two();
                // Powers of two: R W > capacity >= W, so C = R W / capacity divides R exactly.
                let ciphertexts = rows * one.width / capacity;
                Ok(Self { batch, features, rows, width: one.width, capacity, ciphertexts })
            }
            Err(HelrError::Capacity(_)) => Err(HelrError::Capacity(format!(
                "{features} features and the intercept take more than the {capacity} slots of a ciphertext per \
                 sample: at most {} features fit",
                capacity - 1
            ))),
            fits => fits,
        }
    }

    /// Rows of one ciphertext's block, `R / C`.
    pub fn block_rows(&self) -> usize {
        self.rows / self.ciphertexts
    }

    /// Slots one ciphertext's block packs, `R W / C`: the cycle its rotations act on.
    pub fn slots(&self) -> usize {
        self.block_rows() * self.width
    }

    /// The slot of sample `row`, column `column` (column 0 the intercept).
    pub fn slot(&self, row: usize, column: usize) -> usize {
        row * self.width + column
    }

    /// Rotations per iteration: `C (2 log2 W) + log2 (R / C)`.
    pub fn rotations(&self) -> usize {
        2 * self.ciphertexts * self.width.trailing_zeros() as usize + self.block_rows().trailing_zeros() as usize
    }

    /// The slot vectors of a batch, one block per ciphertext: `rows[i]` is `z_i` (f + 1
    /// values) at slots `i W ..` of the whole `R W` (block `i / (R / C)`), zeros elsewhere.
    /// Refused where the rows do not match the layout.
    pub fn pack(&self, rows: &[&[f64]]) -> Result<Vec<Vec<f64>>, HelrError> {
        if rows.len() != self.batch || rows.iter().any(|z| z.len() != self.features + 1) {
            return Err(HelrError::Input(format!(
                "a batch of {} rows is packed as {} rows of {} values",
                rows.len(),
                self.batch,
                self.features + 1
            )));
        }
        let mut slots = vec![0.0; self.rows * self.width];
        for (i, z) in rows.iter().enumerate() {
            slots[self.slot(i, 0)..self.slot(i, 0) + z.len()].copy_from_slice(z);
        }
        Ok(slots.chunks(self.slots()).map(<[f64]>::to_vec).collect())
    }

    /// The largest batch that fits `capacity` slots with `features` features: `capacity / W`
    /// (0 where not even one sample fits).
    ///
    /// ```
    /// use pimhe_workloads::helr::Packing;
    /// assert_eq!(Packing::largest_batch(61, 1024), 16);
    /// assert_eq!(Packing::new(16, 61, 1024).unwrap().slots(), 1024);
    /// ```
    pub fn largest_batch(features: usize, capacity: usize) -> usize {
        features.checked_add(1).and_then(usize::checked_next_power_of_two).map_or(0, |width| capacity / width)
    }

    /// `slots` (one `R W` block) repeated to fill [`Packing::capacity`] slots, so that
    /// rotations of the whole vector act on each copy as rotations within the block.
    pub fn tile(&self, slots: &[f64]) -> Vec<f64> {
        slots.iter().copied().cycle().take(self.capacity).collect()
    }

    /// Step 2's rotations: 1, 2, .., W/2 (the sum over a row into its column 0).
    pub fn row_sum_steps(&self) -> Vec<i64> {
        (0..self.width.trailing_zeros()).map(|k| 1i64 << k).collect()
    }

    /// Step 3's rotations: -1, -2, .., -W/2 (column 0 replicated across its row).
    pub fn replicate_steps(&self) -> Vec<i64> {
        self.row_sum_steps().into_iter().map(|s| -s).collect()
    }

    /// Step 5's rotations: W, 2W, .., (R / C) W / 2 (the sum over a block's rows).
    pub fn column_sum_steps(&self) -> Vec<i64> {
        (0..self.block_rows().trailing_zeros()).map(|k| (self.width as i64) << k).collect()
    }

    /// Step 3's mask over one block: `value` in column 0 of every row, zero elsewhere.
    pub fn column_mask(&self, value: f64) -> Vec<f64> {
        (0..self.slots()).map(|s| if s % self.width == 0 { value } else { 0.0 }).collect()
    }

    /// `v` (f + 1 weights) replicated into every row of a block.
    pub fn replicate(&self, v: &[f64]) -> Vec<f64> {
        let mut slots = vec![0.0; self.slots()];
        for i in 0..self.block_rows() {
            slots[self.slot(i, 0)..self.slot(i, 0) + v.len()].copy_from_slice(v);
        }
        slots
    }

    /// Steps 1-5 of the module doc on plain slots: the batch `rows` (as [`Packing::pack`]) and
    /// weights `v`, with the rotations and slot-wise products the encrypted trainer will use,
    /// the blocks' products added before the sum over the rows, ending with the mean over the
    /// batch. Returns the gradient read from row 0, and the whole block (every row holds the
    /// same gradient; the padding columns hold zero).
    pub fn gradient_in_slots(
        &self,
        rows: &[&[f64]],
        v: &[f64],
        sigmoid: &Sigmoid,
    ) -> Result<(Vec<f64>, Vec<f64>), HelrError> {
        let blocks = self.pack(rows)?;
        if v.len() != self.features + 1 {
            let (weights, features) = (v.len(), self.features);
            return Err(HelrError::Input(format!("{weights} weights for {features} features and the intercept")));
        }
        let mut g = vec![0.0; self.slots()];
        for z in &blocks {
            // 1. The product with the replicated weights.
            let mut p = mul(z, &self.replicate(v));
            // 2. Sum over each row into its column 0.
            for step in self.row_sum_steps() {
                p = add(&p, &rotate(&p, step));
            }
            // 3. Mask column 0, replicate it across the row.
            let mut m = mul(&p, &self.column_mask(1.0));
            for step in self.replicate_steps() {
                m = add(&m, &rotate(&m, step));
            }
            // 4. The sigmoid of the negated margins, slot-wise.
            let s: Vec<f64> = m.iter().map(|&margin| sigmoid.eval(-margin)).collect();
            // 5a. Times Z, the blocks' partial sums added.
            g = add(&g, &mul(&s, z));
        }
        // 5b. Summed over the rows; the mean and the sign of the gradient.
        for step in self.column_sum_steps() {
            g = add(&g, &rotate(&g, step));
        }
        let scale = -1.0 / self.batch as f64;
        let g: Vec<f64> = g.iter().map(|x| x * scale).collect();
        Ok((g[..self.features + 1].to_vec(), g))
    }
}

/// Slot-wise product.
fn mul(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x * y).collect()
}

/// Slot-wise sum.
fn add(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}

/// The slots rotated as CKKS rotates them: slot `s + k` (cyclically) moves to slot `s`, so a
/// negative `k` moves slots up.
fn rotate(a: &[f64], k: i64) -> Vec<f64> {
    let n = a.len() as i64;
    (0..n).map(|s| a[(s + k).rem_euclid(n) as usize]).collect()
}
