//! What the tasks of a distributed hN build return: a level task the new level's rows (as the
//! level store holds them), a table task its finished table rows. Both travel as bytes framed
//! as words ([`to_words`]).

use super::{from_words, to_words};
use crate::h48::table::{LINE_BYTES, LINE_ENTRIES};
use crate::h48::{base_for, ColumnSet, RowLines, H11_COLUMNS};
use crate::wire::Malformed;
use std::io::Read;

/// The most words one row of a level task takes: a level row is never stored larger than its
/// bitmap, plus its 25 bytes of sizes.
pub fn max_level_row_words() -> usize {
    (25 + (H11_COLUMNS as usize).div_ceil(64) * 8).div_ceil(8)
}

/// The most words one row of an hN table task takes: its place, counts and lines.
pub fn max_table_row_words(h: u8) -> usize {
    let per_row = (crate::coord::h48::ESEP as usize) << h;
    let lines = per_row / LINE_ENTRIES + 2;
    let depths = base_for(h) as usize + 3;
    (4 + 8 + 1 + (depths + 1) * 8 + 8 + lines * LINE_BYTES).div_ceil(8)
}

/// The most words a task of `rows` rows returns, each at most `per_row` words: the rows and the
/// length word of [`to_words`].
pub fn max_task_words(rows: usize, per_row: usize) -> usize {
    1 + rows * per_row
}

pub fn encode_level_rows(rows: &[ColumnSet]) -> Vec<u64> {
    let mut bytes = Vec::new();
    ColumnSet::write_rows(rows, &mut bytes).expect("writing to memory");
    to_words(&bytes)
}

/// The `n` level rows of a level task.
pub fn decode_level_rows(words: &[u64], n: usize) -> Result<Vec<ColumnSet>, Malformed> {
    let bytes = from_words(words)?;
    let mut input = bytes.as_slice();
    let rows = ColumnSet::read_rows(&mut input, n, H11_COLUMNS)
        .map_err(|e| Malformed::new(format!("level rows: {e}")))?;
    if !input.is_empty() {
        return Err(malformed!("{} bytes after the level rows", input.len()));
    }
    Ok(rows)
}

pub fn encode_table_rows(rows: &[(u32, RowLines)]) -> Vec<u64> {
    let mut b = Vec::new();
    for (row, lines) in rows {
        b.extend(row.to_le_bytes());
        b.extend(lines.first_line.to_le_bytes());
        b.push(lines.counts.len() as u8);
        for c in lines.counts.iter().chain([&lines.deeper]) {
            b.extend(c.to_le_bytes());
        }
        b.extend((lines.bytes.len() as u64).to_le_bytes());
        b.extend(&lines.bytes);
    }
    to_words(&b)
}

/// The table rows `rows` of hN from a table task, each checked to be where and as large as the
/// row must be.
pub fn decode_table_rows(
    words: &[u64],
    h: u8,
    rows: std::ops::Range<u32>,
) -> Result<Vec<(u32, RowLines)>, Malformed> {
    let bytes = from_words(words)?;
    let mut input = bytes.as_slice();
    let per_row = (crate::coord::h48::ESEP as u64) << h;
    let depths = base_for(h) as usize + 3;
    let read_u64 = |input: &mut &[u8]| -> Result<u64, Malformed> {
        let mut b = [0u8; 8];
        input.read_exact(&mut b).map_err(|_| Malformed::from("a table row is cut short"))?;
        Ok(u64::from_le_bytes(b))
    };
    let mut out = Vec::with_capacity(rows.len());
    for want in rows {
        let mut b4 = [0u8; 4];
        input.read_exact(&mut b4).map_err(|_| Malformed::from("a table row is cut short"))?;
        let row = u32::from_le_bytes(b4);
        let first_line = read_u64(&mut input)?;
        let start = want as u64 * per_row;
        let lines = (start + per_row - 1) / LINE_ENTRIES as u64 - start / LINE_ENTRIES as u64 + 1;
        let mut n = [0u8];
        input.read_exact(&mut n).map_err(|_| Malformed::from("a table row is cut short"))?;
        if row != want || first_line != start / LINE_ENTRIES as u64 || n[0] as usize != depths {
            return Err(malformed!(
                "table row {row} (line {first_line}, {} depths) where row {want} was due",
                n[0]
            ));
        }
        let counts = (0..depths).map(|_| read_u64(&mut input)).collect::<Result<Vec<_>, _>>()?;
        let deeper = read_u64(&mut input)?;
        let len = read_u64(&mut input)?;
        if len != lines * LINE_BYTES as u64 || input.len() < len as usize {
            return Err(malformed!(
                "table row {row}: {len} bytes of lines, {} due",
                lines * LINE_BYTES as u64
            ));
        }
        let (line_bytes, rest) = input.split_at(len as usize);
        input = rest;
        if counts.iter().sum::<u64>() + deeper != per_row {
            return Err(malformed!("table row {row}: counts do not add up to the row's entries"));
        }
        out.push((row, RowLines { first_line, bytes: line_bytes.to_vec(), counts, deeper }));
    }
    if !input.is_empty() {
        return Err(malformed!("{} bytes after the table rows", input.len()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_round_trip_and_refuse_what_the_rows_cannot_hold() {
        assert_eq!(from_words(&to_words(b"abcdefghij")).unwrap(), b"abcdefghij");
        assert!(from_words(&[100, 1]).is_err());
        let rows =
            vec![ColumnSet::from_sorted(&[1, 5, 70_000_000], H11_COLUMNS), ColumnSet::empty(H11_COLUMNS)];
        assert_eq!(decode_level_rows(&encode_level_rows(&rows), 2).unwrap(), rows);
        assert!(decode_level_rows(&encode_level_rows(&rows), 3).is_err());
        assert!(decode_level_rows(&encode_level_rows(&rows), 1).is_err());

        let h = 1u8;
        let per_row = 34_650u64 << h;
        let line = |row: u64| {
            let start = row * per_row;
            let lines = (start + per_row - 1) / 254 - start / 254 + 1;
            RowLines {
                first_line: start / 254,
                bytes: vec![row as u8; lines as usize * 64],
                counts: vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
                deeper: per_row - 66,
            }
        };
        let table = vec![(4u32, line(4)), (5, line(5))];
        assert_eq!(decode_table_rows(&encode_table_rows(&table), h, 4..6).unwrap(), table);
        assert!(encode_table_rows(&table).len() <= max_task_words(2, max_table_row_words(h)));
        let dense = ColumnSet::from_sorted(&(0..H11_COLUMNS).step_by(3).collect::<Vec<_>>(), H11_COLUMNS);
        assert!(encode_level_rows(&[dense.clone(), dense]).len() <= max_task_words(2, max_level_row_words()));
        assert!(decode_table_rows(&encode_table_rows(&table), h, 5..7).is_err(), "rows out of place");
        let mut short = table.clone();
        short[1].1.bytes.pop();
        assert!(decode_table_rows(&encode_table_rows(&short), h, 4..6).is_err(), "lines cut short");
        let mut wrong = table.clone();
        wrong[0].1.deeper += 1;
        assert!(decode_table_rows(&encode_table_rows(&wrong), h, 4..6).is_err(), "counts");
    }
}
