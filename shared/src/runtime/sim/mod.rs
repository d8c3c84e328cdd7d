//! A deterministic simulator of the distributed runtime, in the manner of FoundationDB's and
//! TigerBeetle's: one thread runs the coordinator's core and the workers' cores, with their
//! real data code on a small index ([`tiny`]), over a simulated network, clock and disks. A
//! seed draws the job, the cluster and its faults: messages delayed, reordered, duplicated,
//! dropped and damaged; workers stalled, killed and restarted with or without their disk,
//! workers joining late; the coordinator killed and restarted from its journal. Every run
//! either ends with exactly the embedded search's counts (and, when owners send levels up,
//! its bytes), or is a failure to fix, printed with its seed; so is a run that does not end
//! within its simulated time.
//!
//! `rows` simulates row searches; `leases` independent leased tasks.

mod faults;
mod leases;
mod rows;
pub mod tiny;

pub use faults::Faults;
pub use leases::run_leases;
pub use rows::run_rows;

/// What a simulated run measured.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Simulated milliseconds until the job ended.
    pub millis: u64,
    /// Events processed.
    pub events: u64,
    /// Epochs published (a row search) or tasks handed out again (leases).
    pub changes: u64,
    /// Faults injected.
    pub faults: u64,
}

/// The longest a run may take, in simulated milliseconds, before it counts as a hang.
pub const TIME_LIMIT_MS: u64 = 600_000;

/// Runs `f` on a pool of one thread: the parts' kernels then run inline, as they should on
/// arrays this small (and the run does not depend on other threads).
fn one_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    thread_local! {
        static POOL: rayon::ThreadPool =
            rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("a thread pool");
    }
    POOL.with(|pool| pool.install(f))
}

/// A simulated world that runs to its end.
trait Simulation {
    type Outcome;
    /// Runs the world to its end: its outcome, or what went wrong.
    fn run(&mut self) -> Result<Self::Outcome, String>;
    /// The world's last events, oldest first.
    fn last_events(&self) -> Vec<String>;
}

/// Runs the world made for `seed` on one thread; `Err` holds what went wrong (a panic
/// included) and the run's last events.
fn run_seed<S: Simulation>(seed: u64, make: impl FnOnce(u64) -> S + Send) -> Result<S::Outcome, String>
where
    S::Outcome: Send,
{
    one_thread(|| {
        let mut world = make(seed);
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| world.run()));
        let why = match run {
            Ok(Ok(outcome)) => return Ok(outcome),
            Ok(Err(why)) => why,
            Err(panic) => panic_text(panic),
        };
        Err(format!("seed {seed}: {why}\nlast events:\n  {}", world.last_events().join("\n  ")))
    })
}

/// What a caught panic says.
fn panic_text(panic: Box<dyn std::any::Any + Send>) -> String {
    let text = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    format!("panicked: {text}")
}
