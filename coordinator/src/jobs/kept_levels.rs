//! The h11 levels of a distributed H48 build, kept by the workers that made them: the
//! coordinator holds no level row, only where each row is kept and its size (its entries
//! sum to the level's count). A level task reads its rows' sources from their keepers and keeps
//! what it makes; a table task reads every level of its rows the same way. A lost worker's rows
//! are made again, lowest level first, from the rows the others keep (docs/h48-tables.md).

use crate::cluster::{ClusterError, Hub, Refusal};
use crate::journal::RedbJournal;
use crate::progress::Reporter;
use anyhow::Context;
use shared::h48::SharedFile;
use shared::report::thousands;
use shared::units::gib;
use shared::wire::h48::{decode_kept, Homes, KeptRow, KEPT_ROW_WORDS};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Instant;

pub struct KeptLevels<'a> {
    hub: &'a Hub,
    /// The order tasks number the rows in ([`shared::h48::H11Rows::task_order`]), and each
    /// row's place in it.
    order: Vec<u32>,
    place: Vec<u32>,
    /// Per depth (index 0, level 0, is made by every worker and unused) and row: the worker
    /// keeping the row (0: none), and its size once made.
    homes: Vec<Vec<u64>>,
    sizes: Vec<Vec<Option<KeptRow>>>,
    /// Levels whose line has been printed.
    reported: usize,
    /// Version of the last homes input published.
    version: u32,
    /// Where each made level's homes are journaled (`--state-dir`).
    journal: Option<&'a RedbJournal>,
}

