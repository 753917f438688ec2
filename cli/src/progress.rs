//! Progress as the `floe` command shows it: bars on a terminal, one line per stage elsewhere.
//!
//! On a terminal each stage draws a bar with its count, its note and a time left estimated from
//! the stage's mean rate so far (steady, unlike a rate over the last few units, which swings when
//! a step is slow). When standard error is a file or a pipe (a log, CI), no bar is drawn and each
//! stage prints its summary line when it ends.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use floe_core::progress::{Lines, Progress};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Bars on a terminal, lines elsewhere; nothing at all when quiet.
#[derive(Debug)]
pub struct Bars {
    lines: Lines,
    terminal: bool,
    quiet: bool,
    stack: Mutex<Vec<Stage>>,
}

#[derive(Debug)]
struct Stage {
    bar: ProgressBar,
    started: Instant,
    total: u64,
    done: u64,
}

impl Bars {
    /// Progress for the command `name` (`floe train`, …).
    pub fn new(name: &str, quiet: bool) -> Self {
        Bars {
            lines: Lines { prefix: format!("{name}: ") },
            terminal: std::io::stderr().is_terminal(),
            quiet,
            stack: Mutex::new(Vec::new()),
        }
    }

    /// Ends the innermost stage, printing its summary unless `quiet`.
    pub fn end_quietly_if(&self, quiet: bool, summary: &str) {
        if quiet {
            self.pop();
        } else {
            self.end(summary);
        }
    }

    /// Removes the innermost stage's bar and gives the line back to the outer stage's.
    fn pop(&self) {
        let mut stack = self.stack();
        if let Some(s) = stack.pop() {
            s.bar.finish_and_clear();
        }
        if let Some(outer) = stack.last() {
            outer.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    fn stack(&self) -> std::sync::MutexGuard<'_, Vec<Stage>> {
        self.stack.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// `m:ss`, or `h:mm:ss` from an hour up.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// The time left at the stage's mean rate so far; none before a unit is done or a second has
/// passed, when a mean says little.
fn time_left(elapsed: Duration, done: u64, total: u64) -> Option<Duration> {
    if done == 0 || elapsed < Duration::from_secs(1) || done >= total {
        return None;
    }
    Some(elapsed.mul_f64((total - done) as f64 / done as f64))
}

impl Progress for Bars {
    fn begin(&self, stage: &str, total: u64) {
        if self.quiet {
            return;
        }
        let mut stack = self.stack();
        let bar = if self.terminal {
            // The outer stage's bar gives its line to the inner one until that ends.
            if let Some(outer) = stack.last() {
                outer.bar.set_draw_target(ProgressDrawTarget::hidden());
            }
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            bar.set_prefix(stage.to_string());
            bar
        } else {
            ProgressBar::hidden()
        };
        stack.push(Stage { bar, started: Instant::now(), total, done: 0 });
    }

    fn advance(&self, n: u64, note: &str) {
        if self.quiet || !self.terminal {
            return;
        }
        let mut stack = self.stack();
        let Some(s) = stack.last_mut() else { return };
        s.done += n;
        let elapsed = s.started.elapsed();
        let left = time_left(elapsed, s.done, s.total)
            .map_or(String::new(), |l| format!(", about {} left", clock(l)));
        let sep = if note.is_empty() { "" } else { " " };
        s.bar.set_message(format!("{note}{sep}({}{left})", clock(elapsed)));
        s.bar.inc(n);
    }

    fn end(&self, summary: &str) {
        if self.quiet {
            return;
        }
        self.pop();
        self.lines.line(summary);
    }

    fn line(&self, text: &str) {
        if self.quiet {
            return;
        }
        match self.stack().last() {
            Some(s) if self.terminal => s.bar.suspend(|| self.lines.line(text)),
            _ => self.lines.line(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_left_follows_the_mean_rate_and_waits_for_data() {
        let s = Duration::from_secs;
        assert_eq!(time_left(s(10), 0, 100), None);
        assert_eq!(time_left(Duration::from_millis(500), 5, 100), None);
        assert_eq!(time_left(s(10), 100, 100), None);
        assert_eq!(time_left(s(10), 25, 100), Some(s(30)));
        assert_eq!(clock(s(75)), "1:15");
        assert_eq!(clock(s(3725)), "1:02:05");
    }
}
