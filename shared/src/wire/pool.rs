//! Word buffers handed from row sets no longer needed to the next ones: a worker's, from one
//! level's parts to the next level's.
//!
//! On the virtual machines measured here, memory a process touches for the first time costs a
//! page fault and the kernel's zeroing of every 4 KiB page. A worker that took a fresh buffer
//! for every part it decoded or kept, and freed them all a level later, spent 7 % of its CPU
//! there in an edges search (`docs/distribution.md`). Every part of a job fits in
//! [`SparseRows::max_result_words`] of its rows, so a worker asks for buffers that large (only
//! the words written become resident) and any returned one serves any later part.

use super::{PartedRows, SparseRows};
use std::sync::{Arc, Mutex};

/// A shared stack of returned buffers, at most `kept` of them; clones share it.
#[derive(Clone)]
pub struct WordPool {
    free: Arc<Mutex<Vec<Vec<u64>>>>,
    kept: usize,
}

impl Default for WordPool {
    /// A worker's: it holds about two levels' parts (64 each by default), input and kept results.
    fn default() -> Self {
        WordPool::new(256)
    }
}

impl WordPool {
    pub fn new(kept: usize) -> Self {
        WordPool { free: Arc::default(), kept }
    }

    /// A buffer of at least `capacity` words: a returned one if one is large enough, else a new
    /// one. Its length and words are what its last user left; callers overwrite or clear it.
    pub fn take(&self, capacity: usize) -> Vec<u64> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        match free.iter().position(|b| b.capacity() >= capacity) {
            Some(i) => free.swap_remove(i),
            None => Vec::with_capacity(capacity),
        }
    }

    /// Returns a buffer for a later [`Self::take`].
    pub fn give(&self, buffer: Vec<u64>) {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        if buffer.capacity() > 0 && free.len() < self.kept {
            free.push(buffer);
        }
    }

    /// Returns the payload of `set` if nothing else holds the set.
    pub fn recycle(&self, set: Arc<SparseRows>) {
        if let Ok(set) = Arc::try_unwrap(set) {
            self.give(set.into_payload());
        }
    }

    /// Returns the payloads of the parts of `rows` that nothing else holds.
    pub fn recycle_parts(&self, rows: Arc<PartedRows>) {
        if let Ok(rows) = Arc::try_unwrap(rows) {
            rows.into_parts().into_iter().for_each(|set| self.recycle(set));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(pool: &WordPool) -> usize {
        pool.free.lock().unwrap().len()
    }

    #[test]
    fn a_returned_buffer_is_reused_only_when_large_enough() {
        let pool = WordPool::default();
        let mut a = pool.take(100);
        assert!(a.capacity() >= 100);
        a.extend_from_slice(&[7; 40]);
        let address = a.as_ptr();
        pool.give(a);
        assert_eq!(held(&pool), 1);
        assert!(pool.take(1000).capacity() >= 1000, "too small: a new buffer");
        assert_eq!(held(&pool), 1);
        let b = pool.take(80);
        assert_eq!((b.as_ptr(), b.len()), (address, 40), "the same memory, as left");
        assert_eq!(held(&pool), 0);
    }

    #[test]
    fn only_sets_nothing_else_holds_are_recycled() {
        let pool = WordPool::default();
        let full = [1u64, 0, 0, 0, 5, 6];
        let set = Arc::new(SparseRows::from_rows(&full, 2, pool.take(8)));
        let other = set.clone();
        pool.recycle(set);
        assert_eq!(held(&pool), 0, "still held");
        pool.recycle(other);
        assert_eq!(held(&pool), 1);
        let small = WordPool::new(3);
        for _ in 0..5 {
            small.give(Vec::with_capacity(1));
        }
        assert_eq!(held(&small), 3);
    }
}
