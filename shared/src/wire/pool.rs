//! Word buffers that a worker hands from one level's row sets to the next level's.
//!
//! On the virtual machines measured here, memory a process touches for the first time costs a
//! page fault and the kernel's zeroing of every 4 KiB page. A worker that took a fresh buffer
//! for every part it decoded or kept, and freed them all a level later, spent 7 % of its CPU
//! there in an edges search (`docs/distribution.md`). Every part of a job fits in
//! [`SparseRows::max_result_words`] of its rows, so buffers are made that large (only the
//! words written become resident) and any returned one serves any later part.

use super::{PartedRows, SparseRows};
use std::sync::{Arc, Mutex};

/// A shared stack of returned buffers (at most [`WordPool::KEPT`]); clones share it.
#[derive(Clone, Default)]
pub struct WordPool(Arc<Mutex<Vec<Vec<u64>>>>);

impl WordPool {
    /// Buffers kept at most: a worker holds about two levels' parts (64 each by default).
    pub const KEPT: usize = 256;

    /// A buffer of at least `capacity` words: a returned one if one is large enough, else a new
    /// one. Its length and words are what its last user left; callers overwrite or clear it.
    pub fn take(&self, capacity: usize) -> Vec<u64> {
        let mut free = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match free.iter().position(|b| b.capacity() >= capacity) {
            Some(i) => free.swap_remove(i),
            None => Vec::with_capacity(capacity),
        }
    }

    /// Returns a buffer for a later [`Self::take`].
    pub fn give(&self, buffer: Vec<u64>) {
        let mut free = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if buffer.capacity() > 0 && free.len() < Self::KEPT {
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

    /// Buffers held now.
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_returned_buffer_is_reused_only_when_large_enough() {
        let pool = WordPool::default();
        let mut a = pool.take(100);
        assert!(a.capacity() >= 100);
        a.extend_from_slice(&[7; 40]);
        let address = a.as_ptr();
        pool.give(a);
        assert_eq!(pool.len(), 1);
        assert!(pool.take(1000).capacity() >= 1000, "too small: a new buffer");
        assert_eq!(pool.len(), 1);
        let b = pool.take(80);
        assert_eq!((b.as_ptr(), b.len()), (address, 40), "the same memory, as left");
        assert!(pool.is_empty());
    }

    #[test]
    fn only_sets_nothing_else_holds_are_recycled() {
        let pool = WordPool::default();
        let full = [1u64, 0, 0, 0, 5, 6];
        let set = Arc::new(SparseRows::from_rows(&full, 2, pool.take(8)));
        let other = set.clone();
        pool.recycle(set);
        assert!(pool.is_empty(), "still held");
        pool.recycle(other);
        assert_eq!(pool.len(), 1);
        for _ in 0..WordPool::KEPT + 5 {
            pool.give(Vec::with_capacity(1));
        }
        assert_eq!(pool.len(), WordPool::KEPT);
    }
}
