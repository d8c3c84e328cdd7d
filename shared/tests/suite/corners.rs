//! The corners-only cube (8! x 3^7 = 88,179,840 positions) by the symmetry-reduced row engine,
//! checked against the plain unreduced BFS with Burnside class counts.

use shared::bfs::{self, reference};
use shared::coord::{corner_tetrads, Part};
use shared::cube::{Corners, Move, MoveSet, SplitMix64, Symmetry};
use shared::space::{RowOrder, RowSpace, Transitions};

const ORDER: u64 = 88_179_840;

fn engine(set: MoveSet) -> Vec<shared::report::DepthCounts> {
    let space = RowSpace::new(corner_tetrads());
    assert_eq!(space.row_count(), 3393);
    bfs::run(&space, &set.moves(), &bfs::BfsOptions::default(), |_, _| {}).unwrap()
}

/// The plain BFS's distribution with Burnside class counts, made once per metric for every test.
fn plain(set: MoveSet) -> &'static [shared::report::DepthCounts] {
    type Made = std::sync::OnceLock<Vec<shared::report::DepthCounts>>;
    static HTM: Made = Made::new();
    static QTM: Made = Made::new();
    let made = match set {
        MoveSet::Htm => &HTM,
        MoveSet::Qtm => &QTM,
        _ => unreachable!("the corners' tests use both metrics only"),
    };
    made.get_or_init(|| reference::corner_distribution(&set.moves()))
}

#[test]
fn corners_htm_engine_matches_plain_bfs_with_burnside_counts() {
    let fast = engine(MoveSet::Htm);
    assert_eq!(fast.iter().map(|d| d.positions).sum::<u64>(), ORDER);
    assert_eq!(fast, plain(MoveSet::Htm));
}

#[test]
fn corners_qtm_engine_matches_plain_bfs_with_burnside_counts() {
    let fast = engine(MoveSet::Qtm);
    assert_eq!(fast.iter().map(|d| d.positions).sum::<u64>(), ORDER);
    assert_eq!(fast, plain(MoveSet::Qtm));
}

#[test]
fn a_shrunk_space_locates_and_counts_as_the_whole_one() {
    // Without its class tables a space locates by conjugation: every position lands on the same
    // row and a column of the same class, and the counts (self-inverse classes included, which
    // locate inverses) are the reference's.
    let whole = RowSpace::new(corner_tetrads());
    let mut shrunk = RowSpace::new(corner_tetrads());
    shrunk.shrink();
    let mut rng = SplitMix64::new(7);
    for _ in 0..20_000 {
        let x = shared::cube::random_cube(&mut rng).corners;
        let ((r1, c1), (r2, c2)) = (whole.locate(&x), shrunk.locate(&x));
        assert_eq!(r1, r2);
        // Both columns hold a conjugate of x (the same one, or one the row's stabilizer relates).
        for (r, c) in [(r1, c1), (r2, c2)] {
            assert!(Symmetry::all().any(|s| s.conjugate_corners(&x) == shrunk.position(r, c)));
        }
    }
    let moves = MoveSet::Htm.moves();
    let counts = bfs::run(&shrunk, &moves, &bfs::BfsOptions::default(), |_, _| {}).unwrap();
    assert_eq!(counts, plain(MoveSet::Htm));
}

#[test]
fn corners_qtm_depth_parity_is_permutation_parity() {
    let depths = reference::corner_depths(&MoveSet::Qtm.moves());
    let mut rng = SplitMix64::new(9);
    for _ in 0..20_000 {
        let i = rng.below(ORDER) as usize;
        let mut x = Corners::IDENTITY;
        shared::coord::rank::perm_unrank((i / 2187) as u32, &mut x.perm);
        assert_eq!(depths[i] % 2 == 1, x.parity());
    }
}

#[test]
fn column_maps_are_exact_on_every_column() {
    let space = RowSpace::new(corner_tetrads());
    let mut rng = SplitMix64::new(4);
    for _ in 0..60 {
        let row = rng.below(space.row_count() as u64) as u32;
        for m in Move::all() {
            let t = space.transition(row, m);
            for c in 0..space.column_count() {
                let y = space.position(row, c).compose(&m.cube().corners);
                let (r2, c2) = space.locate(&y);
                assert_eq!(r2, t.target);
                assert_eq!(t.map.apply(c), c2, "row {row} move {m} column {c}");
            }
        }
    }
}

/// Cut into 2 to 16 runs of consecutive rows, the rows (in locality order) send fewer (row,
/// move) images across runs than rows numbered by increasing representative; renumbered, they
/// give the same distribution.
#[test]
fn runs_of_corner_rows_keep_more_images_home() {
    let layout = corner_tetrads();
    let by_rep = RowSpace::build_classes(&layout);
    let space =
        RowSpace::with_classes(corner_tetrads(), by_rep.clone(), Transitions::Probe, RowOrder::Locality);
    let rows = space.row_count();
    let by_rep_target = |r: u32, m: Move| {
        let x = layout.decode(by_rep.rep(r), 0);
        by_rep.class_of(layout.row(&x.compose(Part::of(m.cube()))))
    };
    let crossing = |target: &dyn Fn(u32, Move) -> u32, runs: u32| {
        let run = |r: u32| r * runs / rows;
        (0..rows)
            .flat_map(|r| Move::all().map(move |m| (r, m)))
            .filter(|&(r, m)| run(r) != run(target(r, m)))
            .count()
    };
    for runs in [2, 4, 8, 16] {
        let ours = crossing(&|r, m| space.transition(r, m).target, runs);
        let old = crossing(&by_rep_target, runs);
        assert!(ours < old, "{runs} runs: {ours} images cross against {old}");
    }
    let depths = bfs::run(&space, &MoveSet::Htm.moves(), &bfs::BfsOptions::default(), |_, _| {}).unwrap();
    assert_eq!(depths, plain(MoveSet::Htm));
}
