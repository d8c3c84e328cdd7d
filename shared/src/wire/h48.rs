//! What the tasks of a distributed hN build exchange: a level task returns which worker keeps
//! the new level's rows and their sizes ([`KeptRows`]); workers fetch kept rows from each other
//! (as the level store holds them, [`encode_level_rows`]) where [`Homes`] says they are; a table
//! task returns its finished table rows.

use super::{from_words, to_words};
use crate::h48::table::{LINE_BYTES, LINE_ENTRIES};
use crate::h48::{base_for, ColumnSet, RowLines, SharedFile, H11_COLUMNS};
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

pub fn encode_level_rows<'a>(rows: impl IntoIterator<Item = &'a ColumnSet>) -> Vec<u64> {
    let mut bytes = Vec::new();
    ColumnSet::write_rows(rows, &mut bytes).expect("writing to memory");
    to_words(&bytes)
}

/// The `n` level rows of a message (rows a worker keeps, fetched by another).
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

/// The table rows `rows` of hN from a table task (in the order given: a task's rows
/// ascending), each checked to be where and as large as the
/// row must be: whole, or with `written` ([`Homes::out`]) without the interior lines its worker
/// wrote into the file.
pub fn decode_table_rows(
    words: &[u64],
    h: u8,
    rows: &[u32],
    written: bool,
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
    for &want in rows {
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
        let due = if written { 2 } else { lines } * LINE_BYTES as u64;
        if len != due || input.len() < len as usize {
            return Err(malformed!("table row {row}: {len} bytes of lines, {due} due"));
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

/// What a level task returns: the worker that made the rows and keeps them (other workers fetch
/// them from it), and per row its entries and stored bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeptRows {
    pub worker: u64,
    pub rows: Vec<KeptRow>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeptRow {
    pub entries: u64,
    pub bytes: u64,
}

/// Words of a level task's result per row (see [`max_task_words`]).
pub const KEPT_ROW_WORDS: usize = 2;

pub fn encode_kept(kept: &KeptRows) -> Vec<u64> {
    let mut words = vec![kept.worker];
    words.extend(kept.rows.iter().flat_map(|r| [r.entries, r.bytes]));
    words
}

/// The result of a level task of `n` rows.
pub fn decode_kept(words: &[u64], n: usize) -> Result<KeptRows, Malformed> {
    let (&worker, rest) = words.split_first().ok_or(Malformed::from("an empty result"))?;
    if rest.len() != KEPT_ROW_WORDS * n || worker == 0 {
        return Err(malformed!("a level result of {} words for {n} rows from worker {worker}", words.len()));
    }
    let rows: Vec<KeptRow> =
        rest.chunks_exact(KEPT_ROW_WORDS).map(|w| KeptRow { entries: w[0], bytes: w[1] }).collect();
    if let Some(r) = rows.iter().find(|r| r.entries > H11_COLUMNS as u64) {
        return Err(malformed!("a level row of {} entries (a row has {H11_COLUMNS} columns)", r.entries));
    }
    Ok(KeptRows { worker, rows })
}

/// Where the rows of a distributed build's h11 levels are kept: per depth 1 .. (index 0 is
/// level 0, which every worker makes itself) and row, the worker that keeps the row (0: none
/// yet), and the address of every such worker's `Peer` service; and the order tasks number
/// the rows in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Homes {
    pub levels: Vec<Vec<u64>>,
    /// Every row once ([`crate::h48::H11Rows::task_order`]): a task of rows `a..b` makes the
    /// rows `order[a..b]`.
    pub order: Vec<u32>,
    pub peers: Vec<(u64, String)>,
    /// For table tasks: the file the workers write the rows into themselves (`build
    /// --shared-out`), else none (the rows go up whole).
    pub out: Option<SharedFile>,
}

impl Homes {
    /// The worker keeping row `row` of level `depth` (depth >= 1).
    pub fn home(&self, depth: usize, row: u32) -> Option<u64> {
        self.levels.get(depth)?.get(row as usize).copied().filter(|&w| w != 0)
    }

    /// The rows a task of positions `positions` in [`Homes::order`] makes, if it has them.
    pub fn task_rows(&self, positions: std::ops::Range<u64>) -> Option<&[u32]> {
        let (start, end) = (usize::try_from(positions.start).ok()?, usize::try_from(positions.end).ok()?);
        self.order.get(start..end)
    }

    pub fn address(&self, worker: u64) -> Option<&str> {
        self.peers.iter().find(|(w, _)| *w == worker).map(|(_, a)| a.as_str())
    }

    pub fn encode(&self) -> Vec<u8> {
        let rows = self.levels.first().map_or(0, |l| l.len());
        let mut b = Vec::with_capacity(8 + 8 * rows * self.levels.len());
        b.extend((self.levels.len() as u32).to_le_bytes());
        b.extend((rows as u32).to_le_bytes());
        for level in &self.levels {
            level.iter().for_each(|w| b.extend(w.to_le_bytes()));
        }
        b.extend((self.order.len() as u32).to_le_bytes());
        self.order.iter().for_each(|r| b.extend(r.to_le_bytes()));
        b.extend((self.peers.len() as u32).to_le_bytes());
        for (id, address) in &self.peers {
            b.extend(id.to_le_bytes());
            b.extend((address.len() as u32).to_le_bytes());
            b.extend(address.as_bytes());
        }
        b.push(u8::from(self.out.is_some()));
        if let Some(out) = &self.out {
            let path = out.path.as_os_str().as_encoded_bytes();
            b.extend((path.len() as u32).to_le_bytes());
            b.extend(path);
            b.extend(out.main.to_le_bytes());
            b.extend(out.main_len.to_le_bytes());
        }
        b
    }

    pub fn decode(bytes: &[u8]) -> Result<Homes, Malformed> {
        let mut input = bytes;
        let mut take = |n: usize| -> Result<&[u8], Malformed> {
            if input.len() < n {
                return Err(Malformed::from("the homes of the levels are cut short"));
            }
            let (head, rest) = input.split_at(n);
            input = rest;
            Ok(head)
        };
        let u32_at = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize;
        let u64_at = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
        let (depths, rows) = (u32_at(take(4)?), u32_at(take(4)?));
        if depths > 64 || rows > 1 << 20 {
            return Err(malformed!("homes of {depths} levels of {rows} rows"));
        }
        let mut levels = Vec::with_capacity(depths);
        for _ in 0..depths {
            levels.push(take(8 * rows)?.chunks_exact(8).map(u64_at).collect());
        }
        let ordered = u32_at(take(4)?);
        if ordered > 1 << 20 || (depths > 0 && ordered != rows) {
            return Err(malformed!("a task order of {ordered} rows for levels of {rows}"));
        }
        let order: Vec<u32> = take(4 * ordered)?.chunks_exact(4).map(|b| u32_at(b) as u32).collect();
        let mut seen = vec![false; ordered];
        if !order.iter().all(|&r| (r as usize) < ordered && !std::mem::replace(&mut seen[r as usize], true)) {
            return Err(Malformed::from("the task order does not hold every row once"));
        }
        let n = u32_at(take(4)?);
        let mut peers = Vec::new();
        for _ in 0..n {
            let id = u64_at(take(8)?);
            let len = u32_at(take(4)?);
            let address = std::str::from_utf8(take(len)?)
                .map_err(|_| Malformed::from("a worker's address is not text"))?
                .to_string();
            peers.push((id, address));
        }
        let out = match take(1)?[0] {
            0 => None,
            1 => {
                let len = u32_at(take(4)?);
                let path = std::str::from_utf8(take(len)?)
                    .map_err(|_| Malformed::from("the shared table file's path is not text"))?;
                let (main, main_len) = (u64_at(take(8)?), u64_at(take(8)?));
                Some(SharedFile { path: path.into(), main, main_len })
            }
            other => return Err(malformed!("homes with shared-file flag {other}")),
        };
        if !input.is_empty() {
            return Err(malformed!("{} bytes after the homes of the levels", input.len()));
        }
        Ok(Homes { levels, order, peers, out })
    }
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
        assert_eq!(decode_table_rows(&encode_table_rows(&table), h, &[4, 5], false).unwrap(), table);
        // Rows whose worker wrote their interior lines come with their two edge lines only,
        // and only where that was asked for.
        let edges: Vec<(u32, RowLines)> = table.iter().map(|(r, l)| (*r, l.without_interior())).collect();
        assert_eq!(edges[1].1.bytes.len(), 2 * LINE_BYTES);
        assert_eq!(decode_table_rows(&encode_table_rows(&edges), h, &[4, 5], true).unwrap(), edges);
        assert!(
            decode_table_rows(&encode_table_rows(&edges), h, &[4, 5], false).is_err(),
            "interior missing"
        );
        assert!(
            decode_table_rows(&encode_table_rows(&table), h, &[4, 5], true).is_err(),
            "interior not written"
        );
        assert!(encode_table_rows(&table).len() <= max_task_words(2, max_table_row_words(h)));
        let dense = ColumnSet::from_sorted(&(0..H11_COLUMNS).step_by(3).collect::<Vec<_>>(), H11_COLUMNS);
        assert!(encode_level_rows(&[dense.clone(), dense]).len() <= max_task_words(2, max_level_row_words()));
        assert!(
            decode_table_rows(&encode_table_rows(&table), h, &[5, 6], false).is_err(),
            "rows out of place"
        );
        let mut short = table.clone();
        short[1].1.bytes.pop();
        assert!(decode_table_rows(&encode_table_rows(&short), h, &[4, 5], false).is_err(), "lines cut short");
        let mut wrong = table.clone();
        wrong[0].1.deeper += 1;
        assert!(decode_table_rows(&encode_table_rows(&wrong), h, &[4, 5], false).is_err(), "counts");
    }

    #[test]
    fn kept_rows_and_homes_round_trip_and_refuse_damage() {
        let kept = KeptRows {
            worker: 3,
            rows: vec![KeptRow { entries: 10, bytes: 40 }, KeptRow { entries: 0, bytes: 9 }],
        };
        let words = encode_kept(&kept);
        assert!(words.len() <= max_task_words(2, KEPT_ROW_WORDS));
        assert_eq!(decode_kept(&words, 2).unwrap(), kept);
        assert!(decode_kept(&words, 3).is_err());
        assert!(decode_kept(&[0, 1, 1], 1).is_err(), "no worker 0");
        assert!(decode_kept(&[1, H11_COLUMNS as u64 + 1, 1], 1).is_err(), "more entries than columns");

        let mut homes = Homes {
            levels: vec![vec![0; 3], vec![1, 2, 2], vec![2, 0, 1]],
            order: vec![2, 0, 1],
            peers: vec![(1, "http://127.0.0.1:5".into()), (2, "https://h:6".into())],
            out: None,
        };
        let shared = SharedFile { path: "/shared/h48h11.partial".into(), main: 4096, main_len: 1 << 40 };
        homes.out = Some(shared);
        assert_eq!(Homes::decode(&homes.encode()).unwrap(), homes);
        homes.out = None;
        let bytes = homes.encode();
        assert_eq!(Homes::decode(&bytes).unwrap(), homes);
        assert_eq!((homes.home(1, 2), homes.home(2, 1), homes.home(0, 0)), (Some(2), None, None));
        assert_eq!(homes.address(2), Some("https://h:6"));
        assert_eq!((homes.task_rows(1..3), homes.task_rows(2..4)), (Some(&[0, 1][..]), None));
        assert!(Homes::decode(&bytes[..bytes.len() - 1]).is_err());
        // The order must hold every row once, as many as the levels have.
        for order in [vec![2, 0, 0], vec![2, 0, 3], vec![1, 0]] {
            let bad = Homes { order, ..homes.clone() };
            assert!(Homes::decode(&bad.encode()).is_err(), "{:?}", bad.order);
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(Homes::decode(&longer).is_err());
    }
}
