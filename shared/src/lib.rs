//! The library behind the `coordinator` and `worker` binaries: cube algebra, coordinates,
//! symmetry classes, the breadth-first enumeration engines and their result formats.
//!
//! # Layout
//! - [`cube`]: positions, moves, the 48 symmetries, notation.
//! - [`coord`]: ranks of permutations, combinations and orientations; move tables; symmetry
//!   classes of coordinates.
//! - [`space`]: the index spaces (rows x columns) the searches run on.
//! - [`bfs`]: the symmetry-reduced row BFS engine and the plain reference method.
//! - [`h48`]: the H48 solver's tables: build, files, verification.
//! - [`phase2`], [`nxopt`]: Rokicki's tables (cube20src's phase-2 table, nxopt's twelve) in
//!   their programs' bytes.
//! - [`product`]: product enumeration over cosets (Bryan's method), for the whole cube.
//! - [`job`]: the job registry: every job named by one string, parsed once for coordinator and
//!   workers.
//! - [`index_file`]: a row search's index packed once, sent to workers or kept in a file.
//! - [`report`]: enumeration results as text, markdown and JSON.
//! - [`checksum`], [`shard`]: CRC-32, and the checked, compressed unit of work results.
//! - [`container`]: the project's table file layout (header, sections, checksums), the table
//!   formats, and the one way files are committed under their final name.
//! - [`wire`]: what tasks send and receive, over [`shard`].
//! - [`units`]: byte sizes as users write and read them.
//! - [`huge`]: large zeroed arrays advised for transparent huge pages.
//! - [`ones`]: counting set bits by the processor's fastest instructions, chosen at run time.

pub mod bfs;
pub mod checksum;
pub mod container;
pub mod coord;
pub mod coset;
pub mod cube;
pub mod h48;
pub mod huge;
pub mod index_file;
pub mod job;
pub mod nxopt;
pub mod ones;
pub mod phase2;
pub mod product;
pub mod report;
pub mod runtime;
pub mod shard;
pub mod space;
pub mod units;
pub mod wire;
