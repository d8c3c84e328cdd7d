//! The layouts a table can be written in: the project's container, or exactly the bytes of the
//! program that reads the table.

/// A table file's layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableFormat {
    /// The project's container: versioned header, checksums, exact depth counts.
    Cubefarm,
    /// Exactly the blob the H48 solver generates and loads (the H48 tables).
    H48,
    /// Exactly cube20src's `p2p1h.dat`: the table and its checksum (the phase-2 table).
    Cube20src,
    /// Exactly nxopt's `nxopth<x><y>b.dat`: its 4-byte header and the table.
    Nxopt,
}

impl TableFormat {
    pub const ALL: [TableFormat; 4] =
        [TableFormat::Cubefarm, TableFormat::H48, TableFormat::Cube20src, TableFormat::Nxopt];

    pub fn name(self) -> &'static str {
        match self {
            TableFormat::Cubefarm => "cubefarm",
            TableFormat::H48 => "h48",
            TableFormat::Cube20src => "cube20src",
            TableFormat::Nxopt => "nxopt",
        }
    }

    /// What the layout is, in a line (for help texts).
    pub fn describe(self) -> &'static str {
        match self {
            TableFormat::Cubefarm => "the project's layout: versioned header, checksums, exact depth counts",
            TableFormat::H48 => "exactly the blob the H48 solver generates and loads (h48hN)",
            TableFormat::Cube20src => "exactly cube20src's p2p1h.dat: the table and its checksum (phase2)",
            TableFormat::Nxopt => {
                "exactly nxopt's nxopth<x><y>b.dat: its header and the table (nxopt-EOxEPy)"
            }
        }
    }
}

impl std::fmt::Display for TableFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A table format's name that is not one (see [`TableFormat::name`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown table format {0:?} (expected one of {names})", names = TableFormat::ALL.map(|f| f.name()).join(", "))]
pub struct UnknownFormat(pub String);

impl std::str::FromStr for TableFormat {
    type Err = UnknownFormat;
    fn from_str(s: &str) -> Result<Self, UnknownFormat> {
        TableFormat::ALL.into_iter().find(|f| f.name() == s).ok_or_else(|| UnknownFormat(s.to_string()))
    }
}
