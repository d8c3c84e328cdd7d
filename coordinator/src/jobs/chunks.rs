//! Jobs of independent chunks of tasks (a product job's cosets, a coset job's cosets): every
//! finished chunk's words are journaled with `--state-dir`, so that the same command run again
//! computes only the chunks the journal does not hold.

use crate::journal::RedbJournal;
use crate::progress::Reporter;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::Ordering;

/// A job's chunks, in order, and the words of those finished so far.
pub(super) struct Chunks {
    ranges: Vec<Range<u32>>,
    journal: Option<RedbJournal>,
    finished: BTreeMap<u32, Vec<u64>>,
    /// What a chunk's tasks are ("tasks", "cosets"), for the log.
    unit: &'static str,
}

impl Chunks {
    /// The chunks `ranges` of the job named `identity`, with the finished ones an earlier run
    /// journaled in `state_dir` (a directory holding another job's journal is refused).
    pub fn open(
        ranges: Vec<Range<u32>>,
        state_dir: Option<&Path>,
        identity: &str,
        unit: &'static str,
    ) -> Result<Self> {
        let journal = match state_dir {
            Some(dir) => {
                std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
                Some(RedbJournal::open(dir, identity)?.0)
            }
            None => None,
        };
        let finished = journal.as_ref().map(RedbJournal::chunks).transpose()?.unwrap_or_default();
        if !finished.is_empty() {
            tracing::info!(
                "resuming: {} of {} chunks of {unit} are in the journal",
                finished.len(),
                ranges.len()
            );
        }
        Ok(Chunks { ranges, journal, finished, unit })
    }

    /// Runs the chunks not finished yet, in order, journaling each: `run` computes one chunk's
    /// words, given the chunk's index and its tasks. `reporter` counts the tasks done, those of
    /// journaled chunks as resumed (out of its rate).
    pub fn run(
        &mut self,
        reporter: &Reporter,
        run: &mut dyn FnMut(u32, Range<u32>) -> Result<Vec<u64>>,
    ) -> Result<()> {
        for (i, range) in self.ranges.iter().enumerate() {
            let chunk = i as u32;
            reporter.progress.rows_done.store(range.start as u64, Ordering::Relaxed);
            if self.finished.contains_key(&chunk) {
                reporter.resumed(range.len() as u64);
                continue;
            }
            let words = run(chunk, range.clone())?;
            if let Some(journal) = &self.journal {
                journal.chunk_done(chunk, &words)?;
                tracing::info!(
                    "chunk {} of {} ({} {range:?}) done and journaled",
                    i + 1,
                    self.ranges.len(),
                    self.unit
                );
            }
            self.finished.insert(chunk, words);
        }
        Ok(())
    }

    /// Every chunk's words, in chunk order (all of them once [`Self::run`] has returned).
    pub fn into_words(self) -> Vec<u64> {
        self.finished.into_values().flatten().collect()
    }
}
