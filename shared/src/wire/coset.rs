//! A coset task's result: per coset, its counts to the job's depth, the count beyond it and the
//! milliseconds it took.

use crate::coset::{CosetDistances, CosetSpec};
use crate::wire::Malformed;

/// The words of one coset's result.
pub fn encode(found: &CosetDistances, spec: CosetSpec, millis: u64) -> Vec<u64> {
    let mut words = found.counts.clone();
    words.resize(spec.exact_to as usize + 1, 0);
    words.push(found.beyond);
    words.push(millis);
    words
}

/// The results of `cosets` cosets from `words`, refused unless each has its words and its
/// counts add up to a coset.
pub fn decode(
    words: &[u64],
    spec: CosetSpec,
    cosets: usize,
) -> Result<Vec<(CosetDistances, u64)>, Malformed> {
    let per = spec.words_per_coset();
    if words.len() != per * cosets {
        return Err(malformed!("{} words for {cosets} cosets ({per} each)", words.len()));
    }
    words
        .chunks_exact(per)
        .map(|w| {
            let (counts, rest) = w.split_at(spec.exact_to as usize + 1);
            let total = counts.iter().try_fold(rest[0], |a, &b| a.checked_add(b));
            if total != Some(spec.coset_size()) {
                return Err(malformed!("a coset's counts add up to {total:?}, not {}", spec.coset_size()));
            }
            Ok((CosetDistances { counts: counts.to_vec(), beyond: rest[0] }, rest[1]))
        })
        .collect()
}
