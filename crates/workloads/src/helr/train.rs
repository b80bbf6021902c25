//! The plaintext reference trainer: HELR's mini-batch Nesterov accelerated gradient, in the
//! order of operations of the encrypted trainer ([`super::packing`]), and the held-out
//! evaluation.
//!
//! ## What one iteration computes
//! Labels become signs `y' = 2y - 1` and each training sample the vector `z = y' (1, x)` (the
//! intercept first), so that the log-likelihood gradient needs no label term (Kim et al. 2018,
//! Han et al. 2019). The training samples, in their split order, form `ceil(n / m)` fixed
//! batches of `m` rows, batch `b` holding rows `(b m + i) mod n` (the last one wraps to the
//! first rows, so every batch is full, as every encrypted batch is one full ciphertext).
//! Iteration k = 1, 2, .., K uses batch `(k - 1) mod ceil(n / m)`; with `v` the look-ahead
//! weights and `w` the weights:
//!
//! ```text
//! margin_i = z_i . v                              (i in the batch)
//! g        = -(1/m) sum_i sigmoid(-margin_i) z_i  (the gradient of the mean log-loss)
//! w'       = v - (gamma / k) g
//! v'       = (1 - eta_k) w' + eta_k w,   eta_k = (1 - lambda_k) / lambda_(k+1)
//! lambda_1 = 1,   lambda_(k+1) = (1 + sqrt(1 + 4 lambda_k^2)) / 2
//! ```
//!
//! This is Nesterov's method as Kim et al. (JMIR Med. Inform. 2018) write it, the method Han
//! et al. run on mini-batches, with `eta_k <= 0`: `v'` steps past `w'` away from `w`
//! (momentum), and not at all at the first iteration (`eta_1 = 0`). `w` and `v` start at zero.
//! The learning-rate constant is this crate's choice: Kim et al. use `gamma = 10` on features
//! scaled into [0, 1]; with standardized features (variance 1) the margins grow much faster,
//! leave the polynomial's interval within a few iterations and the weights diverge, so the
//! default here is `gamma = 1` (on the digits data, 32 iterations leave about 1% of the margins
//! outside [-8, 8]). The trainer counts those margins and refuses
//! weights that stopped being finite.

use serde::Serialize;

use super::data::dot;
use super::{ConstantFeatures, HelrError, LabeledData, Packing, Sigmoid, Split, Standardization};

/// How to train.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TrainConfig {
    /// Samples per mini-batch, `m` (Han et al. and Anaheim: 1024).
    pub batch: usize,
    /// Gradient steps, one batch each (Anaheim: 32).
    pub iterations: usize,
    /// `gamma` of the learning rate `gamma / k` at iteration k = 1, 2, ...
    pub learning_rate: f64,
    /// The sigmoid: HELR's polynomial, or the exact one for comparison.
    pub sigmoid: Sigmoid,
    /// Slots of one CKKS ciphertext, where the batch must fit one ([`Packing::new`]); `None`
    /// trains without that limit.
    pub slots: Option<usize>,
}

impl Default for TrainConfig {
    /// A batch of 64, 32 iterations, `gamma = 1`, HELR's degree-3 sigmoid on [-8, 8], no slot
    /// limit.
    fn default() -> Self {
        Self { batch: 64, iterations: 32, learning_rate: 1.0, sigmoid: Sigmoid::helr(), slots: None }
    }
}

/// A trained model and how the training went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrainReport {
    /// The weights `w`, intercept first, then one per feature (of standardized features).
    pub weights: Vec<f64>,
    /// Batches the training samples were cut into.
    pub batches: usize,
    /// Inner products `z . v` computed (iterations x batch).
    pub margins: usize,
    /// Of those, how many fell outside the polynomial's interval (0 for the exact sigmoid).
    pub margins_outside: usize,
}

/// Accuracy and loss of a model on some samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Evaluation {
    /// Samples evaluated.
    pub samples: usize,
    /// Fraction predicted right: label 1 exactly where `(1, x) . w >= 0`.
    pub accuracy: f64,
    /// Mean logistic loss `log(1 + e^(-y' (1, x) . w))`, with the exact sigmoid.
    pub loss: f64,
}

