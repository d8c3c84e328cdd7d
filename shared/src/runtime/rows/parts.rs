//! The data a worker holds for a row search and the computations ([`Work`]) the worker's core
//! asks for: its parts' bit arrays, the rows it maps in the level being made, and its store of
//! finished levels. Each part is locked on its own; a computation for a level that is no
//! longer being made in the part (another depth or epoch) changes nothing, so computations may
//! run in any order and at once.

use super::buffers::Buffers;
use super::store::LevelStore;
use super::work::{Done, Work};
use super::{Kind, Note};
use crate::bfs::cut::PartCut;
use crate::bfs::owned::{EveryColumn, OwnedFrontier, OwnedPart, PartFrontier, PartIndex};
use crate::bfs::task::{Counting, FullRows, Sources};
use crate::bfs::Direction;
use crate::cube::Move;
use crate::runtime::{Epoch, WorkerId};
use crate::shard::{Codec, ShardKey};
use crate::space::RowCounts;
use crate::wire::SparseRows;
use bytes::Bytes;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// The number a message's key carries for what it is; a stored (or uploaded) level is `LEVEL`.
fn kind_code(kind: Kind) -> u32 {
    match kind {
        Kind::Images => 0,
        Kind::Open => 1,
        Kind::Hits => 2,
        Kind::Fetch | Kind::Levels => 6,
    }
}

/// The key code of a part's finished level, as kept and as sent to the coordinator. Levels
/// kept by older builds, whose positions rows had no counts by segment, carry 5 and are
/// refused (their parts are made again), never misread.
pub const LEVEL: u32 = 7;

struct Held {
    tag: u64,
    part: OwnedPart,
    /// The level its `next` is being made for.
    making: Option<(u32, Epoch)>,
    /// The level made in `next`, awaiting its commit.
    made: Option<u32>,
    start: RowCounts,
    /// Rows of the level being made whose unvisited entries all lie in `next`, as questions
    /// found them: `next` only grows while a level is made, so a question to the next owner
    /// need not test them again (empty: none found yet).
    closed: Vec<bool>,
}

impl Held {
    /// Whether `next` is known to be zero: no level is made in it or awaits its commit.
    fn clean(&self) -> bool {
        self.making.is_none() && self.made.is_none()
    }
}

type Slot = Arc<Mutex<Held>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The rows this worker maps in one level: level `depth - 1` of every part it owns.
struct View {
    depth: u32,
    epoch: Epoch,
    frontier: OwnedFrontier,
    owner: Vec<WorkerId>,
    sources: Arc<Sources>,
    /// Parts whose `next` arrays hold their level `depth - 1` read from the store, lent to
    /// this view: (part, tag, array).
    loans: Vec<(u32, u64, Arc<PartFrontier>)>,
    /// Every column, when images for other owners' parts are pulled over every column rather
    /// than pushed ([`crate::bfs::owned::pulls_images`]).
    pull_images: Option<EveryColumn>,
}

/// A worker's parts and store, on an index `X`.
pub struct Parts<X> {
    index: Arc<X>,
    job: u64,
    cut: PartCut,
    words: usize,
    moves: Vec<Move>,
    counting: Counting,
    store: Arc<dyn LevelStore>,
    held: Mutex<BTreeMap<u32, Slot>>,
    view: Mutex<Option<Arc<View>>>,
    /// The newest level prepared (epoch, depth): an older preparation that runs late is
    /// ignored.
    prepared: Mutex<Option<(Epoch, u32)>>,
    /// The sources of the rows of the parts listed (rebuilt when they change).
    sources: Mutex<Option<(Vec<u32>, Arc<Sources>)>>,
    buffers: Buffers,
    /// How messages to each worker are packed (its link's speed decides: see [`LinkCodec`]).
    codec: LinkCodec,
}

/// The codec of the messages to a worker, as the process chooses it (a fixed one, or by the
/// link's measured speed).
pub type LinkCodec = Arc<dyn Fn(WorkerId) -> Codec + Send + Sync>;

