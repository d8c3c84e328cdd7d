//! Face turns, named move sets and Singmaster notation.
//!
//! The 18 face turns are numbered `3 * face + (turns - 1)` with faces in the order U, R, F, D,
//! L, B and `turns` = 1 (clockwise), 2 (half), 3 (counter-clockwise).

use super::geometry::{face_turn_stickers, FACE_LETTERS};
use super::pieces::{compose_stickers, Corners, Edges};
use super::state::Cube;
use std::fmt;
use std::sync::OnceLock;

/// One of the 18 face turns.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move(u8);

impl Move {
    pub const COUNT: usize = 18;

    pub fn new(face: usize, turns: u8) -> Move {
        assert!(face < 6 && (1..=3).contains(&turns), "face {face} turns {turns}");
        Move((3 * face) as u8 + turns - 1)
    }

    pub fn from_index(index: usize) -> Move {
        assert!(index < Self::COUNT);
        Move(index as u8)
    }

    pub fn index(self) -> usize {
        self.0 as usize
    }

    pub fn face(self) -> usize {
        self.0 as usize / 3
    }

    /// 1, 2 or 3 clockwise quarter turns.
    pub fn turns(self) -> u8 {
        self.0 % 3 + 1
    }

    pub fn inverse(self) -> Move {
        Move::new(self.face(), 4 - self.turns())
    }

    /// The move as a cube group element.
    pub fn cube(self) -> &'static Cube {
        &move_cubes()[self.index()]
    }

    pub fn all() -> impl Iterator<Item = Move> {
        (0..Self::COUNT as u8).map(Move)
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let suffix = ["", "2", "'"][self.turns() as usize - 1];
        write!(f, "{}{}", FACE_LETTERS[self.face()], suffix)
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

fn move_cubes() -> &'static [Cube; 18] {
    static CUBES: OnceLock<[Cube; 18]> = OnceLock::new();
    CUBES.get_or_init(|| {
        std::array::from_fn(|index| {
            let (corner_q, edge_q) = face_turn_stickers(index / 3);
            let (mut corners, mut edges) = (corner_q, edge_q);
            for _ in 0..index % 3 {
                corners = compose_stickers(&corners, &corner_q);
                edges = compose_stickers(&edges, &edge_q);
            }
            Cube {
                corners: Corners::from_stickers(&corners).expect("face turns keep corners whole"),
                edges: Edges::from_stickers(&edges).expect("face turns keep edges whole"),
            }
        })
    })
}

/// A named set of generators.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum MoveSet {
    /// Half-turn (face-turn) metric: all 18 face turns.
    Htm,
    /// Quarter-turn metric: the 12 quarter turns.
    Qtm,
    /// Kociemba's H = <U, D, R2, L2, F2, B2>: U and D turns and the other half turns (10).
    KociembaH,
}

impl MoveSet {
    pub fn moves(self) -> Vec<Move> {
        Move::all()
            .filter(|m| match self {
                MoveSet::Htm => true,
                MoveSet::Qtm => m.turns() != 2,
                MoveSet::KociembaH => m.face() % 3 == 0 || m.turns() == 2,
            })
            .collect()
    }

    pub const ALL: [MoveSet; 3] = [MoveSet::Htm, MoveSet::Qtm, MoveSet::KociembaH];

    /// The metrics a user chooses between (H's moves come with the spaces H and H').
    pub const METRICS: [MoveSet; 2] = [MoveSet::Htm, MoveSet::Qtm];

    pub fn name(self) -> &'static str {
        match self {
            MoveSet::Htm => "htm",
            MoveSet::Qtm => "qtm",
            MoveSet::KociembaH => "h",
        }
    }

    /// What the set is, in a few words (for help texts).
    pub fn describe(self) -> &'static str {
        match self {
            MoveSet::Htm => "half-turn (face-turn) metric: the 18 face turns",
            MoveSet::Qtm => "quarter-turn metric: the 12 quarter turns",
            MoveSet::KociembaH => "the 10 moves of Kociemba's H",
        }
    }
}

impl std::fmt::Display for MoveSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A move set's name that is not one (see [`MoveSet::name`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown move set {0:?} (expected one of {names})", names = MoveSet::ALL.map(|m| m.name()).join(", "))]
pub struct UnknownMoveSet(pub String);

impl std::str::FromStr for MoveSet {
    type Err = UnknownMoveSet;
    /// A move set by its [`MoveSet::name`].
    fn from_str(s: &str) -> Result<Self, UnknownMoveSet> {
        MoveSet::ALL.into_iter().find(|m| m.name() == s).ok_or_else(|| UnknownMoveSet(s.to_string()))
    }
}

/// A move sequence that failed to parse, naming the offending token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad move `{token}` (token {position} of the sequence): expected a face letter U, R, F, D, L or B followed by nothing, 2, ' or 2' (or cube20src's 1, 2, 3: R1U2F3)")]
pub struct ParseMovesError {
    pub token: String,
    /// 1-based position of the token in the sequence.
    pub position: usize,
}

/// Parses Singmaster notation: `R U2 F'`, `R2'` (same as R2), tokens separated by any
/// whitespace or none. Also accepts cube20src's turn counts, `U1 U2 U3` (`U1R3F2`).
pub fn parse_moves(text: &str) -> Result<Vec<Move>, ParseMovesError> {
    text.split_whitespace()
        .flat_map(split_turns)
        .enumerate()
        .map(|(i, token)| {
            parse_token(token).ok_or_else(|| ParseMovesError { token: token.to_string(), position: i + 1 })
        })
        .collect()
}

/// A whitespace-free word cut before each face letter (`U1R3` into `U1`, `R3`).
fn split_turns(word: &str) -> Vec<&str> {
    let mut starts: Vec<usize> =
        word.char_indices().filter(|(_, c)| FACE_LETTERS.contains(c)).map(|(i, _)| i).collect();
    if starts.first() != Some(&0) {
        starts.insert(0, 0);
    }
    starts.push(word.len());
    starts.windows(2).map(|w| &word[w[0]..w[1]]).collect()
}

fn parse_token(token: &str) -> Option<Move> {
    let mut chars = token.chars();
    let first = chars.next()?;
    let face = FACE_LETTERS.iter().position(|&c| c == first)?;
    let turns = match chars.as_str() {
        "" | "1" => 1,
        "2" | "2'" => 2,
        "'" | "3" => 3,
        _ => return None,
    };
    Some(Move::new(face, turns))
}

/// Formats a move sequence in Singmaster notation.
pub fn format_moves(moves: &[Move]) -> String {
    moves.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(" ")
}

/// Applies a move sequence to the solved cube.
pub fn apply_moves(moves: &[Move]) -> Cube {
    moves.iter().fold(Cube::SOLVED, |c, m| c.compose(m.cube()))
}
