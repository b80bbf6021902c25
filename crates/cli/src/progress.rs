//! Progress bars on stderr ([`indicatif`]) for the long runs, through the library's
//! [`Progress`] hook.
//!
//! A bar is drawn only when stderr is a terminal and the output is not `--json`, and only once
//! a run has lasted [`SHOW_AFTER`]: a short run, a test or a pipe sees exactly the output it
//! always saw.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pimhe_bench::Progress;

/// How long a run goes before its bar appears.
pub const SHOW_AFTER: Duration = Duration::from_secs(1);

/// A [`Progress`] drawn as a terminal bar on stderr (or nothing, see the module documentation).
#[derive(Clone)]
pub struct TermProgress {
    enabled: bool,
    bar: Arc<Mutex<Option<ProgressBar>>>,
}

impl TermProgress {
    /// A bar for a command whose output is `--json` when `json`: drawn only when stderr is a
    /// terminal and `json` is false.
    pub fn new(json: bool) -> Self {
        Self { enabled: !json && std::io::stderr().is_terminal(), bar: Arc::new(Mutex::new(None)) }
    }

    /// Prints `text` and a newline on stdout without tearing the bar.
    pub fn println(&self, text: &str) {
        match self.current() {
            Some(bar) => bar.suspend(|| crate::output::line(text)),
            None => crate::output::line(text),
        }
    }

    fn current(&self) -> Option<ProgressBar> {
        self.bar.lock().ok().and_then(|b| b.clone())
    }
}

impl Progress for TermProgress {
    fn start(&self, len: u64, label: &str) {
        if !self.enabled {
            return;
        }
        self.finish();
        let bar = if len == 0 { ProgressBar::no_length() } else { ProgressBar::new(len) };
        bar.set_draw_target(ProgressDrawTarget::hidden());
        let template = if len == 0 {
            "{spinner} {msg} [{elapsed_precise}]"
        } else {
            "{bar:40} {pos}/{len} {msg} [{elapsed_precise}, eta {eta}]"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        bar.set_message(label.to_string());
        if let Ok(mut slot) = self.bar.lock() {
            *slot = Some(bar.clone());
        }
        // Shown once the run has lasted SHOW_AFTER, unless it is over by then.
        let weak = bar.downgrade();
        std::thread::spawn(move || {
            std::thread::sleep(SHOW_AFTER);
            if let Some(bar) = weak.upgrade() {
                if !bar.is_finished() {
                    bar.set_draw_target(ProgressDrawTarget::stderr());
                    bar.enable_steady_tick(Duration::from_millis(200));
                }
            }
        });
    }

    fn advance(&self, n: u64) {
        if let Some(bar) = self.current() {
            bar.inc(n);
        }
    }

    fn finish(&self) {
        if let Ok(mut slot) = self.bar.lock() {
            if let Some(bar) = slot.take() {
                bar.finish_and_clear();
            }
        }
    }
}
