//! Buffers a worker's parts reuse from level to level: fresh memory costs as much as the work
//! on it (the kernel zeroes it, then faults it in page by page).

use std::sync::{Mutex, MutexGuard};

/// Zeroed buffers of a part's rows (messages being made), and buffers of received packed
/// messages' payloads.
#[derive(Default)]
pub struct Buffers {
    rows: Mutex<Vec<Vec<u64>>>,
    payloads: Mutex<Vec<Vec<u64>>>,
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

    /// A buffer for a received packed message's payload, whatever it holds (the decoder
    /// overwrites it; a raw message is read where it arrived and leaves it unused).
    pub fn payload(&self) -> Vec<u64> {
        lock(&self.payloads).pop().unwrap_or_default()
    }

    /// Keeps a payload buffer for [`Self::payload`]: one per thread, as many as merge messages
    /// at once (each at most a part's size, which a message's payload takes anyway).
    pub fn give_back_payload(&self, buffer: Vec<u64>) {
        let mut kept = lock(&self.payloads);
        if kept.len() < rayon::current_num_threads() {
            kept.push(buffer);
        }
    }
}
