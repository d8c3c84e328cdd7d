//! Progress of a running search on stderr: on a terminal, one line rewritten every second with
//! rows done, rate and ETA for the current depth (and, distributed, tasks done and live
//! workers); otherwise a plain log line every 30 seconds.
//! Per-depth result lines are printed by the caller through [`Reporter::level_done`].

use shared::bfs::{LevelReport, Progress};
use shared::report::thousands;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Shared between the search (which updates [`Progress`]) and the display thread.
pub struct Reporter {
    pub progress: Progress,
    total_rows: u64,
    /// What `total_rows` counts ("rows", or "cosets" for a product enumeration).
    unit: &'static str,
    terminal: bool,
    done: AtomicBool,
    /// Serializes stderr writes and remembers whether a progress line is showing.
    line_showing: Mutex<bool>,
    /// More to show on the progress line (a distributed run's tasks and workers).
    extra: Mutex<Option<Box<dyn Fn() -> String + Send + Sync>>>,
    /// The depth last seen and when it was first seen (the start of its rate).
    depth_seen: Mutex<(u32, Instant)>,
    /// Rows counted as done that this process did not do (read back from a journal): left out
    /// of the rate, so that a resumed job's ETA is not its journal's.
    rows_resumed: AtomicU64,
}

/// Where the running depth stands: what the progress line and the metrics show.
#[derive(Clone, Copy, Debug)]
pub struct Pace {
    pub depth: u32,
    pub rows_done: u64,
    pub total_rows: u64,
    /// Seconds since the depth started.
    pub seconds: f64,
    pub rows_per_second: f64,
    /// Seconds to the end of the depth at this rate (infinite before any row is done).
    pub eta_seconds: f64,
}

impl Reporter {
    pub fn new(total_rows: u64) -> Self {
        Reporter {
            progress: Progress::default(),
            total_rows,
            unit: "rows",
            terminal: std::io::stderr().is_terminal(),
            done: AtomicBool::new(false),
            line_showing: Mutex::new(false),
            extra: Mutex::new(None),
            depth_seen: Mutex::new((u32::MAX, Instant::now())),
            rows_resumed: AtomicU64::new(0),
        }
    }