/// Trains HELR's logistic regression on `train` (standardized features; see the module doc).
/// Refused: an empty batch, no iterations, a learning rate that is not a positive finite
/// number, fewer training samples than the batch, a batch that does not fit `config.slots`, and
/// weights that stop being finite (reported as [`HelrError::Diverged`]).
///
/// ```
/// use pimhe_workloads::helr::{evaluate, train, LabeledData, TrainConfig};
/// let data = LabeledData::synthetic_separable(200, 3, 5).unwrap().data;
/// let report = train(&data, &TrainConfig::default()).unwrap();
/// assert_eq!(report.weights.len(), 4);
/// assert!(evaluate(&report.weights, &data).unwrap().accuracy > 0.9);
/// ```
pub fn train(train: &LabeledData, config: &TrainConfig) -> Result<TrainReport, HelrError> {
    let TrainConfig { batch, iterations, learning_rate, sigmoid, slots } = *config;
    check(train, config)?;
    if let Some(slots) = slots {
        Packing::new(batch, train.features().len(), slots)?;
    }
    let z = signed_rows(train);
    let dim = train.features().len() + 1;
    let (mut w, mut v) = (vec![0.0; dim], vec![0.0; dim]);
    let mut schedule = Nesterov::new(learning_rate);
    let mut margins_outside = 0;
    for t in 0..iterations {
        let (g, outside) = gradient(&batch_rows(&z, batch, t), &v, &sigmoid);
        margins_outside += outside;
        let Step { gamma, eta } = schedule.next_step();
        let w_next: Vec<f64> = v.iter().zip(&g).map(|(vj, gj)| vj - gamma * gj).collect();
        v = w_next.iter().zip(&w).map(|(a, b)| (1.0 - eta) * a + eta * b).collect();
        w = w_next;
        if w.iter().chain(&v).any(|x| !x.is_finite()) {
            let interval = sigmoid.interval().map_or(String::new(), |b| {
                format!(
                    ", {margins_outside} of {} inner products so far fell outside [-{b}, {b}] where the polynomial \
                         sigmoid is not one",
                    (t + 1) * batch
                )
            });
            return Err(HelrError::Diverged(format!(
                "the weights stopped being finite at iteration {}{interval}: use a smaller learning rate than \
                 {learning_rate} or fewer iterations than {iterations}",
                t + 1
            )));
        }
    }
    Ok(TrainReport { weights: w, batches: z.len().div_ceil(batch), margins: iterations * batch, margins_outside })
}

/// Refuses what no trainer, plaintext or encrypted, can run: an empty batch, no iterations, a
/// learning rate that is not a positive finite number, fewer training samples than the batch.
pub(crate) fn check(train: &LabeledData, config: &TrainConfig) -> Result<(), HelrError> {
    let TrainConfig { batch, iterations, learning_rate, .. } = *config;
    if batch == 0 || iterations == 0 {
        return Err(HelrError::Input(format!(
            "a batch of {batch} samples and {iterations} iterations: both must be at least 1"
        )));
    }
    if !(learning_rate.is_finite() && learning_rate > 0.0) {
        return Err(HelrError::Input(format!("learning rate {learning_rate}: it must be a positive finite number")));
    }
    let n = train.len();
    if n < batch {
        return Err(HelrError::Input(format!(
            "the training split has {n} samples, fewer than the batch of {batch}: use a batch of at most {n}, more \
             data or a smaller --test-fraction"
        )));
    }
    Ok(())
}

/// Each training sample as `z = y' (1, x)`, `y' = 2y - 1` (see the module doc).
pub(crate) fn signed_rows(train: &LabeledData) -> Vec<Vec<f64>> {
    train
        .rows()
        .iter()
        .zip(train.labels())
        .map(|(x, &y)| {
            let sign = if y == 1 { 1.0 } else { -1.0 };
            std::iter::once(sign).chain(x.iter().map(|v| sign * v)).collect()
        })
        .collect()
}

/// The rows of the batch iteration `t` (from 0) uses: batch `t mod ceil(n / m)`, its rows
/// `(b m + i) mod n`, so the last batch wraps to the first rows (see the module doc).
pub(crate) fn batch_rows(z: &[Vec<f64>], batch: usize, t: usize) -> Vec<&[f64]> {
    let n = z.len();
    let first = (t % n.div_ceil(batch)) * batch;
    (0..batch).map(|i| z[(first + i) % n].as_slice()).collect()
}

/// The constants of one Nesterov update: `w' = v - gamma g`, `v' = (1 - eta) w' + eta w`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// `gamma / k` at iteration k.
    pub gamma: f64,
    /// `eta_k = (1 - lambda_k) / lambda_(k+1)`.
    pub eta: f64,
}

/// The schedule of [`Step`]s, iteration by iteration (the module doc's `lambda_k`).
#[derive(Debug, Clone)]
pub struct Nesterov {
    learning_rate: f64,
    lambda: f64,
    k: usize,
}

impl Nesterov {
    /// The schedule of learning rate `gamma`, before iteration 1.
    pub fn new(learning_rate: f64) -> Self {
        Self { learning_rate, lambda: 1.0, k: 0 }
    }

