//! How much of a level an h11 task's rows pull from other workers when the cocsep classes
//! (the rows of `build h48hN`'s h11 levels) are cut into N runs: in the solver's class order,
//! and in the locality order (`space::locality::row_order` over the graph the 18 moves make
//! between classes). Per N: the share of (row, move) images whose source row is on another
//! run, and per worker (the largest) the share of all rows it needs from the others, which is
//! what a level's pull of sources moves (docs/h48-tables.md, "On workers"). Then the tasks a
//! distributed build leases (54 rows each, 64 a level), dealt to N workers in turn, as runs
//! of the solver's rows and as runs of the task order (`H11Rows::task_order`): per N the
//! largest share of all rows one worker pulls.
//!
//!     cargo run --release -p shared --example h48_cut

use shared::coord::h48::{H48Coords, COCSEP_CLASSES};
use shared::cube::{Cube, Move};
use shared::h48::H11Rows;
use shared::space::locality::row_order;
use std::collections::BTreeSet;

fn main() {
    let table = H48Coords.cocsep_table();
    let moves: Vec<Move> = Move::all().collect();
    let class = |raw: u32| table.words[raw as usize] >> 16;
    let rows = COCSEP_CLASSES;
    let target = |r: u32, i: usize| class(table.coord.apply(moves[i], table.classes.rep(r)));
    let start = class(H48Coords.cocsep(&Cube::SOLVED));
    let order = row_order(rows, start, moves.len(), target, |_| false);
    let mut place = vec![0u32; rows as usize];
    for (i, &r) in order.iter().enumerate() {
        place[r as usize] = i as u32;
    }
    println!("owners\torder\tcrossing share\tlargest worker's pulled rows (share of all rows)");
    for n in [2u32, 4, 8, 16, 32] {
        for (name, at) in [("solver", None), ("locality", Some(&place))] {
            let run = |r: u32| at.map_or(r, |p| p[r as usize]) * n / rows;
            let mut crossing = 0u64;
            let mut pulled = vec![std::collections::BTreeSet::new(); n as usize];
            for r in 0..rows {
                for i in 0..moves.len() {
                    // A row of level d + 1 reads level d of the rows that move into it; moves
                    // come in inverse pairs, so those are the rows it moves to.
                    let s = target(r, i);
                    if run(s) != run(r) {
                        crossing += 1;
                        pulled[run(r) as usize].insert(s);
                    }
                }
            }
            let largest = pulled.iter().map(|p| p.len()).max().unwrap_or(0);
            println!(
                "{n}\t{name}\t{:.4}\t{:.4}",
                crossing as f64 / (rows as f64 * moves.len() as f64),
                largest as f64 / rows as f64
            );
        }
    }
    let index = H11Rows::new(&H48Coords);
    let solver: Vec<u32> = (0..rows).collect();
    let task_order = index.task_order();
    let per_task = rows.div_ceil(64) as usize;
    println!("\nowners\ttasks of {per_task} rows dealt in turn, as runs of\tlargest worker's pulled rows");
    for n in [2usize, 4, 8, 16, 32, 64] {
        for (name, order) in [("solver's rows", &solver), ("task order", &task_order)] {
            let largest = (0..n)
                .map(|w| {
                    let mine: BTreeSet<u32> =
                        order.chunks(per_task).skip(w).step_by(n).flatten().copied().collect();
                    mine.iter()
                        .flat_map(|&t| index.sources(t))
                        .filter(|s| !mine.contains(s))
                        .collect::<BTreeSet<_>>()
                        .len()
                })
                .max()
                .unwrap_or(0);
            println!("{n}\t{name}\t{:.4}", largest as f64 / rows as f64);
        }
    }
}
