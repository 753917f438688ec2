//! Progress reports from long work (generation, training, evaluation), to whatever shows them.
//!
//! Work that takes more than a moment reports through a [`Progress`]: a stage begins with its
//! number of units, advances unit by unit (from any thread), and ends with a summary line. The
//! `floe` command draws bars on a terminal and prints one line per stage in a log; a library
//! user can forward the calls to its own logger or UI. [`Silent`] reports nothing and
//! [`Lines`] prints each stage's summary to standard error.
//!
//! Stages nest: a stage that begins while another runs (an evaluation inside the warm start)
//! ends before the outer one goes on.

use std::io::Write;

/// Receives progress reports. Every method may be called from several threads at once.
pub trait Progress: Sync {
    /// A stage of `total` units (instances, steps) begins.
    fn begin(&self, stage: &str, total: u64);
    /// `n` more units of the innermost stage are done; `note` says where it stands (a loss, a
    /// reward), or is empty.
    fn advance(&self, n: u64, note: &str);
    /// The innermost stage ended; `summary` is its line for a log (never empty).
    fn end(&self, summary: &str);
    /// A line that belongs to no stage: a configuration, a result.
    fn line(&self, text: &str);
}

/// Reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {
    fn begin(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64, _: &str) {}
    fn end(&self, _: &str) {}
    fn line(&self, _: &str) {}
}

/// Prints each stage's summary and each line to standard error, behind a prefix such as
/// `floe train: `: one line per stage, for logs.
#[derive(Debug, Clone, Default)]
pub struct Lines {
    /// Written before every line.
    pub prefix: String,
}

impl Progress for Lines {
    fn begin(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64, _: &str) {}
    fn end(&self, summary: &str) {
        self.line(summary);
    }
    fn line(&self, text: &str) {
        let _ = writeln!(std::io::stderr().lock(), "{}{text}", self.prefix);
    }
}