impl<X: PartIndex> Parts<X> {
    pub fn new(
        index: Arc<X>,
        job: u64,
        cut: PartCut,
        moves: Vec<Move>,
        counting: Counting,
        store: Arc<dyn LevelStore>,
        codec: LinkCodec,
    ) -> Self {
        Parts {
            codec,
            words: index.words_per_row(),
            index,
            job,
            cut,
            moves,
            counting,
            store,
            held: Mutex::new(BTreeMap::new()),
            view: Mutex::new(None),
            prepared: Mutex::new(None),
            sources: Mutex::new(None),
            buffers: Buffers::new(rayon::current_num_threads() + 2),
        }
    }

    /// What `Work::Build` gives once the index is built: `room` bytes for parts, and the levels
    /// the store keeps.
    pub fn built(&self, room: u64) -> Done {
        match self.store.list() {
            Ok(stored) => Done::Built { room, stored },
            Err(e) => Done::Failed { why: format!("cannot read the stored levels: {e}") },
        }
    }

    /// The longest message of the job (a part's rows).
    pub fn max_message_bytes(&self) -> u64 {
        SparseRows::max_message_bytes(self.cut.rows_per_part as usize, self.words)
    }

    pub fn store(&self) -> &Arc<dyn LevelStore> {
        &self.store
    }

    fn key(&self, part: u32, code: u32, depth: u32) -> ShardKey {
        crate::wire::row_message_key(self.job, part, code, depth)
    }

    fn slot(&self, part: u32) -> Option<Slot> {
        lock(&self.held).get(&part).cloned()
    }

    fn current_view(&self, depth: u32, epoch: Epoch) -> Option<Arc<View>> {
        lock(&self.view).clone().filter(|v| (v.depth, v.epoch) == (depth, epoch))
    }

    /// Runs `work`; `None` when it gives nothing back (a part let go).
    pub fn run(&self, work: Work) -> Option<Done> {
        Some(match work {
            Work::Build => unreachable!("the worker's process builds the index"),
            Work::Fresh { part, tag } => {
                self.install(part, tag, self.index.fresh_part(self.cut, part));
                Done::Held { part, tag, depth: 0 }
            }
            Work::Load { part, depth, tag } => match self.restore(part, depth, |d| self.store.get(part, d)) {
                Ok(p) => {
                    self.install(part, tag, p);
                    Done::Held { part, tag, depth }
                }
                Err(why) => Done::Unreadable { part, tag, why },
            },
            Work::Import { part, depth, tag, payload } => match self.import(part, depth, &payload) {
                Ok(p) => {
                    self.install(part, tag, p);
                    Done::Held { part, tag, depth }
                }
                Err(why) => Done::Unreadable { part, tag, why },
            },
            Work::Export { part, depth, to, epoch } => {
                // Each level is checked before it goes: a damaged one is not sent (the part is
                // then made again), a message damaged on the way is asked for again.
                let rows = self.cut.range(part).len();
                let mut payload = Vec::new();
                for d in 0..depth {
                    let read = self.store.get(part, d).ok().filter(|bytes| {
                        SparseRows::decode_rows(bytes, self.key(part, LEVEL, d), rows, self.words).is_ok()
                    });
                    match read {
                        Some(bytes) => {
                            payload.extend((bytes.len() as u64).to_le_bytes());
                            payload.extend(bytes);
                        }
                        None => {
                            payload.clear(); // an empty answer: not kept here
                            break;
                        }
                    }
                }
                Done::Exported { part, depth, to, epoch, payload }
            }
            Work::Release { part, tag } => {
                let mut held = lock(&self.held);
                if held.get(&part).is_some_and(|s| lock(s).tag == tag) {
                    held.remove(&part);
                }
                return None;
            }
            Work::Commit { part, depth } => {
                // Nothing reads the view of a committed level again; letting it go first lets
                // the part make its next level in its old frontier's memory instead of fresh
                // pages (which the kernel zeroes, then faults in one by one). Kept while any
                // part here still makes a level of that depth (of another epoch).
                if !self.any_making(depth) {
                    self.release_view(Some(depth));
                }
                if let Some(slot) = self.slot(part) {
                    let mut h = lock(&slot);
                    if h.made == Some(depth) {
                        h.part.commit();
                        h.made = None;
                        h.making = None;
                    }
                }
                Done::Committed { part, depth }
            }
            Work::Prepare { depth, epoch, targets, others, owner } => {
                self.prepare(depth, epoch, &targets, &others, owner)
            }
            Work::Local { part, depth, epoch, direction } => {
                self.local(part, depth, epoch, direction);
                Done::Local { part, depth, epoch }
            }
            Work::Push { part, depth, epoch, to } => {
                let payload = self.push(part, depth, epoch, to);
                Done::Pushed { part, depth, epoch, to, payload }
            }
            Work::Ask { part, depth, epoch, peer } => {
                let payload = self.ask(part, depth, epoch, peer);
                Done::Asked { part, depth, epoch, peer, payload }
            }
            Work::Answer { note, payload } => match self.answer(note, &payload) {
                Ok(payload) => Done::Answered { note, payload },
                Err(why) => Done::Damaged { note, why },
            },
            Work::Merge { note, payload } => match self.merge(note, &payload) {
                Ok(()) => Done::Merged { note },
                Err(why) => Done::Damaged { note, why },
            },
            Work::Finish { part, depth, epoch, direction, upload } => {
                return self.finish(part, depth, epoch, direction, upload);
            }
        })
    }

