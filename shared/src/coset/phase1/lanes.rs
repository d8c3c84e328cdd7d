//! The deep part of the phase-1 search, as several depth-first searches interleaved in one
//! thread ("lanes"), so that the cache misses of one wait while the others work.
//!
//! A node's children are looked up in three steps: the row of each child's (flip, slice)
//! coordinate, then its entry, then the entry decoded; each step reads what the one before
//! asked for (a prefetch). One search alone spends much of its time waiting for those two
//! misses, since a node's children are known only once its own entry is read. A lane takes
//! one step and hands over to the next lane, so that its memory arrives while the others
//! work and the lanes' misses are in flight together. The search to 15 alone took 6.9 to
//! 7.3 CPU s with 8 lanes, against 10.3 to 12.7 s for one search whose nodes prefetched
//! their children's lookups together.

use super::{moves_in, Leaves, Lookup, Node, Phase1, SLICES, TWISTS};
use crate::coset::pages::Place;
use crate::coset::perm::PermTables;
use crate::coset::prefetch;
use crate::cube::Move;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Searches interleaved in one thread (4, 8 and 16 measured: 8 is fastest here).
const LANES: usize = 8;

/// Nodes with at least this many moves to go have their children looked up (in lanes); below,
/// the entry a node holds says all the rest needs ([`Phase1::finish`]).
pub(super) const LOOKUP_FROM: u32 = 4;

/// A node whose children have been made, and where the lane stands among them.
#[derive(Clone, Copy)]
struct Frame {
    /// The node (its permutation is the children's source).
    node: Node,
    /// Moves to go after the children.
    left: u32,
    n: u8,
    /// The next child to follow.
    next: u8,
    moves: [u8; Move::COUNT],
    children: [Node; Move::COUNT],
    /// Per child: its (flip, slice) place in `row_of`, then its entry's index times 16 plus
    /// its symmetry.
    at: [u32; Move::COUNT],
    looks: [Lookup; Move::COUNT],
}

/// What a lane does at its next step.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Take the next task.
    Idle,
    /// The top frame's rows were asked for: read them, ask for the entries.
    Rows,
    /// The entries were asked for: decode them and go on down.
    Entries,
}

/// A search: its stack of frames (`frames[..depth]`; the rest is space, reused).
struct Lane {
    frames: Vec<Frame>,
    depth: usize,
    stage: Stage,
}

impl Lane {
    fn top(&mut self) -> &mut Frame {
        &mut self.frames[self.depth - 1]
    }
}

impl Phase1 {
    /// Runs every task (a node, its entry and the moves it may go on by, with `left` moves to
    /// go, at least [`LOOKUP_FROM`]) to its leaves, on every thread of the pool, each thread
    /// running [`LANES`] searches interleaved.
    pub(super) fn run_lanes(
        &self,
        perms: &PermTables,
        tasks: &[(Node, Lookup, u32)],
        left: u32,
        found: &(dyn Fn(&[Place]) + Sync),
    ) {
        debug_assert!(left >= LOOKUP_FROM);
        if tasks.is_empty() {
            return;
        }
        let taken = AtomicUsize::new(0);
        rayon::broadcast(|_| {
            let mut leaves = Leaves { places: Vec::with_capacity(super::BATCH), found };
            let blank = Frame {
                node: tasks[0].0,
                left: 0,
                n: 0,
                next: 0,
                moves: [0; Move::COUNT],
                children: [tasks[0].0; Move::COUNT],
                at: [0; Move::COUNT],
                looks: [tasks[0].1; Move::COUNT],
            };
            let mut lanes: Vec<Lane> = (0..LANES)
                .map(|_| Lane { frames: vec![blank; left as usize], depth: 0, stage: Stage::Idle })
                .collect();
            let mut busy = LANES;
            while busy > 0 {
                busy = 0;
                for lane in &mut lanes {
                    busy += self.step_lane(perms, lane, tasks, &taken, left, &mut leaves) as usize;
                }
            }
            leaves.flush();
        });
    }

    /// One step of a lane; false once it is idle and no task is left.
    fn step_lane(
        &self,
        perms: &PermTables,
        lane: &mut Lane,
        tasks: &[(Node, Lookup, u32)],
        taken: &AtomicUsize,
        left: u32,
        leaves: &mut Leaves,
    ) -> bool {
        match lane.stage {
            Stage::Idle => {
                let Some(&(node, look, allowed)) = tasks.get(taken.fetch_add(1, Ordering::Relaxed)) else {
                    return false;
                };
                self.push_frame(perms, lane, &node, &look, allowed, left);
                return true;
            }
            Stage::Rows => {
                let top = lane.top();
                for (child, at) in top.children[..top.n as usize].iter().zip(&mut top.at) {
                    let row = self.row_of[*at as usize];
                    let s = (row & 63) as usize;
                    let column = self.twist_conj[s * TWISTS + child.twist as usize] as usize;
                    let e = (row >> 6) as usize * TWISTS + column;
                    prefetch(&self.entries[e]);
                    *at = (e as u32) << 4 | s as u32;
                }
                lane.stage = Stage::Entries;
                return true;
            }
            Stage::Entries => {
                let top = lane.top();
                for (look, &at) in top.looks[..top.n as usize].iter_mut().zip(&top.at) {
                    *look = self.decode_entry(self.entries[(at >> 4) as usize], (at & 15) as usize);
                }
            }
        }
        // Down the top frame's children, finishing those that need no lookup, until a child
        // whose children must be looked up (a new frame: the lane hands over) or no frame is
        // left.
        while lane.depth > 0 {
            let top = lane.top();
            if top.next == top.n {
                lane.depth -= 1;
                continue;
            }
            let i = top.next as usize;
            top.next += 1;
            let m = Move::from_index(top.moves[i] as usize);
            let (child, look, left) = (top.children[i].follow(perms, &top.node, m), top.looks[i], top.left);
            let allowed = self.after[m.index()];
            if left >= LOOKUP_FROM {
                self.push_frame(perms, lane, &child, &look, allowed, left);
                return true;
            }
            self.finish(perms, &child, &look, allowed, left, leaves);
        }
        lane.stage = Stage::Idle;
        true
    }

    /// Makes the children of `node` (of entry `look`, with `left` moves to go, to go on by
    /// the moves in `allowed`) worth following, asks for their rows, and puts them on the
    /// lane's stack.
    fn push_frame(
        &self,
        perms: &PermTables,
        lane: &mut Lane,
        node: &Node,
        look: &Lookup,
        allowed: u32,
        left: u32,
    ) {
        let frame = &mut lane.frames[lane.depth];
        (frame.node, frame.left, frame.next) = (*node, left - 1, 0);
        let mut n = 0;
        for m in moves_in(self.worth_following(look, allowed, left - 1)) {
            let child = self.step(perms, node, m);
            let i = child.flip as usize * SLICES + child.slice as usize / 24;
            prefetch(&self.row_of[i]);
            (frame.moves[n], frame.children[n], frame.at[n]) = (m.index() as u8, child, i as u32);
            n += 1;
        }
        frame.n = n as u8;
        lane.depth += 1;
        lane.stage = Stage::Rows;
    }
}
