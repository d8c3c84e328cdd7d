//! Cosets of Kociemba's H = <U, D, R2, L2, F2, B2> solved whole, the method of the proof that
//! every position is within 20 face turns (Rokicki, Kociemba, Davidson and Dethridge; see
//! docs/coset.md): one bit per position of the coset, filled depth by depth from the phase-1
//! solutions and from H's own moves.
//!
//! The coset of a representative `r` is `H r`: the positions `g = h r` (h in H, then r). A
//! sequence `u` of face turns that makes `g` gives `y = r u^-1 = r g^-1`, an element of H, and
//! `g = y^-1 r`; so the coset's positions are held as the elements `y = r v` of H (`v = u^-1`),
//! one bit each ([`pages`]). `T_d`, the elements for the positions within `d` moves, grows as
//!
//! `T_d = T_{d-1}  U  T_{d-1} . M_H  U  { r v : |v| = d, r v in H, v's last move not in M_H }`
//!
//! (a sequence whose last move is a move `m` of H reaches `(r v') m` with `r v'` in H already),
//! so each depth is one pass of H's ten moves over the pages (element by element while the set
//! is small) plus the phase-1 solutions of that length ([`phase1`]). The positions new at depth
//! `d` are exactly those at distance `d`. A bound run searches phase 1 only to a smaller length
//! and lets the passes carry on to the bound, as the proof of 20 did: what it reaches is within
//! the bound, and what it lists as unreached may be too.

pub mod classes;
pub mod pages;
pub mod perm;
pub mod phase1;
pub mod phase1_file;

use crate::bfs::Progress;
use crate::cube::Cube;
use pages::{Layout, Pages, PAGES, PAGE_BITS};
use perm::PermTables;
use phase1::Phase1;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

/// Positions in a coset: |H| = 8!·8!·4!/2.
pub const COSET_SIZE: u64 = PAGES as u64 * PAGE_BITS as u64;

/// Bytes of the bit array a run of one coset holds at most: a bit per element of H, and the
/// pages of the last depth's set that a pass still reads (see [`Pages::extend`]).
pub const STATE_BYTES: u64 = Pages::BYTES;

/// Sets of at most this many elements are extended element by element (0.4 CPU microseconds
/// each, with a scan of the set's pages for them) rather than by a pass over every page (about
/// 2.5 CPU seconds, measured here).
const SPARSE_LIMIT: u64 = 4_000_000;

/// Runs to this depth or deeper write their set over once before they start (see
/// [`Pages::commit`]): their extensions and searches touch all of their memory, which is
/// cheaper mapped in one sweep than a fault at a time, and a page read before it is written
/// maps the shared page of zeros, whose copy at the first write flushes every core's TLB
/// (committed only once a set held 10,000 elements, those copies were a fifth of a single
/// coset's run at bound 20). Shorter runs hold few elements and map only what they touch.
const COMMIT_DEPTH: u32 = 12;

/// Runs that search phase 1 this deep keep their sets in huge pages: the search inserts some
/// 10^9 elements at random, and saves more on TLB misses than the huge pages cost to map (exact
/// to 16 here: 115.8 s wall and 222.8 CPU s in huge pages, 122.1 s and 237.6 CPU s without; a
/// bound run searched to 14 is cheaper without, see [`Pages::new`]).
const HUGE_FROM_SEARCH: u32 = 16;

/// Positions a bound run lists as unreached before it gives up: a bound that leaves more of a
/// coset than this is an exact run's question (`--exact-to`), not a proof's.
pub const MAX_UNREACHED: u64 = 10_000_000;

/// Why a coset's run stopped.
#[derive(Debug, thiserror::Error)]
pub enum CosetError {
    #[error("the coset's bit arrays: {0}")]
    State(#[from] std::io::Error),
    #[error("phase 1's distance table: {0}")]
    Phase1(#[from] crate::bfs::BfsError),
    #[error(
        "{unreached} positions of the coset are not reached within {bound} moves (phase 1 searched to \
         {search_to}): more than the {MAX_UNREACHED} a bound run lists; an exact run (--exact-to) counts them"
    )]
    TooManyUnreached { unreached: u64, bound: u32, search_to: u32 },
}

/// What a coset's run found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CosetDistances {
    /// Positions first reached at depth d, for d = 0 ..= the last depth (or to the depth that
    /// reached every position, when that came sooner). With the phase-1 search run to every
    /// depth these are the positions at distance exactly d.
    pub counts: Vec<u64>,
    /// Positions not reached by the last depth.
    pub beyond: u64,
    /// A bound run's unreached positions, as indices of their elements of H (see
    /// [`unreached_position`]); empty for an exact run.
    pub unreached: Vec<u64>,
}

/// The index of H and the phase-1 tables, built once for any number of cosets.
pub struct CosetSolver {
    layout: Layout,
    phase1: Phase1,
    perms: PermTables,
    /// Bit arrays of finished runs, for the next run: clearing one costs less than mapping it
    /// afresh (see [`Pages::new`]), and is left to the run that reuses it.
    spare: Mutex<Vec<Pages>>,
}

impl CosetSolver {
    /// The layout's tables and phase 1's (its distance table is a row search of a few seconds).
    pub fn new() -> Result<Self, CosetError> {
        Ok(Self::with_phase1(Phase1::new()?))
    }

