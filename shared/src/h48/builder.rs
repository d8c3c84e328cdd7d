//! From distances to tables: per-entry depths out of the row BFS, the plain BFS over raw
//! coordinates used for the cocsep table (and as an independent check), and the three sections
//! of an H48 table set.

use super::table::{bucket_counts, pack_nibbles, pack_two_bit, DEEPER};
use crate::bfs::{bfs_depths, BfsError, BfsOptions, Depths};
use crate::container::{Section, SectionInfo, SectionKind};
use crate::coord::h48::{solver_esep_words, CocsepTable, EoEsepColumns, H48Coords, EO, ESEP, NO_WORD};
use crate::coord::RawCoord;
use crate::cube::{Cube, Move, MoveSet};
use crate::space::EoEsepSpace;
use rayon::prelude::*;

/// Plain BFS over every raw value of a coordinate (no symmetry), one byte per value.
pub fn plain_depths(coord: &RawCoord, solved: u32, moves: &[Move]) -> Vec<u8> {
    plain_bfs(coord.size as usize, solved as usize, |v, out| {
        out.extend(moves.iter().map(|&m| coord.apply(m, v as u32) as usize))
    })
}

/// Plain BFS over the raw eoesep values (esep x 2048 + eo), with separate esep and eo move
/// tables: the independent check of the edge fallback table.
pub fn plain_eoesep_depths(coords: &H48Coords, moves: &[Move]) -> Vec<u8> {
    let esep = coords.esep_coord();
    let eo = coords.eo_moves();
    let solved = coords.eoesep(&Cube::SOLVED) as usize;
    plain_bfs((ESEP * EO) as usize, solved, |v, out| {
        let (e, o) = (v as u32 / EO, v % EO as usize);
        out.extend(
            moves
                .iter()
                .map(|&m| (esep.apply(m, e) * EO) as usize + eo[m.index() * EO as usize + o] as usize),
        )
    })
}

fn plain_bfs(size: usize, start: usize, neighbours: impl Fn(usize, &mut Vec<usize>) + Sync) -> Vec<u8> {
    let mut depth = vec![DEEPER; size];
    depth[start] = 0;
    let mut frontier = vec![start];
    let mut d = 0u8;
    while !frontier.is_empty() {
        d += 1;
        let candidates: Vec<usize> = frontier
            .par_chunks(4096)
            .flat_map_iter(|chunk| {
                let mut out = Vec::new();
                for &v in chunk {
                    neighbours(v, &mut out);
                }
                out.retain(|&w| depth[w] == DEEPER);
                out
            })
            .collect();
        frontier.clear();
        for w in candidates {
            if depth[w] == DEEPER {
                depth[w] = d;
                frontier.push(w);
            }
        }
    }
    depth
}

/// The base the H48 solver uses for hN.
pub fn base_for(h: u8) -> u8 {
    match h {
        0..=3 => 8,
        4..=7 => 9,
        _ => 10,
    }
}

/// The cocsep section: the solver's word of every raw value.
pub fn cocsep_section(table: &CocsepTable) -> Section {
    let mut depth_counts = vec![0u64; 10];
    for &w in table.words.iter().filter(|&&w| w != NO_WORD) {
        let d = (w & 0xff) as usize;
        if d >= depth_counts.len() {
            depth_counts.resize(d + 1, 0);
        }
        depth_counts[d] += 1;
    }
    let data: Vec<u8> = table.words.iter().flat_map(|w| w.to_le_bytes()).collect();
    Section {
        info: SectionInfo {
            kind: SectionKind::Cocsep,
            h: 0,
            base: 0,
            entries: table.words.len() as u64,
            depth_counts,
            deeper: 0,
            buckets: None,
            len: data.len() as u64,
        },
        data,
    }
}

/// The h0 section from the depths of the (cocsep class, esep) index.
pub fn h48_section(h: u8, depths: &Depths) -> Section {
    let base = base_for(h);
    let data = pack_two_bit(&depths.values, base);
    let entries = depths.values.len() as u64;
    Section {
        info: SectionInfo {
            kind: SectionKind::H48,
            h,
            base,
            entries,
            depth_counts: depths.counts.clone(),
            deeper: depths.deeper,
            buckets: Some(bucket_counts(&data, entries)),
            len: data.len() as u64,
        },
        data,
    }
}

/// The edge fallback section from the depths of the (esep class, eo) index.
pub fn eoesep_section(coords: &H48Coords, space: &EoEsepSpace, depths: &Depths) -> Section {
    let esep = coords.esep_coord();
    let mut data: Vec<u8> =
        solver_esep_words(&esep, space.classes()).into_iter().flat_map(|w| w.to_le_bytes()).collect();
    data.extend(pack_nibbles(&depths.values));
    Section {
        info: SectionInfo {
            kind: SectionKind::EoEsep,
            h: 0,
            base: 0,
            entries: depths.values.len() as u64,
            depth_counts: depths.counts.clone(),
            deeper: depths.deeper,
            buckets: None,
            len: data.len() as u64,
        },
        data,
    }
}

/// The cocsep and edge fallback sections, which every table set carries.
pub fn small_sections(coords: &H48Coords) -> Result<[Section; 2], BfsError> {
    let (cocsep, columns) = coords.h11_tables();
    small_sections_from(coords, &cocsep, &columns)
}

/// The same from the cocsep table and h11's column tables, when an hN build has made them for
/// its index ([`H11Rows::from_tables`]).
pub fn small_sections_from(
    coords: &H48Coords,
    cocsep: &CocsepTable,
    columns: &EoEsepColumns,
) -> Result<[Section; 2], BfsError> {
    let edges = EoEsepSpace::new(coords, columns);
    let depths = bfs_depths(&edges, &MoveSet::Htm.moves(), &BfsOptions::default())?;
    Ok([cocsep_section(cocsep), eoesep_section(coords, &edges, &depths)])
}
