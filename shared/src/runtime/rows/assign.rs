//! Which worker owns each part: the first assignment, parts placed when their owner is lost,
//! and parts moved to workers that join. Pure functions of the workers' threads and room.

use crate::runtime::WorkerId;
use std::collections::BTreeMap;

/// Parts held at most by a worker with `room` bytes: a part's three arrays, with room left for
/// the buffers of the messages it computes, receives and decodes at once (each a part's rows at
/// most; about `threads` + 2 of them) and 128 MiB besides.
pub fn capacity(room: u64, part_bytes: u64, threads: u32) -> usize {
    let per = part_bytes.max(1);
    ((room.saturating_sub(128 << 20) / per) as usize).saturating_sub(threads as usize + 2)
}

/// A worker that can own parts: its id, threads and the parts it has room for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Candidate {
    pub id: WorkerId,
    pub threads: u32,
    pub capacity: usize,
}

/// Each worker's number of parts: in proportion to threads as far as room allows, what is left
/// going to those with room, in turn. `None` when they cannot hold `parts`.
pub(super) fn shares(workers: &[Candidate], parts: usize) -> Option<Vec<usize>> {
    if workers.is_empty() || workers.iter().map(|w| w.capacity).sum::<usize>() < parts {
        return None;
    }
    let threads: usize = workers.iter().map(|w| w.threads.max(1) as usize).sum();
    let mut target: Vec<usize> =
        workers.iter().map(|w| (parts * w.threads.max(1) as usize / threads).min(w.capacity)).collect();
    let mut i = 0;
    while target.iter().sum::<usize>() < parts {
        if target[i] < workers[i].capacity {
            target[i] += 1;
        }
        i = (i + 1) % workers.len();
    }
    Some(target)
}

/// Each worker's number of parts when they are cut into runs by work: `weights` are the parts'
/// expected work, and each run (workers in the order given) ends at the part boundary nearest
/// to the worker's goal, the share of all the work its threads make up. By [`shares`] (numbers
/// of parts) where a run would not fit its worker's room. `None` when they cannot hold the
/// parts.
pub(super) fn weighted_shares(workers: &[Candidate], weights: &[u64]) -> Option<Vec<usize>> {
    let even = shares(workers, weights.len())?;
    let threads: u128 = workers.iter().map(|w| w.threads.max(1) as u128).sum();
    let total: u128 = weights.iter().map(|&w| w as u128).sum();
    let (mut k, mut done, mut before) = (0, 0u128, 0u128);
    let mut counts = Vec::with_capacity(workers.len());
    for (i, w) in workers.iter().enumerate() {
        before += w.threads.max(1) as u128;
        let goal = total * before / threads;
        let start = k;
        // A part joins the run while its midpoint lies before the goal; the last run takes all.
        while k < weights.len() && (i + 1 == workers.len() || 2 * done + weights[k] as u128 <= 2 * goal) {
            done += weights[k] as u128;
            k += 1;
        }
        counts.push(k - start);
    }
    let fits = counts.iter().zip(workers).all(|(&n, w)| n <= w.capacity);
    Some(if fits { counts } else { even })
}

/// The first assignment: parts by [`weighted_shares`], each worker a run of consecutive parts
/// (in the order the workers are given). Spaces number their rows so that the moves join
/// nearby rows (`space::locality`), so a run keeps most images with their owner
/// (docs/distribution.md, "Rows cut where few moves cross"). Workers that join later take runs
/// too ([`rebalance`] gives each the highest parts of the most loaded).
pub(super) fn first(workers: &[Candidate], weights: &[u64]) -> Option<Vec<WorkerId>> {
    let target = weighted_shares(workers, weights)?;
    Some(workers.iter().zip(target).flat_map(|(w, n)| std::iter::repeat_n(w.id, n)).collect())
}

/// How many of the parts `owner` gives to worker `id`.
fn count(owner: &[WorkerId], id: WorkerId) -> usize {
    owner.iter().filter(|&&w| w == id).count()
}

