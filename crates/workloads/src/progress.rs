//! Progress of long runs, reported to whoever drives them: the CLI draws a terminal bar, the
//! Python package a tqdm-style one, tests and library users nothing ([`NoProgress`]).
//!
//! A run calls [`Progress::start`] once with the number of steps it will take (0 when it cannot
//! tell), [`Progress::advance`] as steps complete, and [`Progress::finish`] at the end. The
//! methods take `&self` so that one reporter can be shared (`Arc<dyn Progress>`), and may be
//! called from worker threads: implementations keep their state behind a lock or atomics.

/// Where a long run reports how far it got.
pub trait Progress: Send + Sync {
    /// A run of `len` steps (0: unknown) begins; `label` says what is counted, e.g. `rows`.
    fn start(&self, len: u64, label: &str);
    /// `n` more steps are done.
    fn advance(&self, n: u64);
    /// The run is over (successfully or not); the reporter may clear its display.
    fn finish(&self);
}

/// Reports nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _len: u64, _label: &str) {}
    fn advance(&self, _n: u64) {}
    fn finish(&self) {}
}

/// Keeps every call as a line (`start 3 rounds`, `advance 1`, `finish`), in order: for a caller
/// that reads progress afterwards rather than drawing it, and for tests of what a run reports.
///
/// ```
/// use pimhe_workloads::progress::{Progress, Recorded};
/// let recorded = Recorded::default();
/// recorded.start(2, "rows");
/// recorded.advance(2);
/// recorded.finish();
/// assert_eq!(recorded.calls(), ["start 2 rows", "advance 2", "finish"]);
/// ```
#[derive(Debug, Default)]
pub struct Recorded(std::sync::Mutex<Vec<String>>);

impl Recorded {
    /// The calls so far.
    pub fn calls(&self) -> Vec<String> {
        self.0.lock().map(|calls| calls.clone()).unwrap_or_default()
    }

    fn push(&self, call: String) {
        if let Ok(mut calls) = self.0.lock() {
            calls.push(call);
        }
    }
}

impl Progress for Recorded {
    fn start(&self, len: u64, label: &str) {
        self.push(format!("start {len} {label}"));
    }
    fn advance(&self, n: u64) {
        self.push(format!("advance {n}"));
    }
    fn finish(&self) {
        self.push("finish".into());
    }
}

impl<P: Progress + ?Sized> Progress for &P {
    fn start(&self, len: u64, label: &str) {
        (**self).start(len, label)
    }
    fn advance(&self, n: u64) {
        (**self).advance(n)
    }
    fn finish(&self) {
        (**self).finish()
    }
}

impl<P: Progress + ?Sized> Progress for std::sync::Arc<P> {
    fn start(&self, len: u64, label: &str) {
        (**self).start(len, label)
    }
    fn advance(&self, n: u64) {
        (**self).advance(n)
    }
    fn finish(&self) {
        (**self).finish()
    }
}

/// Runs the step `name` and reports how long it took to `observe` (the demo pipelines' timed
/// steps); the step's error, if any, is returned without a report.
pub fn timed<T, E>(
    observe: &mut impl FnMut(&str, std::time::Duration),
    name: &str,
    step: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    let start = std::time::Instant::now();
    let value = step()?;
    observe(name, start.elapsed());
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    #[derive(Default)]
    struct Count(AtomicU64);

    impl Progress for Count {
        fn start(&self, _len: u64, _label: &str) {}
        fn advance(&self, n: u64) {
            self.0.fetch_add(n, Ordering::Relaxed);
        }
        fn finish(&self) {}
    }

    #[test]
    fn shared_reporters_see_every_step() {
        let count = Arc::new(Count::default());
        let shared: Arc<dyn Progress> = count.clone();
        shared.start(3, "steps");
        (&*shared).advance(2);
        shared.advance(1);
        shared.finish();
        NoProgress.advance(5);
        assert_eq!(count.0.load(Ordering::Relaxed), 3);
    }
}