    /// The layout's tables around phase 1's, made or read elsewhere ([`phase1_file`]).
    pub fn with_phase1(phase1: Phase1) -> Self {
        let layout = Layout::new();
        CosetSolver { perms: PermTables::new(&layout), layout, phase1, spare: Mutex::new(Vec::new()) }
    }

    /// Runs the coset of `rep` as `spec` asks: to `spec.depth`, with phase-1 solutions searched
    /// up to `spec.search_to` moves (every depth for an exact run). `progress` shows the depth
    /// being made.
    pub fn solve(
        &self,
        rep: &Cube,
        spec: CosetSpec,
        progress: &Progress,
    ) -> Result<CosetDistances, CosetError> {
        let huge = spec.search_to >= HUGE_FROM_SEARCH;
        let spare = self.spare.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut set = match spare {
            Some(mut set) => {
                set.clear();
                set
            }
            None => Pages::new(huge)?,
        };
        let result = self.run(rep, spec, progress, &mut set);
        self.spare.lock().unwrap_or_else(|e| e.into_inner()).push(set);
        result
    }

    fn run(
        &self,
        rep: &Cube,
        spec: CosetSpec,
        progress: &Progress,
        set: &mut Pages,
    ) -> Result<CosetDistances, CosetError> {
        let size = COSET_SIZE;
        let (mut counts, mut seen) = (Vec::new(), 0u64);
        if spec.depth >= COMMIT_DEPTH {
            set.commit();
        }
        for depth in 0..=spec.depth {
            progress.depth.store(depth, Ordering::Relaxed);
            if depth > 0 {
                set.extend(&self.layout, SPARSE_LIMIT);
            }
            if depth <= spec.search_to {
                self.add_phase1(rep, depth, set);
            }
            let total = set.count();
            counts.push(total - seen);
            seen = total;
            if seen == size {
                break;
            }
        }
        let mut unreached = Vec::new();
        if spec.is_bound() && seen < size {
            if size - seen > MAX_UNREACHED {
                return Err(CosetError::TooManyUnreached {
                    unreached: size - seen,
                    bound: spec.depth,
                    search_to: spec.search_to,
                });
            }
            set.for_each_missing(|index| unreached.push(index));
        }
        Ok(CosetDistances { counts, beyond: size - seen, unreached })
    }

    /// Adds to `next` the elements `rep . v` of H for the phase-1 sequences `v` of `length`
    /// moves.
    fn add_phase1(&self, rep: &Cube, length: u32, next: &mut Pages) {
        next.fill(|next| self.phase1.solutions(&self.perms, rep, length, &|places| next.insert(places)));
    }
}

/// The position of the coset of `rep` whose element of H has index `index` (as in
/// [`CosetDistances::unreached`]).
pub fn unreached_position(layout: &Layout, rep: &Cube, index: u64) -> Cube {
    let y = layout.element((index / PAGE_BITS as u64) as u16, (index % PAGE_BITS as u64) as u32);
    y.inverse().compose(rep)
}

/// A coset job: cosets of H run to a depth, with phase-1 solutions searched to `search_to`
/// moves. When `search_to` is the depth every count is exact (`--exact-to`); a smaller one is a
/// bound run (`--bound`): depths past it are reached by H's moves only, as in the proof of 20.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CosetSpec {
    pub depth: u32,
    pub search_to: u32,
    /// Whether positions left unreached are listed (a bound run).
    pub list_unreached: bool,
}

/// The deepest depth a coset run takes: God's number.
pub const MAX_DEPTH: u32 = 20;

impl CosetSpec {
    /// Every position within `depth` counted at its exact distance.
    pub fn exact(depth: u32) -> Self {
        CosetSpec { depth, search_to: depth, list_unreached: false }
    }

    /// Every position within `bound` moves found, with phase-1 solutions searched to
    /// `search_to` moves; the rest listed.
    pub fn bound(bound: u32, search_to: u32) -> Self {
        CosetSpec { depth: bound, search_to: search_to.min(bound), list_unreached: true }
    }

    pub fn is_bound(&self) -> bool {
        self.list_unreached
    }
}

impl std::fmt::Display for CosetSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.list_unreached {
            write!(f, "coset/bound/{}/search/{}", self.depth, self.search_to)
        } else {
            write!(f, "coset/exact/{}", self.depth)
        }
    }
}

/// Asks for the cache line holding `r`.
#[inline(always)]
pub(crate) fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it reads nothing and the address is a valid reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((r as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// A job spec that is not a coset job's.
#[derive(Debug, thiserror::Error)]
#[error("not a coset job: {0}")]
pub struct BadCosetSpec(String);

impl std::str::FromStr for CosetSpec {
    type Err = BadCosetSpec;
    fn from_str(s: &str) -> Result<Self, BadCosetSpec> {
        let bad = || BadCosetSpec(s.to_string());
        let depth = |t: &str| t.parse::<u32>().ok().filter(|&d| d <= MAX_DEPTH).ok_or_else(bad);
        let parts: Vec<&str> = s.split('/').collect();
        match parts[..] {
            ["coset", "exact", d] => Ok(CosetSpec::exact(depth(d)?)),
            ["coset", "bound", d, "search", t] => {
                let (d, t) = (depth(d)?, depth(t)?);
                (t <= d).then(|| CosetSpec::bound(d, t)).ok_or_else(bad)
            }
            _ => Err(bad()),
        }
    }
}