    /// What the total counts ("rows", or "cosets").
    pub fn unit(&self) -> &'static str {
        self.unit
    }

    /// The running depth's rows done, rate and ETA, measured from when this reporter first saw
    /// the depth.
    pub fn pace(&self) -> Pace {
        let depth = self.progress.depth.load(Ordering::Relaxed);
        let started = {
            let mut seen = self.depth_seen.lock().unwrap_or_else(|e| e.into_inner());
            if seen.0 != depth {
                *seen = (depth, Instant::now());
            }
            seen.1
        };
        let rows_done = self.progress.rows_done.load(Ordering::Relaxed).min(self.total_rows);
        let seconds = started.elapsed().as_secs_f64();
        let rows_run = rows_done.saturating_sub(self.rows_resumed.load(Ordering::Relaxed));
        let rows_per_second = if seconds > 0.0 { rows_run as f64 / seconds } else { 0.0 };
        let eta_seconds = if rows_per_second > 0.0 {
            (self.total_rows - rows_done) as f64 / rows_per_second
        } else {
            f64::INFINITY
        };
        Pace { depth, rows_done, total_rows: self.total_rows, seconds, rows_per_second, eta_seconds }
    }

    /// Counts `rows` read back from a journal: done, but not by this process, so not in the rate.
    pub fn resumed(&self, rows: u64) {
        self.rows_resumed.fetch_add(rows, Ordering::Relaxed);
    }

    /// Names what the total counts, in place of "rows".
    pub fn with_unit(mut self, unit: &'static str) -> Self {
        self.unit = unit;
        self
    }

    /// Appends `extra()` to every progress line from now on.
    pub fn set_extra(&self, extra: impl Fn() -> String + Send + Sync + 'static) {
        *self.extra.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(extra));
    }

    /// Prints a finished depth.
    pub fn level_done(&self, level: &LevelReport) {
        let c = &level.counts;
        let mut showing = self.line_showing.lock().unwrap_or_else(|e| e.into_inner());
        let clear = if *showing { "\r\x1b[K" } else { "" };
        // A table build counts entries, not classes (its class column reads 0).
        let (second, label) = if c.classes_sym == 0 && c.positions > 0 {
            (level.entries, "entries")
        } else {
            (c.classes_sym, "classes")
        };
        eprintln!(
            "{clear}depth {:>2}: {:>20} positions {:>16} {label}  ({}, {:.2} s)",
            c.depth,
            thousands(c.positions),
            thousands(second),
            level.direction,
            level.seconds
        );
        *showing = false;
    }

    /// Runs the display loop until [`Self::finish`] is called; meant for a scoped thread.
    pub fn display_loop(&self) {
        let period = if self.terminal { Duration::from_secs(1) } else { Duration::from_secs(30) };
        let mut last_tick = Instant::now();
        while !self.done.load(Ordering::Relaxed) {
            std::thread::park_timeout(Duration::from_millis(100));
            if self.done.load(Ordering::Relaxed) {
                break;
            }
            let pace = self.pace();
            if last_tick.elapsed() < period || pace.seconds < 2.0 {
                continue;
            }
            last_tick = Instant::now();
            let unit = self.unit;
            let eta = pace.eta_seconds;
            let mut text = format!(
                "depth {:>2}: {:5.1}% of {} {unit}, {} {unit}/s, {:.0} s elapsed, ETA {}",
                pace.depth,
                100.0 * pace.rows_done as f64 / self.total_rows.max(1) as f64,
                thousands(self.total_rows),
                thousands(pace.rows_per_second as u64),
                pace.seconds,
                if eta.is_finite() { format!("{eta:.0} s") } else { "unknown".to_string() }
            );
            if let Some(extra) = self.extra.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
                text += &format!(", {}", extra());
            }
            let mut showing = self.line_showing.lock().unwrap_or_else(|e| e.into_inner());
            if self.terminal {
                eprint!("\r\x1b[K{text}");
                let _ = std::io::stderr().flush();
                *showing = true;
            } else {
                tracing::info!("{text}");
            }
        }
    }

    /// Runs `work` on this thread while the display loop shows its progress on another, and
    /// stops the loop when it returns (a job of several phases shows each so).
    pub fn showing<T>(&self, work: impl FnOnce() -> T) -> T {
        std::thread::scope(|scope| {
            self.restart();
            let display = scope.spawn(|| self.display_loop());
            let result = work();
            self.finish();
            // The loop waits at most its tick; woken, it sees `done` at once (a small job's
            // step would otherwise end up to a tick late).
            display.thread().unpark();
            result
        })
    }

    /// Makes the reporter ready for another display loop after [`Self::finish`]. Call it
    /// before spawning the loop.
    pub fn restart(&self) {
        self.done.store(false, Ordering::Relaxed);
    }

    /// Stops the display loop.
    pub fn finish(&self) {
        self.done.store(true, Ordering::Relaxed);
        let mut showing = self.line_showing.lock().unwrap_or_else(|e| e.into_inner());
        if *showing {
            eprint!("\r\x1b[K");
            *showing = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resumed_rows_are_done_but_out_of_the_rate() {
        let reporter = Reporter::new(100);
        reporter.resumed(40);
        reporter.progress.rows_done.store(40, Ordering::Relaxed);
        let pace = reporter.pace();
        assert_eq!(pace.rows_done, 40);
        assert_eq!(pace.rows_per_second, 0.0);
        assert!(pace.eta_seconds.is_infinite());
        std::thread::sleep(Duration::from_millis(20));
        reporter.progress.rows_done.store(50, Ordering::Relaxed);
        let pace = reporter.pace();
        // 10 rows run in `seconds`: the 50 left take five times as long.
        let expected = 10.0 / pace.seconds;
        assert!((pace.rows_per_second - expected).abs() < 1e-9 * expected, "{pace:?}");
        assert!((pace.eta_seconds - 5.0 * pace.seconds).abs() < 1e-6 * pace.seconds, "{pace:?}");
    }
}