impl<'a> KeptLevels<'a> {
    /// The levels journaled by an earlier run in `journal` (their keepers are awaited until
    /// they register again or are declared lost), or none; `max` is the deepest level the
    /// build needs; tasks cut the rows in `order`, each row once.
    pub fn new(
        hub: &'a Hub,
        order: Vec<u32>,
        max: u8,
        journal: Option<&'a RedbJournal>,
    ) -> anyhow::Result<Self> {
        let (n, rows) = (max as usize + 1, order.len());
        let mut place = vec![u32::MAX; order.len()];
        for (i, &r) in order.iter().enumerate() {
            place[r as usize] = i as u32;
        }
        assert!(!place.contains(&u32::MAX), "a task order of the rows holds every row once");
        let mut kept = KeptLevels {
            hub,
            order,
            place,
            homes: vec![vec![0; rows]; n],
            sizes: vec![vec![None; rows]; n],
            reported: 0,
            version: 0,
            journal,
        };
        let Some(j) = journal else { return Ok(kept) };
        for (depth, bytes) in j.kept_levels()? {
            let d = depth as usize;
            if d != kept.reported + 1 || d >= n {
                break;
            }
            kept.decode_level(d, &bytes).context("corrupt journal record of an h11 level")?;
            kept.reported = d;
            eprintln!(
                "depth {d:>2}: {:>15} h11 entries (journaled; kept by the workers)",
                thousands(kept.entries(d))
            );
        }
        let mut ids: Vec<u64> = kept.homes.iter().flatten().copied().filter(|&w| w != 0).collect();
        ids.sort_unstable();
        ids.dedup();
        if !ids.is_empty() {
            hub.expect_workers(&ids);
            tracing::info!(
                "waiting for the {} workers that keep the journaled levels (those silent for the liveness timeout are lost, and their rows made again)",
                ids.len()
            );
            while hub.awaited(&ids) > 0 {
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
        }
        Ok(kept)
    }

    /// Level `d`'s homes and sizes, for the journal: per row its keeper, entries and bytes.
    fn encode_level(&self, d: usize) -> Vec<u8> {
        let mut b = Vec::with_capacity(24 * self.rows() as usize);
        for (home, size) in self.homes[d].iter().zip(&self.sizes[d]) {
            let size = size.unwrap_or(KeptRow { entries: 0, bytes: 0 });
            for w in [*home, size.entries, size.bytes] {
                b.extend(w.to_le_bytes());
            }
        }
        b
    }

    fn decode_level(&mut self, d: usize, bytes: &[u8]) -> anyhow::Result<()> {
        anyhow::ensure!(bytes.len() == 24 * self.rows() as usize, "{} bytes for level {d}", bytes.len());
        for (r, w) in bytes.chunks_exact(24).enumerate() {
            let word = |k: usize| u64::from_le_bytes(w[8 * k..8 * k + 8].try_into().expect("8 bytes"));
            self.homes[d][r] = word(0);
            self.sizes[d][r] = Some(KeptRow { entries: word(1), bytes: word(2) });
        }
        Ok(())
    }

    /// The rows of every level (of the index).
    fn rows(&self) -> u32 {
        self.order.len() as u32
    }

    /// Entries of level `depth` (its rows' sizes, all made).
    pub fn entries(&self, depth: usize) -> u64 {
        self.sizes[depth].iter().map(|s| s.map_or(0, |s| s.entries)).sum()
    }

    /// Publishes where the rows of levels 1 .. `below` are kept, as a new input: its name and
    /// the workers keeping those rows (a level reading them stops if one is lost).
    pub fn publish(&mut self, below: usize, out: Option<SharedFile>) -> (String, Vec<u64>) {
        let homes = Homes {
            levels: self.homes[..below.min(self.homes.len())].to_vec(),
            order: self.order.clone(),
            peers: self.hub.peer_addresses(),
            out,
        };
        self.version += 1;
        let name = format!("h11-homes/{}", self.version);
        self.hub.publish_input(self.hub.job(), &name, &homes.encode());
        let mut readers: Vec<u64> = homes.levels.iter().flatten().copied().filter(|&w| w != 0).collect();
        readers.sort_unstable();
        readers.dedup();
        (name, readers)
    }

    /// Runs the rows `todo` of level `level` as tasks of consecutive rows in the task order
    /// (which is what a task's range numbers), each preferring the worker that keeps most of
    /// its rows in `prefer` (per row); `take` gets each task's rows, ascending, and result.
    #[allow(clippy::too_many_arguments)]
    pub fn run_rows(
        &self,
        level: u32,
        todo: &[u32],
        max_words_per_row: usize,
        (homes, readers): (&str, &[u64]),
        prefer: &[u64],
        done: &std::sync::atomic::AtomicU64,
        mut take: impl FnMut(&[u32], Vec<u64>) -> Result<(), Refusal>,
    ) -> Result<(), ClusterError> {
        let mut places: Vec<u32> = todo.iter().map(|&r| self.place[r as usize]).collect();
        places.sort_unstable();
        let prefer: Vec<u64> = self.order.iter().map(|&r| prefer[r as usize]).collect();
        self.hub.run_h48_rows(
            level,
            &places,
            self.rows(),
            max_words_per_row,
            (homes, readers, &prefer),
            done,
            |range, words| {
                let mut rows = self.order[range.start as usize..range.end as usize].to_vec();
                rows.sort_unstable();
                take(&rows, words)
            },
        )
    }

    /// The worker keeping each row of level `depth` (0: none).
    pub fn homes(&self, depth: usize) -> &[u64] {
        &self.homes[depth]
    }

    /// Forgets the rows kept by workers that are lost.
    fn forget_lost(&mut self) {
        let mut live = std::collections::BTreeMap::new();
        for level in self.homes.iter_mut() {
            for home in level.iter_mut().filter(|h| **h != 0) {
                if !*live.entry(*home).or_insert_with(|| self.hub.is_live(*home)) {
                    *home = 0;
                }
            }
        }
    }

    /// Makes every level 1 ..= `max` whose rows are not all kept by live workers, lowest first
    /// (so a lost worker's rows are made again from the rows the others keep), until all are.
    pub fn ensure(&mut self, max: u8, reporter: &Reporter) -> anyhow::Result<()> {
        loop {
            self.forget_lost();
            let Some(d) = (1..=max as usize).find(|&d| self.homes[d].contains(&0)) else { return Ok(()) };
            let todo: Vec<u32> = (0..self.rows()).filter(|&r| self.homes[d][r as usize] == 0).collect();
            if d <= self.reported {
                tracing::warn!("level {d}: {} rows kept by lost workers are made again", todo.len());
            }
            let t = Instant::now();
            reporter.progress.depth.store(d as u32, Ordering::Relaxed);
            reporter.progress.rows_done.store((self.rows() as usize - todo.len()) as u64, Ordering::Relaxed);
            let result = reporter.showing(|| self.make(d, &todo, reporter));
            if let (Ok(()), Some(j)) = (&result, self.journal) {
                j.kept_level_done(d as u32, &self.encode_level(d))?;
            }
            match result {
                Ok(()) if d > self.reported => {
                    self.reported = d;
                    let bytes: u64 = self.sizes[d].iter().map(|s| s.map_or(0, |s| s.bytes)).sum();
                    let entries = self.entries(d);
                    eprintln!(
                        "depth {d:>2}: {:>15} h11 entries, {} kept by the workers ({:.2} bits each), {:.2} s",
                        thousands(entries),
                        gib(bytes),
                        bytes as f64 * 8.0 / entries.max(1) as f64,
                        t.elapsed().as_secs_f64()
                    );
                    let kept: Vec<String> = self
                        .kept_bytes()
                        .into_iter()
                        .map(|(w, bytes)| format!("worker {w} {}", gib(bytes)))
                        .collect();
                    tracing::info!("rows kept to level {d}: {}", kept.join(", "));
                }
                Ok(()) => {}
                Err(ClusterError::InputsLost(w)) => {
                    tracing::warn!("level {d} stopped: worker {w}, which keeps rows it reads, is lost");
                }
                Err(e) => return Err(anyhow::anyhow!("level {d}: {e}")),
            }
        }
    }

    /// Bytes of the rows each worker keeps.
    fn kept_bytes(&self) -> BTreeMap<u64, u64> {
        let mut kept = BTreeMap::new();
        for (homes, sizes) in self.homes.iter().zip(&self.sizes) {
            for (&home, size) in homes.iter().zip(sizes) {
                if let (true, Some(size)) = (home != 0, size) {
                    *kept.entry(home).or_insert(0) += size.bytes;
                }
            }
        }
        kept
    }

    /// The bytes a task of level `d` is expected to keep: the level taken to grow by the
    /// factor the level before grew by (levels 1 and 2 are tiny).
    fn task_estimate(&self, d: usize) -> u64 {
        let bytes = |k: usize| self.sizes[k].iter().map(|s| s.map_or(0, |s| s.bytes)).sum::<u64>();
        let prev = bytes(d - 1);
        let level = match d {
            3.. if bytes(d - 2) > 0 => prev as f64 * prev as f64 / bytes(d - 2) as f64,
            _ => prev as f64,
        };
        let rows_per_task = (self.rows() as usize).div_ceil(self.hub.tasks_per_level) as f64;
        (level / self.rows() as f64 * rows_per_task) as u64
    }

    /// Level `d`'s rows `todo`, made and kept by workers. A worker takes a task only while the
    /// rows it keeps and the task's expected rows fit in half its `--mem-limit` (the other half
    /// is for the rows it fetches and its buffers).
    fn make(&mut self, d: usize, todo: &[u32], reporter: &Reporter) -> Result<(), ClusterError> {
        let (name, readers) = self.publish(d, None);
        let (hub, reserve, limits) = (self.hub, self.task_estimate(d), self.hub.mem_limits());
        let mut kept = self.kept_bytes();
        let room = |kept: &BTreeMap<u64, u64>| {
            let full = limits
                .iter()
                .filter(|&&(w, limit)| limit > 0 && kept.get(&w).copied().unwrap_or(0) + reserve > limit / 2);
            hub.set_full(full.map(|&(w, _)| w).collect());
        };
        room(&kept);
        // A row's task runs best where the row's level before is kept (it reads it and,
        // at the level before that, the row again).
        let prefer = self.homes[d - 1].clone();
        let mut homes = std::mem::take(&mut self.homes[d]);
        let mut sizes = std::mem::take(&mut self.sizes[d]);
        let result = self.run_rows(
            d as u32,
            todo,
            KEPT_ROW_WORDS,
            (&name, &readers),
            &prefer,
            &reporter.progress.rows_done,
            |rows, words| {
                let made = decode_kept(&words, rows.len()).map_err(Refusal::Bad)?;
                for (&r, size) in rows.iter().zip(made.rows) {
                    let was = sizes[r as usize].replace(size);
                    if was.is_some_and(|w| w.entries != size.entries) {
                        return Err(Refusal::Fatal(anyhow::anyhow!(
                            "internal check failed: row {r} of level {d} made again with {} entries, first with {}",
                            size.entries,
                            was.map_or(0, |w| w.entries)
                        )));
                    }
                    homes[r as usize] = made.worker;
                    *kept.entry(made.worker).or_insert(0) += size.bytes;
                }
                room(&kept);
                Ok(())
            },
        );
        hub.set_full(Default::default());
        (self.homes[d], self.sizes[d]) = (homes, sizes);
        result
    }
}
