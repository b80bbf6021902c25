//! HELR's data and plaintext trainer against independent computations: the generator's own
//! hyperplane, a separately written Nesterov iteration (FISTA's form), a different quadrature
//! for the sigmoid fit, slot-level rotations for the packed gradient, and the digits CSV read
//! with plain string splitting. Run `cargo test -p pimhe-workloads --test helr -- --nocapture`
//! to see the accuracies measured.

use pimhe_workloads::helr::sigmoid::exact;
use pimhe_workloads::helr::train::gradient;
use pimhe_workloads::helr::{
    evaluate, run, train, ConstantFeatures, HelrError, LabeledData, Packing, RunConfig, Sigmoid, SigmoidPoly, Split,
    Standardization, TrainConfig,
};

const DIGITS: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/helr/digits_3_8.csv"));

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn cosine(a: &[f64], b: &[f64]) -> f64 {
    dot(a, b) / (dot(a, a).sqrt() * dot(b, b).sqrt())
}

fn message(result: Result<impl std::fmt::Debug, HelrError>) -> String {
    result.unwrap_err().to_string()
}

/// Synthetic separable data: the trained model classifies it and points the way the
/// generator's hyperplane does.
///
/// Bounds: the classes are separated by a gap (no sample within 0.25 of the hyperplane), so
/// the generator's own hyperplane is exactly right (checked first), and logistic regression on
/// separable data turns towards the maximum-margin separator, which is exactly right on the
/// training samples too. 32 steps do not get all the way; a prototype of this trainer (numpy,
/// same schedule) reached training accuracy 0.998-1.000 and cosine 0.991-0.999 with the true
/// normal on ten seeds. The bounds, 0.97 accuracy and cosine 0.95, allow ten times the worst
/// shortfall seen, and still fail a trainer with a wrong sign or schedule (which lands near 0.5).
#[test]
fn training_separates_synthetic_separable_data() {
    for seed in 1..=5 {
        let synthetic = LabeledData::synthetic_separable(600, 8, seed).unwrap();
        let data = &synthetic.data;
        for (x, &y) in data.rows().iter().zip(data.labels()) {
            let score = dot(&synthetic.direction, x) + synthetic.offset;
            assert!(score.abs() > synthetic.gap && (score > 0.0) == (y == 1), "seed {seed}: the generator's truth");
        }
        let report = run(data, &RunConfig { seed, ..RunConfig::default() }).unwrap();
        assert!(report.train.accuracy >= 0.97, "seed {seed}: {:?}", report.train);
        assert!(report.test.accuracy >= 0.95, "seed {seed}: {:?}", report.test);
        // Back to the raw features' scale: w_j / sd_j is the direction in x.
        let s = &report.standardization;
        let raw: Vec<f64> = report.training.weights[1..].iter().zip(&s.std_devs).map(|(w, sd)| w / sd).collect();
        let cos = cosine(&raw, &synthetic.direction);
        assert!(cos >= 0.95, "seed {seed}: cosine {cos} with the generator's hyperplane");
    }
}