    /// The constants of the next iteration.
    pub fn next_step(&mut self) -> Step {
        self.k += 1;
        let next_lambda = (1.0 + (1.0 + 4.0 * self.lambda * self.lambda).sqrt()) / 2.0;
        let eta = (1.0 - self.lambda) / next_lambda;
        self.lambda = next_lambda;
        Step { gamma: self.learning_rate / self.k as f64, eta }
    }
}

/// The gradient of the mean logistic loss over `rows` (each `z_i = y'_i (1, x_i)`) at `v`, with
/// the sigmoid given: `-(1/m) sum_i sigmoid(-z_i . v) z_i`; and how many of the `z_i . v` fell
/// outside the sigmoid's interval. This is what one encrypted iteration computes
/// ([`Packing::gradient_in_slots`] computes it slot by slot).
pub fn gradient(rows: &[&[f64]], v: &[f64], sigmoid: &Sigmoid) -> (Vec<f64>, usize) {
    let mut g = vec![0.0; v.len()];
    let mut outside = 0;
    for z in rows {
        let margin = dot(z, v);
        if sigmoid.interval().is_some_and(|b| margin.abs() > b) {
            outside += 1;
        }
        let s = sigmoid.eval(-margin);
        for (gj, zj) in g.iter_mut().zip(z.iter()) {
            *gj -= s * zj;
        }
    }
    let m = rows.len() as f64;
    g.iter_mut().for_each(|gj| *gj /= m);
    (g, outside)
}

/// Accuracy and mean logistic loss of `weights` (intercept first) on `data`.
///
/// ```
/// use pimhe_workloads::helr::{evaluate, LabeledData};
/// let data = LabeledData::new(vec!["x".into()], vec![vec![1.0], vec![-1.0]], vec![1, 0]).unwrap();
/// let e = evaluate(&[0.0, 2.0], &data).unwrap();
/// assert_eq!(e.accuracy, 1.0);
/// assert!((e.loss - (1.0 + (-2.0f64).exp()).ln()).abs() < 1e-12);
/// ```
pub fn evaluate(weights: &[f64], data: &LabeledData) -> Result<Evaluation, HelrError> {
    if weights.len() != data.features().len() + 1 {
        return Err(HelrError::Input(format!(
            "{} weights for {} features: one per feature and the intercept are needed",
            weights.len(),
            data.features().len()
        )));
    }
    if data.is_empty() {
        return Err(HelrError::Input("no samples to evaluate on".into()));
    }
    let (mut right, mut loss) = (0usize, 0.0);
    for (x, &y) in data.rows().iter().zip(data.labels()) {
        let score = weights[0] + dot(&weights[1..], x);
        right += usize::from((score >= 0.0) == (y == 1));
        let signed = if y == 1 { score } else { -score };
        // log(1 + e^-s), without overflow of e^-s for a confidently wrong score.
        loss += if signed > 0.0 { (-signed).exp().ln_1p() } else { -signed + signed.exp().ln_1p() };
    }
    let n = data.len() as f64;
    Ok(Evaluation { samples: data.len(), accuracy: right as f64 / n, loss: loss / n })
}

/// The whole plaintext workload: split, standardize on the training split, train, evaluate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RunConfig {
    /// Fraction of samples held out (`--test-fraction`).
    pub test_fraction: f64,
    /// Seed of the split.
    pub seed: u64,
    /// What to do with features constant on the training split.
    pub constant_features: ConstantFeatures,
    /// The training itself.
    pub train: TrainConfig,
}

impl Default for RunConfig {
    /// A quarter held out, seed 1, constant features refused, [`TrainConfig::default`].
    fn default() -> Self {
        Self {
            test_fraction: 0.25,
            seed: 1,
            constant_features: ConstantFeatures::Refuse,
            train: TrainConfig::default(),
        }
    }
}

/// What [`run`] found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunReport {
    /// The scaling fitted on the training split (means, standard deviations, dropped features).
    pub standardization: Standardization,
    /// The training.
    pub training: TrainReport,
    /// The model on the samples it was trained on.
    pub train: Evaluation,
    /// The model on the held-out samples.
    pub test: Evaluation,
}

/// Splits `data` with `config.seed`, fits the standardization on the training split only,
/// trains, and evaluates on both splits.
pub fn run(data: &LabeledData, config: &RunConfig) -> Result<RunReport, HelrError> {
    let split = Split::new(data, config.test_fraction, config.seed)?;
    let standardization = Standardization::fit(&split.train, config.constant_features)?;
    let train_set = standardization.apply(&split.train)?;
    let test_set = standardization.apply(&split.test)?;
    let training = train(&train_set, &config.train)?;
    let train_eval = evaluate(&training.weights, &train_set)?;
    let test = evaluate(&training.weights, &test_set)?;
    Ok(RunReport { standardization, training, train: train_eval, test })
}
