//! What a product task returns: for each task (a part of a coset) of its range, for each depth,
//! the positions, classes, self-inverse classes and products formed.

use crate::product::{CosetDepth, ProductJob};
use crate::wire::Malformed;
use std::ops::Range;

/// Words a coset's counts take: four per depth.
const WORDS_PER_DEPTH: usize = 4;

/// Words per task of `job`.
pub fn words_per_task(job: &ProductJob) -> usize {
    (job.spec.max_depth as usize + 1) * WORDS_PER_DEPTH
}

/// The counts of consecutive tasks as words.
pub fn encode_counts(results: &[(u32, Vec<CosetDepth>)]) -> Vec<u64> {
    results
        .iter()
        .flat_map(|(_, depths)| {
            depths.iter().flat_map(|d| [d.positions, d.classes, d.self_inverse, d.products])
        })
        .collect()
}

/// Inverse of [`encode_counts`] for tasks `range` of `job`; refuses words of the wrong length.
pub fn decode_counts(
    job: &ProductJob,
    range: Range<u32>,
    words: &[u64],
) -> Result<Vec<(u32, Vec<CosetDepth>)>, Malformed> {
    let per_task = words_per_task(job);
    if range.end > job.task_count() || words.len() != range.len() * per_task {
        return Err(malformed!(
            "counts of {} words for tasks {range:?} of {} (expected {per_task} per task)",
            words.len(),
            job.task_count()
        ));
    }
    Ok(range
        .zip(words.chunks_exact(per_task))
        .map(|(task, w)| {
            let depths = w
                .chunks_exact(WORDS_PER_DEPTH)
                .map(|d| CosetDepth { positions: d[0], classes: d[1], self_inverse: d[2], products: d[3] })
                .collect();
            (job.task(task).0, depths)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::MoveSet;
    use crate::product::ProductSpec;
    use crate::space::Space;

    #[test]
    fn counts_survive_the_wire_and_bad_lengths_are_refused() {
        let job = ProductJob::build(ProductSpec::new(Space::Cube, MoveSet::Htm, 4));
        let results = job.run(3..7, None);
        let words = encode_counts(&results);
        assert_eq!(decode_counts(&job, 3..7, &words), Ok(results));
        assert!(decode_counts(&job, 3..8, &words).is_err());
        assert!(decode_counts(&job, 3..7, &words[1..]).is_err());
        assert!(decode_counts(&job, job.task_count() - 1..job.task_count() + 3, &words).is_err());
    }
}
