//! The spaces the project computes over, named once: what `enumerate` counts (corners, edges,
//! the cube, H, H') and the indexes the table builds search (the H48 tables' h0 and h11, nxopt's
//! tables). Job names, the command line and the workers all parse these names here; which index
//! or coset family each space has is decided by the job registry (`crate::job`) and the product
//! method (`crate::product`).

use crate::coord::nxopt::NxoptKind;
use crate::cube::MoveSet;

/// A space, by the name users and job specs give it ([`Space::describe`] says what it is).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    Corners,
    Edges,
    Cube,
    H,
    Hprime,
    H48h0,
    H48h11,
    Nxopt(NxoptKind),
}

impl Space {
    /// The spaces `enumerate` counts, in the order its help lists them.
    pub const ENUMERATED: [Space; 5] = [Space::Corners, Space::Edges, Space::Cube, Space::H, Space::Hprime];

    /// Every space but the nxopt family (which [`Self::parse`] also reads).
    const NAMED: [Space; 7] =
        [Space::Corners, Space::Edges, Space::Cube, Space::H, Space::Hprime, Space::H48h0, Space::H48h11];

    pub fn name(self) -> String {
        match self {
            Space::Corners => "corners".into(),
            Space::Edges => "edges".into(),
            Space::Cube => "cube".into(),
            Space::H => "h".into(),
            Space::Hprime => "hprime".into(),
            Space::H48h0 => "h48h0".into(),
            Space::H48h11 => "h48h11".into(),
            Space::Nxopt(kind) => format!("nxopt-{}", kind.name().to_ascii_lowercase()),
        }
    }

    /// The space named `name` (see [`Self::name`]).
    pub fn parse(name: &str) -> Option<Space> {
        if let Some(kind) = name.strip_prefix("nxopt-") {
            return NxoptKind::parse(kind).map(Space::Nxopt);
        }
        Space::NAMED.into_iter().find(|k| k.name() == name)
    }

    /// One of the spaces `enumerate` counts, for the command line.
    pub fn parse_enumerated(name: &str) -> Result<Space, UnknownSpace> {
        Space::parse(name).filter(|s| Space::ENUMERATED.contains(s)).ok_or_else(|| UnknownSpace {
            name: name.to_string(),
            expected: Space::ENUMERATED.iter().map(|s| s.name()).collect::<Vec<_>>().join(", "),
        })
    }

    /// What the space is, in a line (for help texts).
    pub fn describe(self) -> &'static str {
        match self {
            Space::Corners => "the corners-only cube: 8! x 3^7 = 88,179,840 positions",
            Space::Edges => "the edges-only cube: 12! x 2^11 = 980,995,276,800 positions",
            Space::Cube => "the whole 3x3x3 cube: 43,252,003,274,489,856,000 positions (product method)",
            Space::H => "Kociemba's H = <U, D, R2, L2, F2, B2> in its 10 moves: 19,508,428,800 positions",
            Space::Hprime => "H without the middle-slice edges (H'): 8! x 8! = 1,625,702,400 positions",
            Space::H48h0 => "the H48 solver's h0 coordinate: cocsep classes x esep",
            Space::H48h11 => "the H48 solver's h11 coordinate: cocsep classes x eoesep (every hN table)",
            Space::Nxopt(_) => "one of Rokicki's nxopt tables: corner classes x its edge coordinate",
        }
    }

    /// Whether the row BFS runs on it (every space has a row index but the whole cube).
    pub fn has_rows(self) -> bool {
        self != Space::Cube
    }

    /// Whether the product method runs on it.
    pub fn has_cosets(self) -> bool {
        matches!(self, Space::Cube | Space::Edges)
    }

    /// The moves a space is searched with when they are not a metric's choice: H and H' in H's
    /// own 10 moves.
    pub fn own_moves(self) -> Option<MoveSet> {
        matches!(self, Space::H | Space::Hprime).then_some(MoveSet::KociembaH)
    }
}

impl std::fmt::Display for Space {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// A space's name that is not one of the spaces asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown space {name:?}: expected one of {expected}")]
pub struct UnknownSpace {
    pub name: String,
    /// The names that would have been accepted, comma-separated.
    pub expected: String,
}

impl std::str::FromStr for Space {
    type Err = UnknownSpace;
    fn from_str(s: &str) -> Result<Self, UnknownSpace> {
        Space::parse(s).ok_or_else(|| UnknownSpace {
            name: s.to_string(),
            expected: format!("{}, nxopt-KIND", Space::NAMED.map(|k| k.name()).join(", ")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back() {
        let nxopt = NxoptKind::all().into_iter().map(Space::Nxopt);
        for space in Space::NAMED.into_iter().chain(nxopt) {
            let name = space.name();
            assert_eq!(name.parse::<Space>(), Ok(space));
        }
        assert!(Space::parse_enumerated("h48h0").is_err());
        assert!("teapot".parse::<Space>().is_err());
    }
}