/// The polynomial sigmoid trains nearly the model the exact one does on the same data.
///
/// Why close: within [-8, 8] the polynomial is within 0.115 of the sigmoid (checked here by
/// sampling), and with the default learning rate few margins leave that interval (also
/// checked), so the two gradient sequences differ by a bounded perturbation. On the prototype
/// (numpy, same schedule, ten seeds) the weights differed by about 17% in length but hardly in
/// direction (cosine at least 0.9998), and the predictions agreed on every held-out sample; the
/// bounds (cosine 0.995, 97% agreement, accuracies within 2 points) allow a few disagreements.
#[test]
fn polynomial_and_exact_sigmoid_train_close_models() {
    let poly = Sigmoid::helr();
    let worst =
        (0..=16_000).map(|i| -8.0 + i as f64 / 1000.0).map(|x| (poly.eval(x) - exact(x)).abs()).fold(0.0, f64::max);
    assert!(worst < 0.115, "{worst}");
    for seed in 1..=3 {
        let data = LabeledData::synthetic_separable(600, 8, seed).unwrap().data;
        let with = |sigmoid| {
            let config =
                RunConfig { seed, train: TrainConfig { sigmoid, ..TrainConfig::default() }, ..RunConfig::default() };
            run(&data, &config).unwrap()
        };
        let (p, e) = (with(poly), with(Sigmoid::Exact));
        assert_eq!(e.training.margins_outside, 0, "the exact sigmoid has no interval");
        assert!(
            (p.training.margins_outside as f64) < 0.05 * p.training.margins as f64,
            "seed {seed}: {} of {} margins outside [-8, 8]",
            p.training.margins_outside,
            p.training.margins
        );
        let cos = cosine(&p.training.weights, &e.training.weights);
        assert!(cos > 0.995, "seed {seed}: cosine {cos} between the two models");
        assert!((p.test.accuracy - e.test.accuracy).abs() <= 0.02, "seed {seed}: {:?} vs {:?}", p.test, e.test);
        // Same held-out samples (same split), predicted alike.
        let split = Split::new(&data, 0.25, seed).unwrap();
        let test = p.standardization.apply(&split.test).unwrap();
        let agree = test
            .rows()
            .iter()
            .filter(|x| {
                let score = |w: &[f64]| w[0] + dot(&w[1..], x);
                (score(&p.training.weights) >= 0.0) == (score(&e.training.weights) >= 0.0)
            })
            .count();
        assert!(agree as f64 >= 0.97 * test.len() as f64, "seed {seed}: {agree} of {} agree", test.len());
    }
}

/// The digits CSV read with string splitting, as a check on the loader: (rows, label counts).
fn digits_by_hand() -> (usize, usize, usize) {
    let mut lines = DIGITS.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header.len(), 65);
    assert_eq!(header[64], "label");
    let labels: Vec<&str> = lines.map(|l| l.rsplit(',').next().unwrap()).collect();
    let ones = labels.iter().filter(|&&l| l == "1").count();
    (labels.len(), labels.len() - ones, ones)
}

/// Held-out accuracy on digits 3 vs 8.
///
/// Bound: scikit-learn's regularized logistic regression scores 0.955 in 5-fold
/// cross-validation on this pair (data/helr/README.md); the prototype of this trainer scored
/// 0.966-0.978 held out. The held-out quarter is 89 samples, so one mistake is 1.1 points: 0.90
/// allows six more mistakes than that reference makes, and fails a trainer that learns little
/// (the larger class alone is 0.51).
#[test]
fn digits_held_out_accuracy() {
    let data = LabeledData::from_csv(DIGITS.as_bytes(), "label").unwrap();
    let (rows, zeros, ones) = digits_by_hand();
    assert_eq!((data.len(), data.features().len()), (rows, 64));
    assert_eq!(data.labels().iter().filter(|&&l| l == 0).count(), zeros);
    assert_eq!(data.labels().iter().filter(|&&l| l == 1).count(), ones);
    let config = RunConfig { constant_features: ConstantFeatures::Drop, ..RunConfig::default() };
    let report = run(&data, &config).unwrap();
    let exact = RunConfig { train: TrainConfig { sigmoid: Sigmoid::Exact, ..config.train }, ..config };
    let exact = run(&data, &exact).unwrap();
    eprintln!(
        "digits 3 vs 8, {} samples, {} features kept ({} constant dropped), batch {}, {} iterations, gamma {}: \
         polynomial sigmoid: train {:.4}, held out {:.4} (loss {:.4}), {} of {} margins outside [-8, 8]; exact \
         sigmoid: train {:.4}, held out {:.4} (loss {:.4})",
        data.len(),
        report.standardization.features.len(),
        report.standardization.dropped.len(),
        config.train.batch,
        config.train.iterations,
        config.train.learning_rate,
        report.train.accuracy,
        report.test.accuracy,
        report.test.loss,
        report.training.margins_outside,
        report.training.margins,
        exact.train.accuracy,
        exact.test.accuracy,
        exact.test.loss
    );
    assert!(report.test.accuracy > 0.90, "{:?}", report.test);
    assert!(exact.test.accuracy > 0.90, "{:?}", exact.test);
    assert_eq!(report.test.samples, (0.25 * rows as f64).round() as usize);
    // What was dropped is constant on the training split, and what was kept is not.
    let split = Split::new(&data, config.test_fraction, config.seed).unwrap();
    for (j, name) in data.features().iter().enumerate() {
        let column: Vec<f64> = split.train.rows().iter().map(|r| r[j]).collect();
        let constant = column.iter().all(|&v| v == column[0]);
        assert_eq!(report.standardization.dropped.contains(name), constant, "{name}");
    }
    // The data set's border pixels are among them.
    assert!(report.standardization.dropped.iter().any(|f| f == "pixel_0_0"));
}

