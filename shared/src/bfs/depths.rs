//! Per-entry distances out of a search: one byte per entry of an index, for tables that store
//! distances rather than count them.

use super::{run, BfsError, BfsOptions, LevelReport};
use crate::cube::Move;
use crate::space::{for_each_bit, RowIndex};
use rayon::prelude::*;

/// The value of an entry past the depths computed.
pub const DEEPER: u8 = u8::MAX;

/// Distance of every entry of an index (row-major, `DEEPER` past the depths computed) and the
/// number of entries at each depth.
pub struct Depths {
    pub values: Vec<u8>,
    pub counts: Vec<u64>,
    pub deeper: u64,
}

impl Depths {
    pub fn from_values(values: Vec<u8>) -> Self {
        let max = values.iter().copied().filter(|&d| d != DEEPER).max().unwrap_or(0) as usize;
        let mut counts = vec![0u64; max + 1];
        let mut deeper = 0;
        for &d in &values {
            if d == DEEPER {
                deeper += 1;
            } else {
                counts[d as usize] += 1;
            }
        }
        Depths { values, counts, deeper }
    }
}

/// Collects per-entry depths from the levels a search reports (one byte per entry).
pub struct DepthRecorder {
    values: Vec<u8>,
    columns: usize,
}

impl DepthRecorder {
    /// A recorder of an index of `rows` x `columns`, every entry deeper than any level yet.
    pub fn new(rows: u32, columns: u32) -> Self {
        let columns = columns as usize;
        DepthRecorder { values: vec![DEEPER; rows as usize * columns], columns }
    }

    /// Records a level's entries (rows of whole 64-bit words).
    pub fn record(&mut self, report: &LevelReport, bits: &[u64]) {
        let d = report.counts.depth as u8;
        let words = self.columns.div_ceil(64);
        self.values.par_chunks_mut(self.columns).zip(bits.par_chunks(words)).for_each(|(row, bits)| {
            for_each_bit(bits, |c| row[c as usize] = d);
        });
    }

    pub fn finish(self) -> Depths {
        Depths::from_values(self.values)
    }
}

/// Runs the engine on `space` and records each entry's depth.
pub fn bfs_depths<I: RowIndex>(space: &I, moves: &[Move], options: &BfsOptions) -> Result<Depths, BfsError> {
    let mut recorder = DepthRecorder::new(space.row_count(), space.column_count());
    run(space, moves, options, |report, bits| recorder.record(report, bits))?;
    Ok(recorder.finish())
}
