//! Buffers a worker's parts reuse from level to level: fresh memory costs as much as the work
//! on it (the kernel zeroes it, then faults it in page by page).

use std::sync::{Mutex, MutexGuard};

/// Zeroed buffers of a part's rows (messages being made), and buffers of payloads (kept
/// levels', received messages').
#[derive(Default)]
pub struct Buffers {
    rows: Mutex<Vec<Vec<u64>>>,
    levels: Mutex<Vec<Vec<u64>>>,
}

/// Zeroed row buffers kept at most.
const ROW_BUFFERS: usize = 4;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Buffers {
    /// A zeroed buffer of `len` words: a kept one (given back zeroed) when one has that length.
    pub fn zeroed(&self, len: usize) -> Vec<u64> {
        let mut b = lock(&self.rows).pop().unwrap_or_default();
        if b.len() != len {
            b.clear();
            b.resize(len, 0);
        }
        debug_assert!(b.iter().all(|&w| w == 0), "row buffers are given back zeroed");
        b
    }

    /// Keeps `buffer` (zeroed by the caller) for [`Self::zeroed`].
    pub fn give_back(&self, buffer: Vec<u64>) {
        let mut kept = lock(&self.rows);
        if kept.len() < ROW_BUFFERS {
            kept.push(buffer);
        }
    }

    /// A buffer for a level's or a received message's payload, whatever it holds (the
    /// payload's coder or decoder overwrites it).
    pub fn level(&self) -> Vec<u64> {
        lock(&self.levels).pop().unwrap_or_default()
    }

    /// Keeps a level's payload buffer for [`Self::level`]: one per thread, as many as finish
    /// parts at once (each at most a part's size, which a level's payload takes anyway).
    pub fn give_back_level(&self, buffer: Vec<u64>) {
        let mut kept = lock(&self.levels);
        if kept.len() < rayon::current_num_threads() {
            kept.push(buffer);
        }
    }
}
