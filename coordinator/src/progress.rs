//! Progress of a running search on stderr: on a terminal, one line rewritten every second with
//! rows done, rate and ETA for the current depth (and, distributed, tasks done and live
//! workers); otherwise a plain log line every 30 seconds.
//! Per-depth result lines are printed by the caller through [`Reporter::level_done`].

use shared::bfs::{LevelReport, Progress};
use shared::report::thousands;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
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
        }
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
        let mut depth = u32::MAX;
        let mut depth_start = Instant::now();
        let mut last_tick = Instant::now();
        while !self.done.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(100));
            let d = self.progress.depth.load(Ordering::Relaxed);
            if d != depth {
                depth = d;
                depth_start = Instant::now();
            }
            if last_tick.elapsed() < period || depth_start.elapsed() < Duration::from_secs(2) {
                continue;
            }
            last_tick = Instant::now();
            let rows = self.progress.rows_done.load(Ordering::Relaxed).min(self.total_rows);
            let secs = depth_start.elapsed().as_secs_f64();
            let unit = self.unit;
            let rate = rows as f64 / secs;
            let eta = if rate > 0.0 { (self.total_rows - rows) as f64 / rate } else { f64::INFINITY };
            let mut text = format!(
                "depth {depth:>2}: {:5.1}% of {} {unit}, {} {unit}/s, {:.0} s elapsed, ETA {}",
                100.0 * rows as f64 / self.total_rows.max(1) as f64,
                thousands(self.total_rows),
                thousands(rate as u64),
                secs,
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

    /// Makes the reporter ready for another display loop after [`Self::finish`] (a job of
    /// several phases shows each with its own loop). Call it before spawning the loop.
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