    /// Puts `part` in memory unless newer content is there.
    fn install(&self, k: u32, tag: u64, part: OwnedPart) {
        let mut held = lock(&self.held);
        if held.get(&k).is_some_and(|s| lock(s).tag > tag) {
            return;
        }
        let h = Held { tag, part, making: None, made: None, start: RowCounts::default(), closed: Vec::new() };
        held.insert(k, Arc::new(Mutex::new(h)));
    }

    /// Reads a part's level message into `out` (rows of the part, zeroed).
    fn read_level(&self, part: u32, depth: u32, bytes: &[u8], out: &mut [u64]) -> Result<(), String> {
        let rows = self.cut.range(part).len();
        let set = SparseRows::decode_rows(bytes, self.key(part, LEVEL, depth), rows, self.words)
            .map_err(|e| format!("level {depth} of part {part}: {e}"))?;
        set.or_into(out);
        Ok(())
    }

    /// Part `k` after its levels `0 .. depth` as `level` gives them.
    fn restore(
        &self,
        k: u32,
        depth: u32,
        level: impl Fn(u32) -> std::io::Result<Vec<u8>>,
    ) -> Result<OwnedPart, String> {
        let mut part = self.index.fresh_part(self.cut, k);
        for d in 0..depth {
            let bytes = level(d).map_err(|e| format!("level {d} of part {k}: {e}"))?;
            self.read_level(k, d, &bytes, &mut part.next)?;
            part.commit();
        }
        Ok(part)
    }

    /// A part from the levels another worker sent: each kept in the store, then read.
    fn import(&self, k: u32, depth: u32, payload: &[u8]) -> Result<OwnedPart, String> {
        let mut levels = Vec::new();
        let mut rest = payload;
        while rest.len() >= 8 {
            let len = u64::from_le_bytes(rest[..8].try_into().expect("8 bytes")) as usize;
            if len > rest.len() - 8 || len as u64 > self.max_message_bytes() {
                return Err(format!("the levels of part {k} are cut short"));
            }
            levels.push(&rest[8..8 + len]);
            rest = &rest[8 + len..];
        }
        if levels.len() != depth as usize || !rest.is_empty() {
            return Err(format!("{} levels of part {k} sent, {depth} asked", levels.len()));
        }
        let part = self.restore(k, depth, |d| Ok(levels[d as usize].to_vec()))?;
        for (d, bytes) in levels.iter().enumerate() {
            self.store
                .put(k, d as u32, &[bytes])
                .map_err(|e| format!("cannot keep level {d} of part {k}: {e}"))?;
        }
        Ok(part)
    }

