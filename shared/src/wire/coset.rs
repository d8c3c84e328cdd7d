//! A coset task's result: per coset, its counts to the job's depth, the count beyond it, the
//! milliseconds it took, and (a bound run) the indices of its unreached positions.

use crate::coset::{CosetDistances, CosetSpec, MAX_UNREACHED};
use crate::wire::Malformed;

/// The words of one coset's result.
pub fn encode(found: &CosetDistances, spec: CosetSpec, millis: u64) -> Vec<u64> {
    let mut words = found.counts.clone();
    words.resize(spec.depth as usize + 1, 0);
    words.push(found.beyond);
    words.push(millis);
    words.push(found.unreached.len() as u64);
    words.extend(&found.unreached);
    words
}

/// The results of `cosets` cosets from `words`, refused unless each has its words, its counts
/// add up to a coset and its unreached positions are as many as its count beyond the depth.
pub fn decode(words: &[u64], spec: CosetSpec, cosets: usize) -> Result<Vec<(CosetDistances, u64)>, Malformed> {
    let mut rest = words;
    let mut out = Vec::with_capacity(cosets);
    let fixed = spec.depth as usize + 4;
    for k in 0..cosets {
        if rest.len() < fixed {
            return Err(malformed!("coset {k} of {cosets}: {} words left, {fixed} at least needed", rest.len()));
        }
        let (counts, tail) = rest.split_at(spec.depth as usize + 1);
        let (beyond, millis, listed) = (tail[0], tail[1], tail[2]);
        let total = counts.iter().try_fold(beyond, |a, &b| a.checked_add(b));
        if total != Some(spec.coset_size()) {
            return Err(malformed!("a coset's counts add up to {total:?}, not {}", spec.coset_size()));
        }
        let expected = if spec.is_bound() { beyond } else { 0 };
        if listed != expected || listed > MAX_UNREACHED || tail.len() < 3 + listed as usize {
            return Err(malformed!("a coset lists {listed} unreached positions, not {expected}"));
        }
        let unreached = tail[3..3 + listed as usize].to_vec();
        rest = &tail[3 + listed as usize..];
        out.push((CosetDistances { counts: counts.to_vec(), beyond, unreached }, millis));
    }
    if !rest.is_empty() {
        return Err(malformed!("{} words after {cosets} cosets", rest.len()));
    }
    Ok(out)
}