/// Gives `orphans` (parts whose owner is gone) to the workers with the most free room, one at a
/// time. `false` (and `owner` unchanged) when they do not fit.
pub(super) fn place(owner: &mut [WorkerId], orphans: &[usize], workers: &[Candidate]) -> bool {
    let mut free: BTreeMap<WorkerId, isize> =
        workers.iter().map(|w| (w.id, w.capacity as isize - count(owner, w.id) as isize)).collect();
    let mut placed = owner.to_vec();
    for &k in orphans {
        let pick = free.iter().filter(|(_, &f)| f > 0).max_by_key(|(id, &f)| (f, std::cmp::Reverse(**id)));
        let Some((&id, _)) = pick else { return false };
        *free.get_mut(&id).expect("a candidate") -= 1;
        placed[k] = id;
    }
    owner.copy_from_slice(&placed);
    true
}

/// How a search gives parts to workers that join ([`rebalance`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Join {
    /// Parts move to the newcomers only: each takes the highest parts of the most loaded.
    Fewest,
    /// Every worker gets the run of parts [`first`] would give it had all started together,
    /// in the order that keeps most parts where they are. While the levels are small moving
    /// more parts costs next to nothing, and runs of equal length keep the images home at
    /// every later level (docs/distribution.md, "Rows cut where few moves cross").
    Layout,
}

/// Moves parts to the workers that own none (they joined), as `join` says. `None` when no
/// worker is without parts or none of them has room.
pub(super) fn rebalance(
    owner: &[WorkerId],
    workers: &[Candidate],
    join: Join,
    weights: &[u64],
) -> Option<Vec<WorkerId>> {
    if !workers.iter().any(|w| w.capacity > 0 && count(owner, w.id) == 0) {
        return None;
    }
    // A layout that leaves a worker with room out would move parts again at the next boundary.
    let new = match join {
        Join::Layout => layout(owner, workers, weights)
            .filter(|new| workers.iter().all(|w| w.capacity == 0 || count(new, w.id) > 0)),
        Join::Fewest => None,
    };
    let new = match new {
        Some(new) => new,
        None => to_newcomers(owner, workers)?,
    };
    (new != owner).then_some(new)
}

/// The runs of [`first`] for `workers`, ordered to keep most parts with their owners: the
/// workers that own parts by their lowest part, each newcomer then put where the layout keeps
/// the most parts in place (the first such place).
fn layout(owner: &[WorkerId], workers: &[Candidate], weights: &[u64]) -> Option<Vec<WorkerId>> {
    let kept = |order: &[Candidate]| -> Option<usize> {
        Some(first(order, weights)?.iter().zip(owner).filter(|(a, b)| a == b).count())
    };
    let lowest = |w: &Candidate| owner.iter().position(|&o| o == w.id);
    let (mut order, newcomers): (Vec<Candidate>, Vec<Candidate>) =
        workers.iter().partition(|w| lowest(w).is_some());
    order.sort_by_key(|w| lowest(w));
    for w in newcomers {
        let mut best: Option<(usize, usize)> = None;
        for at in 0..=order.len() {
            let mut trial = order.clone();
            trial.insert(at, w);
            if let Some(k) = kept(&trial) {
                if best.is_none_or(|(_, b)| k > b) {
                    best = Some((at, k));
                }
            }
        }
        order.insert(best.map_or(order.len(), |(at, _)| at), w);
    }
    first(&order, weights)
}