    fn prepare(
        &self,
        depth: u32,
        epoch: Epoch,
        targets: &[u32],
        others: &[u32],
        owner: Vec<WorkerId>,
    ) -> Done {
        // Held to the end: preparations run one at a time, the newest last.
        let mut newest = lock(&self.prepared);
        if newest.is_some_and(|n| n >= (epoch, depth)) {
            return Done::Prepared { depth, epoch };
        }
        *newest = Some((epoch, depth));
        self.release_view(None);
        let mut mine: Vec<u32> = targets.iter().chain(others).copied().collect();
        mine.sort_unstable();
        let sources = {
            let mut cached = lock(&self.sources);
            match cached.as_ref().filter(|(parts, _)| *parts == mine) {
                Some((_, s)) => s.clone(),
                None => {
                    let rpp = self.cut.rows_per_part;
                    let s = Arc::new(
                        self.index.sources_from(&self.moves, |r| mine.binary_search(&(r / rpp)).is_ok()),
                    );
                    *cached = Some((mine.clone(), s.clone()));
                    s
                }
            }
        };
        let mut frontiers = Vec::new();
        // This worker's entries and frontier entries, for the direction of its images.
        let (mut entries, mut frontier_entries) = (0u64, 0u64);
        let columns = self.index.column_count() as u64;
        for &k in targets {
            let Some(slot) = self.slot(k) else { continue };
            let mut h = lock(&slot);
            if !h.clean() {
                h.part.discard();
            }
            h.making = Some((depth, epoch));
            h.made = None;
            h.start = RowCounts::default();
            h.closed.clear();
            frontiers.push(h.part.frontier.clone());
            entries += h.part.rows.len() as u64 * columns;
            frontier_entries += h.part.frontier_entries();
        }
        let mut loans = Vec::new();
        if depth > 0 {
            for &k in others {
                let Some(slot) = self.slot(k) else { continue };
                let mut h = lock(&slot);
                let clean = h.clean();
                let mut bits = std::mem::take(&mut h.part.next);
                if !clean {
                    bits.iter_mut().for_each(|w| *w = 0);
                }
                let read = self.store.get(k, depth - 1).map_err(|e| e.to_string());
                if let Err(why) = read.and_then(|bytes| self.read_level(k, depth - 1, &bytes, &mut bits)) {
                    bits.iter_mut().for_each(|w| *w = 0); // left clean, whatever was read
                    h.part.next = bits;
                    return Done::Failed {
                        why: format!("reading a kept level to make level {depth} again: {why}"),
                    };
                }
                let f = Arc::new(PartFrontier::new(k, self.cut.range(k), self.words, bits));
                entries += f.rows.len() as u64 * columns;
                frontier_entries += f.entries();
                frontiers.push(f.clone());
                loans.push((k, h.tag, f));
            }
        }
        let frontier = OwnedFrontier::new(self.cut, frontiers);
        let pull_images =
            crate::bfs::owned::pulls_images(entries, frontier_entries, self.index.pull_weight())
                .then(|| EveryColumn::new(self.index.column_count()));
        *lock(&self.view) =
            Some(Arc::new(View { depth, epoch, frontier, owner, sources, loans, pull_images }));
        Done::Prepared { depth, epoch }
    }

    /// Lets the last view go (only if it makes level `depth`, when given) and gives the arrays
    /// lent to it back to their parts (new zeroed ones where a computation still reads it).
    fn release_view(&self, depth: Option<u32>) {
        let taken = {
            let mut view = lock(&self.view);
            match depth {
                Some(d) if view.as_ref().is_none_or(|v| v.depth != d) => None,
                _ => view.take(),
            }
        };
        let Some(view) = taken else { return };
        let loans: Vec<(u32, u64, Option<Vec<u64>>, usize)> = match Arc::try_unwrap(view) {
            Ok(View { frontier, loans, .. }) => {
                drop(frontier);
                loans
                    .into_iter()
                    .map(|(k, tag, f)| {
                        let len = f.bits.len();
                        (k, tag, Arc::try_unwrap(f).ok().map(PartFrontier::into_cleared), len)
                    })
                    .collect()
            }
            Err(view) => view.loans.iter().map(|(k, tag, f)| (*k, *tag, None, f.bits.len())).collect(),
        };
        for (k, tag, bits, len) in loans {
            let Some(slot) = self.slot(k) else { continue };
            let mut h = lock(&slot);
            if h.tag == tag && h.part.next.is_empty() {
                h.part.next = bits.unwrap_or_else(|| crate::huge::zeroed_words(len));
            }
        }
    }

