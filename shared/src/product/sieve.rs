//! The keys a coset task has seen, and the sieve that drops a depth's products seen before.
//!
//! A depth's products hold many repeats (about 1.4 products per new position) and keys of
//! nearer depths. Sorting them all and merging with the sorted keys seen costs a comparison
//! sort of 10^8 keys per coset at HTM depth 11. Instead the products are scattered by their key
//! prefix (the cube's corner twists: 2,187 runs of some 40,000 keys at that depth), and each run
//! is sifted through a hash set sized to the cache that first takes the run's keys seen before.
//! The seen keys stay grouped by prefix (in no order inside a group), so each run meets only
//! its own group. Where a prefix's runs would outgrow the cache they are cut finer by the
//! key's next bits. Counts do not depend on the order of keys, so none is sorted.

/// Marks an empty slot of the hash set: no key reaches it (keys stay below 2^63).
const EMPTY: u64 = u64::MAX;

/// The products (as pairs, before cuts) an average run should hold at most, so that its hash
/// set (four slots a key at most, 8 bytes a slot: 384 KiB) stays within a core's second-level
/// cache.
const RUN_KEYS: u64 = 12_000;
/// Runs are cut at most this many bits finer than the prefix.
const MAX_EXTRA_BITS: u32 = 4;

/// Keys grouped by prefix: group `p` is `keys[starts[p]..starts[p + 1]]`.
#[derive(Default)]
struct Groups {
    keys: Vec<u64>,
    starts: Vec<usize>,
}

impl Groups {
    fn group(&self, p: usize) -> &[u64] {
        &self.keys[self.starts[p]..self.starts[p + 1]]
    }
}

/// One coset task's seen keys and the buffers of its sieve, reused from task to task.
#[derive(Default)]
pub struct Sieve {
    /// The keys seen at the depths sifted so far.
    seen: Groups,
    /// The next `seen` while it is built.
    spare: Groups,
    /// The last depth's products scattered by prefix; run `p` starts at `runs[p]` and its fresh
    /// keys are compacted to its front, ending at `fresh_ends[p]`.
    grouped: Vec<u64>,
    runs: Vec<usize>,
    fresh_ends: Vec<usize>,
    table: Vec<u64>,
    values: usize,
    shift: u32,
}

impl Sieve {
    /// Starts a task whose keys have `values` prefixes beginning at bit `shift` and whose
    /// largest depth forms about `products` products: nothing seen. Runs are cut finer than
    /// the prefix, by the key's next bits, until a run's hash set fits in the cache.
    pub fn start(&mut self, (values, shift): (u32, u32), products: u64) {
        let mut extra = 0;
        while extra < shift.min(MAX_EXTRA_BITS) && products >> extra > values as u64 * RUN_KEYS {
            extra += 1;
        }
        self.values = (values as usize) << extra;
        self.shift = shift - extra;
        self.seen.keys.clear();
        self.seen.starts.clear();
        self.seen.starts.resize(self.values + 1, 0);
        self.fresh_ends.clear();
    }

    /// Keys seen so far.
    pub fn seen_len(&self) -> usize {
        self.seen.keys.len()
    }

    /// Sifts one depth's products: their distinct keys not seen before become the fresh keys
    /// ([`Sieve::fresh`]), and with `update` they join the seen keys (not needed after the last
    /// depth). Returns the number of fresh keys. `products` is left empty.
    pub fn sift(&mut self, products: &mut Vec<u64>, update: bool) -> usize {
        self.scatter(products);
        products.clear();
        let mut fresh = 0;
        self.fresh_ends.clear();
        for p in 0..self.values {
            let (begin, end) = (self.runs[p], self.runs[p + 1]);
            let old = self.seen.group(p);
            let kept =
                if begin == end { 0 } else { sift_run(&mut self.grouped[begin..end], old, &mut self.table) };
            self.fresh_ends.push(begin + kept);
            fresh += kept;
        }
        if update {
            self.spare.keys.clear();
            self.spare.keys.reserve_exact(self.seen.keys.len() + fresh);
            self.spare.starts.clear();
            self.spare.starts.push(0);
            for p in 0..self.values {
                self.spare.keys.extend_from_slice(self.seen.group(p));
                self.spare.keys.extend_from_slice(&self.grouped[self.runs[p]..self.fresh_ends[p]]);
                self.spare.starts.push(self.spare.keys.len());
            }
            std::mem::swap(&mut self.seen, &mut self.spare);
        }
        fresh
    }