/// A learning rate far too large sends the margins outside the polynomial's interval, where it
/// grows without bound: the trainer says so instead of returning infinite weights.
#[test]
fn divergence_is_reported_not_returned() {
    let data = LabeledData::from_csv(DIGITS.as_bytes(), "label").unwrap();
    let config = RunConfig {
        constant_features: ConstantFeatures::Drop,
        train: TrainConfig { learning_rate: 100.0, ..TrainConfig::default() },
        ..RunConfig::default()
    };
    match run(&data, &config) {
        Err(HelrError::Diverged(m)) => {
            assert!(m.starts_with("the weights stopped being finite at iteration "), "{m}");
            assert!(m.contains("fell outside [-8, 8]") && m.contains("smaller learning rate than 100"), "{m}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_csv_input_is_refused_with_what_where_and_what_is_allowed() {
    let read = |csv: &str| LabeledData::from_csv(csv.as_bytes(), "label");
    assert_eq!(
        message(read("x,y\n1,0\n")),
        "no label column 'label' in the CSV header; it has 'x', 'y': name the column of 0/1 labels"
    );
    assert_eq!(
        message(read("x,label\n1,0\n2,\n")),
        "row 3, column 'label': the cell '' is missing; labels must be 0 or 1"
    );
    assert_eq!(
        message(read("x,label\n1,yes\n")),
        "row 2, column 'label': the cell 'yes' is not a plain decimal number (like -12.5, 3 or 0.25); labels must be \
         0 or 1"
    );
    assert_eq!(
        message(read("x,label\n1,0\n2,0.5\n")),
        "row 3, column 'label': the label is 0.5; labels must be 0 or 1"
    );
    assert_eq!(message(read("x,label\n1,0\n2,-1\n")), "row 3, column 'label': the label is -1; labels must be 0 or 1");
    assert_eq!(
        message(read("x,label\n1,0\nabc,1\n")),
        "row 3, column 'x': the cell 'abc' is not a plain decimal number (like -12.5, 3 or 0.25)"
    );
    assert_eq!(
        message(read("x,label,x\n1,0,2\n")),
        "column 'x' is named twice (columns 1 and 3); column names must be unique"
    );
    assert_eq!(message(read("label\n1\n")), "the CSV has no feature columns besides the label column 'label'");
    assert_eq!(message(read("")), "the CSV is empty: it needs a header row");
    assert_eq!(message(read("x,label\n")), "the CSV has no data rows");
    // Labels written with decimals are still 0 and 1; the features keep their values.
    let data = read("x,label\n1.25,1.0\n-2,0.00\n").unwrap();
    assert_eq!((data.rows(), data.labels()), (&[vec![1.25], vec![-2.0]][..], &[1u8, 0][..]));
}

#[test]
fn bad_training_input_is_refused_with_what_where_and_what_is_allowed() {
    let data = LabeledData::synthetic_separable(10, 2, 1).unwrap().data;
    assert_eq!(
        message(train(&data, &TrainConfig::default())),
        "the training split has 10 samples, fewer than the batch of 64: use a batch of at most 10, more data or a \
         smaller --test-fraction"
    );
    let wide = LabeledData::synthetic_separable(100, 20, 1).unwrap().data;
    let config = TrainConfig { slots: Some(1024), ..TrainConfig::default() };
    let refused = train(&wide, &config).unwrap_err();
    assert!(matches!(refused, HelrError::Capacity(_)));
    assert_eq!(
        refused.to_string(),
        "20 features and the intercept take 32 slots per sample (padded to a power of two), so a batch of 64 (64 \
         rows) needs 2048 slots and a ciphertext has 1024: at most 15 features fit a batch of 64, or a batch of at \
         most 32 fits 20 features"
    );
    // The limits it names are the real ones.
    assert!(train(&wide, &TrainConfig { batch: 32, ..config }).is_ok());
    let fifteen = LabeledData::synthetic_separable(100, 15, 1).unwrap().data;
    assert!(train(&fifteen, &config).is_ok());

    let flat = LabeledData::from_csv("a,b,label\n1,7,0\n2,7,1\n3,7,0\n".as_bytes(), "label").unwrap();
    assert_eq!(
        message(Standardization::fit(&flat, ConstantFeatures::Refuse)),
        "feature 'b' is constant on the training split (all 3 values are 7); 1 feature is constant: 'b'; \
         standardizing divides by its spread: leave such columns out of the CSV or drop them \
         (ConstantFeatures::Drop)"
    );
    let dropped = Standardization::fit(&flat, ConstantFeatures::Drop).unwrap();
    assert_eq!(
        (dropped.features.as_slice(), dropped.dropped.as_slice()),
        (&["a".to_string()][..], &["b".to_string()][..])
    );
    assert_eq!(
        message(Split::new(&data, 0.0, 1)),
        "--test-fraction 0: it must lie strictly between 0 and 1 (0.25 holds out a quarter)"
    );
    assert_eq!(
        message(Split::new(&data, 0.01, 1)),
        "--test-fraction 0.01 of 10 samples holds out 0, leaving 10 to train on: both sides need at least one sample"
    );
    assert!(message(train(&data, &TrainConfig { learning_rate: f64::NAN, batch: 5, ..TrainConfig::default() }))
        .starts_with("learning rate NaN: it must be a positive finite number"));
}

/// The scaling comes from the training split only: test rows changed beyond recognition
/// change nothing of it, and it equals the mean and spread of the training rows computed here.
#[test]
fn standardization_comes_from_the_training_split_only() {
    let data = LabeledData::synthetic_separable(200, 3, 4).unwrap().data;
    let config = RunConfig { seed: 11, ..RunConfig::default() };
    let split = Split::new(&data, config.test_fraction, config.seed).unwrap();
    let report = run(&data, &config).unwrap();
    let s = &report.standardization;
    let n = split.train.len() as f64;
    for j in 0..3 {
        let column: Vec<f64> = split.train.rows().iter().map(|r| r[j]).collect();
        let mean = column.iter().sum::<f64>() / n;
        let sd = (column.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
        assert!((s.means[j] - mean).abs() < 1e-12 && (s.std_devs[j] - sd).abs() < 1e-12, "feature {j}");
        let all = data.rows().iter().map(|r| r[j]).sum::<f64>() / data.len() as f64;
        assert!((all - mean).abs() > 1e-9, "feature {j}: the full data would give another mean");
    }
    // The split depends on the seed and the row count only: scale every held-out row by 1000
    // and the same rows are held out, with no effect on the scaling or the model.
    let held_out: Vec<&Vec<f64>> = split.test.rows().iter().collect();
    let rows: Vec<Vec<f64>> = data
        .rows()
        .iter()
        .map(|r| if held_out.contains(&r) { r.iter().map(|v| v * 1000.0).collect() } else { r.clone() })
        .collect();
    let changed = LabeledData::new(data.features().to_vec(), rows, data.labels().to_vec()).unwrap();
    let again = run(&changed, &config).unwrap();
    assert_eq!(again.standardization, report.standardization);
    assert_eq!(again.training, report.training);
    assert_ne!(again.test, report.test);
    // Standardized training rows have mean 0 and variance 1.
    let train = s.apply(&split.train).unwrap();
    for j in 0..3 {
        let mean = train.rows().iter().map(|r| r[j]).sum::<f64>() / n;
        let var = train.rows().iter().map(|r| (r[j] - mean).powi(2)).sum::<f64>() / n;
        assert!(mean.abs() < 1e-12 && (var - 1.0).abs() < 1e-12, "feature {j}: {mean} {var}");
    }
}

#[test]
fn the_split_is_seeded_disjoint_and_complete() {
    let data = LabeledData::synthetic_separable(101, 2, 3).unwrap().data;
    let a = Split::new(&data, 0.3, 5).unwrap();
    assert_eq!(a, Split::new(&data, 0.3, 5).unwrap());
    assert_ne!(a, Split::new(&data, 0.3, 6).unwrap());
    assert_eq!((a.test.len(), a.train.len()), (30, 71));
    let key = |r: &Vec<f64>| r.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let mut seen: Vec<_> = a.train.rows().iter().chain(a.test.rows()).map(key).collect();
    let mut all: Vec<_> = data.rows().iter().map(key).collect();
    seen.sort();
    all.sort();
    assert_eq!(seen, all);
}

/// The least-squares fit satisfies its normal equations under an independent quadrature
/// (trapezoids on a grid of [-B, B] rather than Simpson's rule on [-1, 1]), and matches the
/// coefficients Kim et al. publish for B = 8.
#[test]
fn the_sigmoid_fit_is_the_least_squares_cubic() {
    for interval in [8.0, 4.0, 16.0] {
        let p = SigmoidPoly::least_squares(interval);
        let steps = 200_000;
        let h = 2.0 * interval / steps as f64;
        for k in 0..4 {
            let residual: f64 = (0..=steps)
                .map(|i| {
                    let x = -interval + i as f64 * h;
                    let w = if i == 0 || i == steps { h / 2.0 } else { h };
                    w * (exact(x) - p.eval(x)) * x.powi(k)
                })
                .sum();
            // Relative to the size of x^k over the interval.
            assert!(residual.abs() < 1e-6 * interval.powi(k + 1), "B = {interval}, x^{k}: {residual}");
        }
        // sigmoid(x) - 1/2 is odd, so is the best fit.
        assert!((p.coefficients[0] - 0.5).abs() < 1e-12 && p.coefficients[2].abs() < 1e-12, "{p:?}");
    }
    let p = SigmoidPoly::least_squares(8.0);
    assert!((p.coefficients[1] - 1.20096 / 8.0).abs() < 1e-5, "{p:?}");
    assert!((p.coefficients[3] + 0.81562 / 512.0).abs() < 1e-6, "{p:?}");
}

/// The slot layout computes the trainer's gradient: rotations and slot-wise products on the
/// packed batch give, in every row, what `gradient` gives from the rows.
#[test]
fn the_packed_gradient_equals_the_trainers() {
    for (batch, features) in [(48, 5), (64, 7), (1, 1), (33, 16)] {
        let data = LabeledData::synthetic_separable(batch, features, batch as u64).unwrap().data;
        let z: Vec<Vec<f64>> = data
            .rows()
            .iter()
            .zip(data.labels())
            .map(|(x, &y)| {
                let s = if y == 1 { 1.0 } else { -1.0 };
                std::iter::once(s).chain(x.iter().map(|v| s * v)).collect()
            })
            .collect();
        let rows: Vec<&[f64]> = z.iter().map(Vec::as_slice).collect();
        let v: Vec<f64> = (0..=features).map(|j| 0.3 - 0.1 * j as f64).collect();
        let packing = Packing::new(batch, features, 1 << 14).unwrap();
        for sigmoid in [Sigmoid::helr(), Sigmoid::Exact] {
            let (expected, _) = gradient(&rows, &v, &sigmoid);
            let (from_slots, slots) = packing.gradient_in_slots(&rows, &v, &sigmoid).unwrap();
            for (a, b) in from_slots.iter().zip(&expected) {
                assert!((a - b).abs() < 1e-12, "batch {batch}, {features} features: {a} vs {b}");
            }
            for i in 0..packing.rows {
                for j in 0..packing.width {
                    let want = if j <= features { expected[j] } else { 0.0 };
                    assert!((slots[packing.slot(i, j)] - want).abs() < 1e-12, "row {i}, column {j}");
                }
            }
        }
        assert_eq!(
            packing.rotations(),
            2 * packing.width.trailing_zeros() as usize + packing.rows.trailing_zeros() as usize
        );
    }
}

/// A batch cut over several ciphertexts (capacities of 64 to 512 slots: up to 16 blocks) sums
/// the blocks' partial gradients into the trainer's gradient, in every row of the block.
#[test]
fn the_packed_gradient_over_several_ciphertexts_equals_the_trainers() {
    for (batch, features, capacity, blocks) in [(100, 5, 256, 4), (33, 16, 512, 4), (64, 2, 64, 4), (128, 3, 32, 16)] {
        let data = LabeledData::synthetic_separable(batch, features, 7).unwrap().data;
        let z: Vec<Vec<f64>> = data
            .rows()
            .iter()
            .zip(data.labels())
            .map(|(x, &y)| {
                let s = if y == 1 { 1.0 } else { -1.0 };
                std::iter::once(s).chain(x.iter().map(|v| s * v)).collect()
            })
            .collect();
        let rows: Vec<&[f64]> = z.iter().map(Vec::as_slice).collect();
        let v: Vec<f64> = (0..=features).map(|j| 0.2 - 0.05 * j as f64).collect();
        let packing = Packing::split(batch, features, capacity).unwrap();
        assert_eq!(packing.ciphertexts, blocks, "batch {batch}, {features} features in {capacity} slots");
        assert!(Packing::new(batch, features, capacity).is_err());
        assert_eq!(packing.pack(&rows).unwrap().len(), blocks);
        let (expected, _) = gradient(&rows, &v, &Sigmoid::helr());
        let (from_slots, slots) = packing.gradient_in_slots(&rows, &v, &Sigmoid::helr()).unwrap();
        for (a, b) in from_slots.iter().zip(&expected) {
            assert!((a - b).abs() < 1e-12, "batch {batch}: {a} vs {b}");
        }
        for i in 0..packing.block_rows() {
            for j in 0..=features {
                assert!((slots[packing.slot(i, j)] - expected[j]).abs() < 1e-12, "row {i}, column {j}");
            }
        }
    }
}

/// The trainer's momentum against FISTA written the classical way (Beck and Teboulle:
/// `y = x_k + ((t_k - 1) / t_(k+1)) (x_k - x_(k-1))`), full batch, exact sigmoid, with the
/// gradient computed here from the loss' definition.
#[test]
fn the_nesterov_schedule_is_fistas() {
    let data = LabeledData::synthetic_separable(40, 3, 2).unwrap().data;
    let iterations = 12;
    let gamma = 0.7;
    let config = TrainConfig { batch: 40, iterations, learning_rate: gamma, sigmoid: Sigmoid::Exact, slots: None };
    let trained = train(&data, &config).unwrap();

    let samples: Vec<(Vec<f64>, f64)> = data
        .rows()
        .iter()
        .zip(data.labels())
        .map(|(x, &y)| (std::iter::once(1.0).chain(x.iter().copied()).collect(), f64::from(y)))
        .collect();
    // d/dw of mean(-y log p - (1 - y) log(1 - p)), p = sigmoid(x . w): mean((p - y) x).
    let grad = |w: &[f64]| {
        let mut g = vec![0.0; w.len()];
        for (x, y) in &samples {
            let p = 1.0 / (1.0 + (-dot(x, w)).exp());
            g.iter_mut().zip(x).for_each(|(gj, xj)| *gj += (p - y) * xj / samples.len() as f64);
        }
        g
    };
    let (mut x_prev, mut y) = (vec![0.0; 4], vec![0.0; 4]);
    let mut t = 1.0f64;
    for k in 1..=iterations {
        let g = grad(&y);
        let x: Vec<f64> = y.iter().zip(&g).map(|(yj, gj)| yj - gamma / k as f64 * gj).collect();
        let t_next = (1.0 + (1.0 + 4.0 * t * t).sqrt()) / 2.0;
        y = x.iter().zip(&x_prev).map(|(a, b)| a + (t - 1.0) / t_next * (a - b)).collect();
        x_prev = x;
        t = t_next;
    }
    for (a, b) in trained.weights.iter().zip(&x_prev) {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
    assert!(evaluate(&trained.weights, &data).unwrap().loss < evaluate(&[0.0; 4], &data).unwrap().loss);
}