    /// Whether a part held here is making a level of depth `depth`.
    fn any_making(&self, depth: u32) -> bool {
        let slots: Vec<Slot> = lock(&self.held).values().cloned().collect();
        slots.iter().any(|s| lock(s).making.is_some_and(|(d, _)| d == depth))
    }

    /// Runs `f` on part `k` if its next level is the one of (`depth`, `epoch`).
    fn making<T>(&self, k: u32, depth: u32, epoch: Epoch, f: impl FnOnce(&mut Held) -> T) -> Option<T> {
        let slot = self.slot(k)?;
        let mut h = lock(&slot);
        (h.making == Some((depth, epoch))).then(|| f(&mut h))
    }

    fn local(&self, k: u32, depth: u32, epoch: Epoch, direction: Direction) {
        let view = self.current_view(depth, epoch);
        let (index, moves, counting, words) = (&self.index, &self.moves, self.counting, self.words);
        let rows = self.cut.range(k);
        self.making(k, depth, epoch, |h| match (direction, &view) {
            (Direction::Start, _) => h.start = index.start_part(&mut h.part, counting),
            (Direction::Forward, Some(v)) if h.part.pulls_own_images(index.pull_weight()) => {
                let p = &mut h.part;
                let open = FullRows::at(rows.start, &p.unvisited, words);
                index.pull_hits(moves, rows, &open, &v.frontier, &mut p.next);
            }
            (Direction::Forward, Some(v)) => {
                index.push_images(moves, rows, &v.sources, &v.frontier, &mut h.part.next);
            }
            (Direction::Backward, Some(v)) => {
                let p = &mut h.part;
                let open = FullRows::at(rows.start, &p.unvisited, words);
                index.pull_hits(moves, rows, &open, &v.frontier, &mut p.next);
            }
            _ => {}
        });
    }

    /// This worker's images in part `k` (of another owner), as a message (empty: none).
    fn push(&self, k: u32, depth: u32, epoch: Epoch, to: WorkerId) -> Bytes {
        let Some(v) = self.current_view(depth, epoch) else { return Bytes::new() };
        let rows = self.cut.range(k);
        // Only the rows that images reach are written, read and cleared.
        let reached: Vec<bool> =
            rows.clone().map(|t| crate::bfs::owned::images_reach(t, &v.sources, &v.frontier)).collect();
        if !reached.contains(&true) {
            return Bytes::new();
        }
        let [mut out] = self.buffers.zeroed(rows.len() * self.words);
        let key = self.key(k, kind_code(Kind::Images), depth);
        let wrote = if let Some(every) = &v.pull_images {
            self.index.pull_hits(&self.moves, rows, every, &v.frontier, &mut out);
            true
        } else {
            self.index.push_images(&self.moves, rows, &v.sources, &v.frontier, &mut out)
        };
        // Coding clears the rows it reads; only reached rows were written.
        let bytes = if wrote {
            SparseRows::encode_rows_clearing(key, &mut out, self.words, &|i| reached[i], (self.codec)(to))
        } else {
            Bytes::new()
        };
        self.buffers.give_back(out);
        bytes
    }