/// [`Join::Fewest`]: each newcomer takes its share, a part at a time from the worker furthest
/// above its own share (that worker's highest part).
fn to_newcomers(owner: &[WorkerId], workers: &[Candidate]) -> Option<Vec<WorkerId>> {
    let target = shares(workers, owner.len())?;
    let mut new = owner.to_vec();
    for (i, w) in workers.iter().enumerate() {
        if count(owner, w.id) > 0 {
            continue;
        }
        for _ in 0..target[i] {
            // The worker furthest above its share gives its highest part.
            let (giver, _) = workers
                .iter()
                .enumerate()
                .map(|(j, g)| (g.id, count(&new, g.id) as isize - target[j] as isize))
                .filter(|&(_, over)| over > 0)
                .max_by_key(|&(id, over)| (over, std::cmp::Reverse(id)))?;
            let k = new.iter().rposition(|&o| o == giver).expect("the giver owns parts");
            new[k] = w.id;
        }
    }
    Some(new)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(id: WorkerId, threads: u32, capacity: usize) -> Candidate {
        Candidate { id, threads, capacity }
    }

    #[test]
    fn parts_follow_threads_within_room_in_runs() {
        let workers = [c(1, 2, 64), c(2, 1, 64), c(3, 1, 10)];
        let owner = first(&workers, &[1; 64]).unwrap();
        let count = |w| owner.iter().filter(|&&o| o == w).count();
        assert_eq!(count(3), 10);
        assert_eq!(count(1) + count(2), 54);
        assert!(count(1) >= 32 && count(2) >= 16);
        assert_eq!(owner.windows(2).filter(|p| p[0] != p[1]).count(), 2, "one run each: {owner:?}");
        assert!(first(&[c(1, 1, 20), c(2, 1, 20)], &[1; 64]).is_none(), "no room for every part");
    }

    #[test]
    fn orphans_go_where_room_is_and_wait_without_it() {
        let mut owner = vec![1, 2, 1, 2, 9, 9];
        // Free room 1 and 2: the first orphan goes to worker 2, the second (a tie) to worker 1.
        assert!(place(&mut owner, &[4, 5], &[c(1, 1, 3), c(2, 1, 4)]));
        assert_eq!(owner, [1, 2, 1, 2, 2, 1]);
        let mut full = vec![1, 2, 9];
        assert!(!place(&mut full, &[2], &[c(1, 1, 1), c(2, 1, 1)]));
        assert_eq!(full, [1, 2, 9], "unchanged when they do not fit");
    }

    #[test]
    fn a_worker_that_joins_takes_its_share_from_the_most_loaded() {
        let owner = first(&[c(1, 1, 64)], &[1; 8]).unwrap();
        assert_eq!(owner, [1; 8]);
        let workers = [c(1, 1, 64), c(2, 1, 64), c(3, 2, 64)];
        let new = rebalance(&owner, &workers, Join::Fewest, &[1; 8]).unwrap();
        let count = |w| new.iter().filter(|&&o| o == w).count();
        assert_eq!((count(1), count(2), count(3)), (2, 2, 4), "{new:?}");
        assert_eq!(
            new.iter().zip(&owner).filter(|(a, b)| a != b).count(),
            6,
            "only the newcomers' parts move"
        );
        assert!(rebalance(&new, &workers, Join::Fewest, &[1; 8]).is_none(), "nobody is without parts");
        // A newcomer without room takes nothing.
        for join in [Join::Fewest, Join::Layout] {
            assert!(rebalance(&owner, &[c(1, 1, 64), c(2, 1, 0)], join, &[1; 8]).is_none());
        }
    }

    /// Runs of consecutive parts: how many times the owner changes along the parts.
    fn boundaries(owner: &[WorkerId]) -> usize {
        owner.windows(2).filter(|p| p[0] != p[1]).count()
    }

    #[test]
    fn workers_that_join_one_by_one_end_with_the_layout_of_workers_started_together() {
        let all: Vec<Candidate> = (1..=8).map(|id| c(id, 1, 64)).collect();
        let together = first(&all, &[1; 63]).unwrap();
        let mut owner = first(&all[..1], &[1; 63]).unwrap();
        let mut fewest = owner.clone();
        for n in 2..=8 {
            let before = owner.clone();
            owner = rebalance(&owner, &all[..n], Join::Layout, &[1; 63]).unwrap();
            fewest = rebalance(&fewest, &all[..n], Join::Fewest, &[1; 63]).unwrap();
            assert_eq!(boundaries(&owner), n - 1, "one run each after {n} joined: {owner:?}");
            let mut runs: Vec<usize> =
                (1..=n as u64).map(|w| owner.iter().filter(|&&o| o == w).count()).collect();
            runs.sort_unstable();
            let mut expected = shares(&all[..n], 63).unwrap();
            expected.sort_unstable();
            assert_eq!(runs, expected, "shares as if started together");
            // At least as many parts stay in place as with the newcomer put last.
            let kept = |o: &[WorkerId]| o.iter().zip(&before).filter(|(a, b)| a == b).count();
            let mut naive: Vec<Candidate> = all[..n - 1].to_vec();
            naive.sort_by_key(|w| before.iter().position(|&o| o == w.id));
            naive.push(all[n - 1]);
            assert!(kept(&owner) >= kept(&first(&naive, &[1; 63]).unwrap()), "{owner:?}");
        }
        assert_eq!(boundaries(&owner), boundaries(&together));
        assert!(boundaries(&fewest) > 7, "taking from the most loaded splits runs: {fewest:?}");
        // More workers than parts: a layout would leave some out and move parts again at the
        // next boundary, so the newcomers only take what the others spare, once.
        let few = first(&all[..1], &[1; 3]).unwrap();
        let new = rebalance(&few, &all[..5], Join::Layout, &[1; 3]).unwrap();
        assert_eq!(Some(new.clone()), rebalance(&few, &all[..5], Join::Fewest, &[1; 3]));
        assert!(rebalance(&new, &all[..5], Join::Layout, &[1; 3]).is_none(), "{new:?}");
    }

    #[test]
    fn runs_are_cut_by_work_where_parts_weigh_differently() {
        // The first four parts weigh three times the others: two equal workers split the work,
        // not the parts (total 20; part 3, whose midpoint 10.5 lies past 10, goes to the second).
        let weights = [3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1];
        let owner = first(&[c(1, 1, 12), c(2, 1, 12)], &weights).unwrap();
        assert_eq!(owner, [1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2], "by parts it would be six each");
        let weights = [1, 1, 1, 1, 1, 1, 5, 5, 5, 5, 5, 5];
        let owner = first(&[c(1, 1, 12), c(2, 1, 12)], &weights).unwrap();
        let work = |w| owner.iter().zip(&weights).filter(|(&o, _)| o == w).map(|(_, &x)| x).sum::<u64>();
        assert_eq!((work(1), work(2)), (16, 20), "{owner:?}");
        // Threads count: a worker of three threads takes three quarters of the work.
        let weights = [2u64; 16];
        let owner = first(&[c(1, 3, 16), c(2, 1, 16)], &weights).unwrap();
        assert_eq!(owner.iter().filter(|&&o| o == 1).count(), 12);
        // A run that would not fit its worker's room: cut by numbers of parts instead.
        let weights = [1, 1, 1, 1, 1, 1, 5, 5, 5, 5, 5, 5];
        let owner = first(&[c(1, 1, 6), c(2, 1, 6)], &weights).unwrap();
        assert_eq!(owner, [1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2]);
        // Equal weights cut as numbers of parts do, up to where an odd part goes.
        for n in 1..=8 {
            let all: Vec<Candidate> = (1..=n).map(|id| c(id, 1, 64)).collect();
            let mut by_work: Vec<usize> =
                (1..=n).map(|w| first(&all, &[7; 63]).unwrap().iter().filter(|&&o| o == w).count()).collect();
            let mut by_parts = shares(&all, 63).unwrap();
            by_work.sort_unstable();
            by_parts.sort_unstable();
            assert_eq!(by_work, by_parts, "{n} workers");
        }
    }
}
