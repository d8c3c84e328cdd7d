//! What a seed draws for a simulated run's network and processes, and the queue of events in
//! simulated time.

use crate::cube::SplitMix64;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The network's and processes' misbehaviour in one run.
#[derive(Clone, Debug)]
pub struct Faults {
    /// A message takes 0 ..= `delay_ms` (so messages overtake each other).
    pub delay_ms: u64,
    /// Per message, in thousandths: dropped (its sender hears of the failed link), delivered
    /// twice, damaged (a byte flipped).
    pub drop: u64,
    pub duplicate: u64,
    pub damage: u64,
    /// A computation takes 0 ..= `work_ms`.
    pub work_ms: u64,
    /// Process faults (kills, stalls, restarts) happen before this time, and none after, so
    /// that every run can end.
    pub until_ms: u64,
    /// Process faults to inject.
    pub count: u32,
}

impl Faults {
    /// A draw from `rng`: about one run in eight is calm.
    pub fn draw(rng: &mut SplitMix64) -> Self {
        let calm = rng.below(8) == 0;
        let p = |rng: &mut SplitMix64, max: u64| if calm { 0 } else { rng.below(max + 1) };
        Faults {
            delay_ms: 1 + rng.below(30),
            drop: p(rng, 60),
            duplicate: p(rng, 60),
            damage: p(rng, 20),
            work_ms: rng.below(25),
            until_ms: 500 + rng.below(6000),
            count: if calm { 0 } else { rng.below(6) as u32 },
        }
    }

    pub fn delay(&self, rng: &mut SplitMix64) -> u64 {
        rng.below(self.delay_ms + 1)
    }

    pub fn work_time(&self, rng: &mut SplitMix64) -> u64 {
        rng.below(self.work_ms + 1)
    }

    /// Whether an event of `per_mille` thousandths happens now.
    pub fn chance(rng: &mut SplitMix64, per_mille: u64) -> bool {
        per_mille > 0 && rng.below(1000) < per_mille
    }
}

/// Events by simulated time, ties in the order they were queued.
pub struct Queue<E> {
    heap: BinaryHeap<Reverse<(u64, u64)>>,
    events: std::collections::HashMap<u64, E>,
    seq: u64,
    pub now: u64,
}

impl<E> Default for Queue<E> {
    fn default() -> Self {
        Queue { heap: BinaryHeap::new(), events: Default::default(), seq: 0, now: 0 }
    }
}

impl<E> Queue<E> {
    /// Queues `event` `after` milliseconds from now.
    pub fn at(&mut self, after: u64, event: E) {
        self.seq += 1;
        self.heap.push(Reverse((self.now + after, self.seq)));
        self.events.insert(self.seq, event);
    }

    /// The next event, with the clock moved to its time.
    pub fn pop(&mut self) -> Option<E> {
        let Reverse((time, seq)) = self.heap.pop()?;
        self.now = time;
        self.events.remove(&seq)
    }
}