    /// The entries of part `k` still unreached in rows with a neighbour row `peer` owns.
    fn ask(&self, k: u32, depth: u32, epoch: Epoch, peer: WorkerId) -> Option<Bytes> {
        let v = self.current_view(depth, epoch)?;
        let rows = self.cut.range(k);
        let (words, rpp) = (self.words.max(1), self.cut.rows_per_part);
        // Only the rows that hold unreached entries and lie next to the peer's rows are
        // written, encoded and cleared: a part is asked of every other owner in turn.
        let next_to_peer =
            |r: u32| self.index.open_rows_for(&self.moves, r, |s| v.owner[(s / rpp) as usize] == peer);
        let [mut misses] = self.buffers.zeroed(rows.len() * self.words);
        let made = self.making(k, depth, epoch, |h| h.part.misses(&mut h.closed, next_to_peer, &mut misses));
        let Some(keep) = made else {
            self.buffers.give_back(misses); // untouched: the part makes another level
            return None;
        };
        let any = keep.contains(&true);
        let key = self.key(k, kind_code(Kind::Open), depth);
        // Coding clears the rows it reads; only those were written.
        let bytes = any.then(|| {
            SparseRows::encode_rows_clearing(key, &mut misses, words, &|i| keep[i], (self.codec)(peer))
        });
        self.buffers.give_back(misses);
        bytes
    }

    /// The hits of this worker's rows among the entries of an `Open` message.
    fn answer(&self, note: Note, payload: &[u8]) -> Result<Bytes, String> {
        let Some(v) = self.current_view(note.depth, note.epoch) else { return Ok(Bytes::new()) };
        let rows = self.cut.range(note.part);
        let key = self.key(note.part, kind_code(Kind::Open), note.depth);
        let open =
            SparseRows::decode_rows(payload, key, rows.len(), self.words).map_err(|e| e.to_string())?;
        // Hits lie among the entries asked: only the rows the question holds are encoded and
        // cleared.
        let present = open.present();
        let [mut asked, mut out] = self.buffers.zeroed(rows.len() * self.words);
        open.or_into(&mut asked);
        let open = FullRows::at(rows.start, &asked, self.words);
        self.index.pull_hits(&self.moves, rows.clone(), &open, &v.frontier, &mut out);
        let key = self.key(note.part, kind_code(Kind::Hits), note.depth);
        // Coding clears the hits' rows it reads (hits lie in the rows asked).
        let hits = SparseRows::encode_rows_clearing(
            key,
            &mut out,
            self.words,
            &|i| present[i],
            (self.codec)(note.from),
        );
        let asked_rows = asked.chunks_mut(self.words.max(1)).zip(&present);
        asked_rows.filter(|(_, &p)| p).for_each(|(row, _)| row.fill(0));
        self.buffers.give_back(out);
        self.buffers.give_back(asked);
        Ok(hits)
    }

    /// An `Images` or `Hits` message into its part's level (an empty one holds nothing).
    fn merge(&self, note: Note, payload: &[u8]) -> Result<(), String> {
        if payload.is_empty() {
            return Ok(());
        }
        let rows = self.cut.range(note.part);
        let key = self.key(note.part, kind_code(note.kind), note.depth);
        let set = SparseRows::decode_rows_into(payload, key, rows.len(), self.words, self.buffers.payload())
            .map_err(|e| e.to_string())?;
        self.making(note.part, note.depth, note.epoch, |h| set.or_into(&mut h.part.next));
        self.buffers.give_back_payload(set.into_words());
        Ok(())
    }

    fn finish(&self, k: u32, depth: u32, epoch: Epoch, direction: Direction, upload: bool) -> Option<Done> {
        let (index, counting, words) = (&self.index, self.counting, self.words);
        let key = self.key(k, LEVEL, depth);
        let made = self.making(k, depth, epoch, |h| {
            let counts = match direction {
                Direction::Start => h.start,
                _ => index.finish_part(&mut h.part, direction, counting),
            };
            h.making = None;
            h.made = Some(depth);
            // Kept raw (LZ4 cost 6 % of a worker's CPU), coded into the store's own buffer under
            // the part's lock: a part has no work left between its finish and its commit.
            let mut level = SparseRows::kept_level(key, &h.part.next, words, h.part.level_ones());
            let mut sent = None;
            let kept = self.store.put_with(k, depth, level.len(), &mut |out| {
                level.write(out);
                sent = upload.then(|| out.to_vec());
            });
            (counts, kept, sent)
        })?;
        let (counts, kept, upload) = made;
        if let Err(e) = kept {
            return Some(Done::Failed { why: format!("cannot keep level {depth} of part {k}: {e}") });
        }
        Some(Done::Finished { part: k, depth, epoch, counts, upload })
    }
}
