//! Buffers a worker's parts reuse from level to level: fresh memory costs as much as the work
//! on it (the kernel zeroes it, then faults it in page by page).

use std::sync::{Condvar, Mutex, MutexGuard};

/// Zeroed buffers of a part's rows (messages being made), at most `limit` of them at once, and
/// buffers of received packed messages' payloads.
///
/// Works run on threads of their own and wait for the search's thread pool, so a worker may
/// start many at once (a push to each owner, each with its window of messages in flight). If
/// each took a buffer of its own, most would be fresh memory, given back to the kernel at the
/// end of the level and faulted in again at the next. So a work waits for one of the `limit`
/// buffers, which are kept from level to level: the memory a worker's room counts for them
/// (`assign::capacity`).
pub struct Buffers {
    rows: Mutex<Rows>,
    given_back: Condvar,
    limit: usize,
    payloads: Mutex<Vec<Vec<u64>>>,
}

/// The row buffers: those kept (zeroed) and how many are out.
#[derive(Default)]
struct Rows {
    kept: Vec<Vec<u64>>,
    out: usize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Buffers {
    /// At most `limit` row buffers out at once (at least two: an answer takes a pair).
    pub fn new(limit: usize) -> Self {
        Buffers {
            rows: Mutex::default(),
            given_back: Condvar::new(),
            limit: limit.max(2),
            payloads: Mutex::default(),
        }
    }

    /// `N` zeroed buffers of `len` words, taken together (waiting while fewer than `N` of the
    /// limit are free): kept ones where there are, resized (they are zero, so only growth is
    /// written).
    pub fn zeroed<const N: usize>(&self, len: usize) -> [Vec<u64>; N] {
        assert!(N <= self.limit, "more buffers at once than the limit");
        let mut rows = lock(&self.rows);
        while rows.out + N > self.limit {
            rows = self.given_back.wait(rows).unwrap_or_else(|e| e.into_inner());
        }
        rows.out += N;
        std::array::from_fn(|_| match rows.kept.pop() {
            Some(mut b) => {
                b.resize(len, 0);
                debug_assert!(b.iter().all(|&w| w == 0), "row buffers are given back zeroed");
                b
            }
            None => crate::huge::zeroed_words(len),
        })
    }

    /// Gives back `buffer` (zeroed by the caller), kept for [`Self::zeroed`].
    pub fn give_back(&self, buffer: Vec<u64>) {
        let mut rows = lock(&self.rows);
        rows.out -= 1;
        rows.kept.push(buffer);
        self.given_back.notify_all();
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn buffers_are_kept_and_come_back_zeroed_at_any_length() {
        let b = Buffers::new(2);
        let [x] = b.zeroed(10);
        let ptr = x.as_ptr();
        b.give_back(x);
        let [y] = b.zeroed(6);
        assert_eq!(y.as_ptr(), ptr, "the buffer given back is the one taken");
        assert_eq!(y.len(), 6);
        b.give_back(y);
        let [y, z] = b.zeroed(40);
        assert_eq!((y.len(), z.len()), (40, 40));
        assert!(y.iter().chain(&z).all(|&w| w == 0));
    }

    #[test]
    fn a_work_waits_for_a_buffer_beyond_the_limit() {
        let b = Arc::new(Buffers::new(2));
        let [x, y] = b.zeroed(8);
        let waiting = {
            let b = b.clone();
            std::thread::spawn(move || {
                let [z] = b.zeroed(8);
                b.give_back(z);
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiting.is_finished(), "a third buffer is not given while two are out");
        b.give_back(x);
        waiting.join().expect("the waiting work gets the buffer given back");
        b.give_back(y);
        assert_eq!(lock(&b.rows).out, 0);
        assert_eq!(lock(&b.rows).kept.len(), 2, "no buffer beyond the two made");
    }
}