    /// The fresh keys of the last [`Sieve::sift`], grouped by prefix.
    pub fn fresh(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.fresh_ends.len())
            .flat_map(|p| self.grouped[self.runs[p]..self.fresh_ends[p]].iter().copied())
    }

    /// Bytes of the hash set, whose size the largest run sets.
    pub fn table_bytes(&self) -> u64 {
        8 * self.table.len() as u64
    }

    /// Scatters the keys into `grouped` by prefix: one counting pass, one writing pass.
    fn scatter(&mut self, keys: &[u64]) {
        let (runs, shift) = (&mut self.runs, self.shift);
        runs.clear();
        runs.resize(self.values + 1, 0);
        for &key in keys {
            runs[(key >> shift) as usize + 1] += 1;
        }
        for p in 0..self.values {
            runs[p + 1] += runs[p];
        }
        if self.grouped.len() < keys.len() {
            self.grouped.reserve_exact(keys.len() - self.grouped.len());
            self.grouped.resize(keys.len(), 0);
        }
        // `runs[p]` is the write cursor of prefix `p`; after the scatter it is where run `p`
        // ends, which is where run `p + 1` begins: shifting by one restores the starts.
        for &key in keys {
            let slot = &mut runs[(key >> shift) as usize];
            self.grouped[*slot] = key;
            *slot += 1;
        }
        runs.rotate_right(1);
        runs[0] = 0;
    }
}

/// Keeps at the front of `run` its distinct keys not in `old` (distinct keys of the same
/// prefix) and returns how many: an open-addressing set with linear probing, at most half full,
/// first takes `old`, then each key of the run that it does not hold yet.
fn sift_run(run: &mut [u64], old: &[u64], table: &mut Vec<u64>) -> usize {
    let size = (2 * (run.len() + old.len())).next_power_of_two().max(16);
    if table.len() < size {
        table.resize(size, EMPTY);
    }
    let table = &mut table[..size];
    table.fill(EMPTY);
    let (mask, shift) = (size - 1, 64 - size.trailing_zeros());
    // Fibonacci hashing: the top bits of the product depend on all of the key's bits.
    let slot = |key: u64| (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> shift) as usize;
    for &key in old {
        let mut i = slot(key);
        while table[i] != EMPTY {
            i = (i + 1) & mask;
        }
        table[i] = key;
    }
    let mut kept = 0;
    for j in 0..run.len() {
        let key = run[j];
        debug_assert!(key != EMPTY);
        let mut i = slot(key);
        loop {
            let held = table[i];
            if held == key {
                break;
            }
            if held == EMPTY {
                table[i] = key;
                run[kept] = key;
                kept += 1;
                break;
            }
            i = (i + 1) & mask;
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::Sieve;
    use std::collections::BTreeSet;

    /// Depth after depth of random keys with many repeats, against a plain set.
    #[test]
    fn the_sieve_keeps_exactly_the_keys_not_seen_before() {
        let mut rng = crate::cube::SplitMix64::new(5);
        let mut sieve = Sieve::default();
        // The fourth and last cases' runs are cut by the keys' next bits too; the last two have
        // as many prefixes as the cube's twists and more, so most runs are short.
        let cases = [
            (37u32, 20u32, 1u64 << 9, 0),
            (5, 40, 1 << 12, 0),
            (1, 60, 3, 0),
            (3, 20, 1 << 20, 1 << 30),
            (2_187, 30, 1 << 10, 0),
            (600, 20, 1 << 20, 1 << 40),
        ];
        for (values, shift, span, products) in cases {
            sieve.start((values, shift), products);
            let mut seen = BTreeSet::new();
            for n in [0usize, 1, 300, 5_000, 40_000] {
                let mut products: Vec<u64> = (0..n)
                    .map(|_| ((rng.next_u64() % values as u64) << shift) | (rng.next_u64() % span))
                    .collect();
                let expected: BTreeSet<u64> =
                    products.iter().copied().filter(|k| !seen.contains(k)).collect();
                let fresh = sieve.sift(&mut products, true);
                assert!(products.is_empty());
                let got: Vec<u64> = sieve.fresh().collect();
                assert_eq!(fresh, got.len());
                assert_eq!(got.iter().copied().collect::<BTreeSet<u64>>(), expected);
                assert_eq!(got.len(), expected.len(), "fresh keys are distinct");
                let prefixes: Vec<u64> = got.iter().map(|k| k >> shift).collect();
                assert!(prefixes.is_sorted(), "fresh keys come grouped by prefix");
                seen.extend(expected);
                assert_eq!(sieve.seen_len(), seen.len());
            }
            // Without update the seen keys stay as they were.
            let top = (values as u64 - 1) << shift;
            let unseen =
                (0..1u64 << shift).map(|k| top | k).find(|k| !seen.contains(k)).expect("an unseen key");
            let mut again: Vec<u64> = seen.iter().copied().take(10).chain([unseen]).collect();
            assert_eq!(sieve.sift(&mut again, false), 1);
            assert_eq!(sieve.seen_len(), seen.len());
        }
    }
}
