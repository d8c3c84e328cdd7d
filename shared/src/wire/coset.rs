//! A coset task's result: per coset, its counts to the job's depth, the count beyond it, the
//! milliseconds it took, and (a bound run) the indices of its unreached positions.

use crate::coset::{CosetDistances, CosetSpec, COSET_SIZE, MAX_UNREACHED};
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
pub fn decode(
    words: &[u64],
    spec: CosetSpec,
    cosets: usize,
) -> Result<Vec<(CosetDistances, u64)>, Malformed> {
    let mut rest = words;
    let mut out = Vec::with_capacity(cosets);
    let fixed = spec.depth as usize + 4;
    for k in 0..cosets {
        if rest.len() < fixed {
            return Err(malformed!(
                "coset {k} of {cosets}: {} words left, {fixed} at least needed",
                rest.len()
            ));
        }
        let (counts, tail) = rest.split_at(spec.depth as usize + 1);
        let (beyond, millis, listed) = (tail[0], tail[1], tail[2]);
        let total = counts.iter().try_fold(beyond, |a, &b| a.checked_add(b));
        if total != Some(COSET_SIZE) {
            return Err(malformed!("a coset's counts add up to {total:?}, not {}", COSET_SIZE));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_with_unreached_positions_round_trip_and_bad_ones_are_refused() {
        let spec = CosetSpec::bound(2, 2);
        let size = COSET_SIZE;
        let a = CosetDistances { counts: vec![0, 2, 10], beyond: size - 12, unreached: vec![] };
        let b = CosetDistances { counts: vec![1, 10, size - 13], beyond: 2, unreached: vec![5, 99] };
        let mut words = encode(&a, spec, 7);
        words.extend(encode(&b, spec, 8));
        // The first lists none of its many unreached positions: refused.
        assert!(decode(&words, spec, 2).is_err());
        let mut words = encode(&b, spec, 7);
        words.extend(encode(&b, spec, 8));
        assert_eq!(decode(&words, spec, 2).unwrap(), vec![(b.clone(), 7), (b.clone(), 8)]);
        assert!(decode(&words[..words.len() - 1], spec, 2).is_err(), "a word short");
        assert!(decode(&words, spec, 1).is_err(), "words left over");
        let exact = CosetSpec::exact(2);
        let c = CosetDistances { counts: vec![0, 2, 10], beyond: size - 12, unreached: vec![] };
        assert_eq!(decode(&encode(&c, exact, 3), exact, 1).unwrap(), vec![(c, 3)]);
    }
}
