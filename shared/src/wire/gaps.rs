//! A sparse row as the gaps between its entries, Rice-coded: each gap `g` (columns skipped
//! since the previous entry) is `g >> k` zero bits, a one bit, then the low `k` bits of `g`,
//! least significant bit first in little-endian words. With `k` near `log2` of the mean gap a
//! row of `n` entries in `c` columns takes about `n * (k + 2)` bits, within a bit or two an
//! entry of the entropy of such a row, whatever the row's width (16-bit positions need
//! rows of at most 65,536 columns; `h`'s hold 967,680).

/// The Rice parameter and the words a row's entries take with it: the cheapest `k` around
/// `log2` of the mean gap (each candidate's exact cost, counted in one pass over the row).
pub(super) fn cost(row: &[u64], n: usize) -> (u32, usize) {
    debug_assert!(n > 0);
    let columns = row.len() as u64 * 64;
    let mean = (columns - n as u64) / n as u64;
    let centre = (64 - mean.leading_zeros()).clamp(1, 40);
    let ks = [centre - 1, centre, centre + 1];
    let mut high = [0u64; 3];
    let mut prev = 0u64; // the column after the previous entry
    for_each_column(row, |c| {
        let g = c - prev;
        for (h, &k) in high.iter_mut().zip(&ks) {
            *h += g >> k;
        }
        prev = c + 1;
    });
    let bits = |i: usize| n as u64 * (ks[i] as u64 + 1) + high[i];
    let best = (0..3).min_by_key(|&i| bits(i)).unwrap_or(1);
    (ks[best], bits(best).div_ceil(64) as usize)
}

/// Writes a row's entries with parameter `k` into `out`, zeroed, of the size [`cost`] gave.
pub(super) fn write(row: &[u64], k: u32, out: &mut [u64]) {
    let mut at = 0u64; // the next bit to write
    let mut prev = 0u64;
    let low = (1u64 << k) - 1;
    for_each_column(row, |c| {
        let g = c - prev;
        prev = c + 1;
        at += g >> k; // the zeros are there already
        out[(at / 64) as usize] |= 1 << (at % 64);
        at += 1;
        put(out, at, g & low);
        at += k as u64;
    });
}

/// ORs `value` (below 2^63) into `out` at bit `at`.
fn put(out: &mut [u64], at: u64, value: u64) {
    if value == 0 {
        return;
    }
    let (w, s) = ((at / 64) as usize, at % 64);
    out[w] |= value << s;
    if s != 0 && value >> (64 - s) != 0 {
        out[w + 1] |= value >> (64 - s);
    }
}

/// Calls `f` with each column of `row` that holds an entry, in order.
fn for_each_column(row: &[u64], mut f: impl FnMut(u64)) {
    for (j, &word) in row.iter().enumerate() {
        let mut b = word;
        while b != 0 {
            f(j as u64 * 64 + b.trailing_zeros() as u64);
            b &= b - 1;
        }
    }
}

/// Reads `n` entries with parameter `k` from `stream` (which may run on past them), calling
/// `f` with each column; returns the words they took. Refused, without calling `f` past the
/// fault, when the stream is cut short, names a column at or past `columns`, or is not what
/// [`write`] makes (bits set after the last entry).
pub(super) fn read(
    stream: &[u64],
    n: usize,
    k: u32,
    columns: u64,
    mut f: impl FnMut(u64),
) -> Result<usize, &'static str> {
    const SHORT: &str = "a gap cut short";
    const PAST: &str = "a column past the row's end";
    if k > 62 {
        return Err("a Rice parameter above 62");
    }
    let mask = (1u64 << k) - 1;
    let limit = columns >> k; // a gap's high part above this puts it past the row
                              // `buf` holds the stream's next `avail` bits, low first, its other bits clear.
    let (mut next, mut buf, mut avail) = (0usize, 0u64, 0u32);
    let mut column = 0u64; // the column after the previous entry
    for _ in 0..n {
        let mut high = 0u64;
        while buf == 0 {
            high += avail as u64;
            buf = *stream.get(next).ok_or(SHORT)?;
            next += 1;
            avail = 64;
        }
        let zeros = buf.trailing_zeros();
        high += zeros as u64;
        buf = buf >> zeros >> 1;
        avail -= zeros + 1;
        let low = if avail >= k {
            let low = buf & mask;
            buf = if k == 64 { 0 } else { buf >> k };
            avail -= k;
            low
        } else {
            let w = *stream.get(next).ok_or(SHORT)?;
            next += 1;
            let low = (buf | w << avail) & mask;
            let used = k - avail;
            buf = w >> used;
            avail = 64 - used;
            low
        };
        if high > limit {
            return Err(PAST);
        }
        let c = column + (high << k | low);
        if c >= columns {
            return Err(PAST);
        }
        f(c);
        column = c + 1;
    }
    if buf != 0 {
        return Err("bits after a row's last entry");
    }
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns_of(row: &[u64]) -> Vec<u64> {
        let mut v = Vec::new();
        for_each_column(row, |c| v.push(c));
        v
    }

    /// Rows of many densities and widths, the first and last columns included.
    fn rows() -> Vec<Vec<u64>> {
        let mut out = Vec::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for (words, one_in) in [(1, 3), (2, 1), (5, 40), (630, 16), (630, 900), (15_120, 5_000), (3, 2)] {
            let mut row = vec![0u64; words];
            for c in 0..words * 64 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if x % one_in == 0 {
                    row[c / 64] |= 1 << (c % 64);
                }
            }
            row[0] |= 1;
            row[words - 1] |= 1 << 63;
            out.push(row);
        }
        out
    }

    #[test]
    fn rows_read_back_as_written_in_the_words_their_cost_says() {
        for row in rows() {
            let want = columns_of(&row);
            let (k, words) = cost(&row, want.len());
            let mut stream = vec![0u64; words];
            write(&row, k, &mut stream);
            // Every other parameter reads back too.
            let mut got = Vec::new();
            let used = read(&stream, want.len(), k, row.len() as u64 * 64, |c| got.push(c)).unwrap();
            assert_eq!((used, &got), (words, &want), "k = {k}, {} words", row.len());
            for other in k.saturating_sub(3)..k + 3 {
                let high: u64 =
                    want.iter().scan(0, |p, &c| Some((c - std::mem::replace(p, c + 1)) >> other)).sum();
                let bits = want.len() as u64 * (other as u64 + 1) + high;
                let mut s = vec![0u64; bits.div_ceil(64) as usize];
                write(&row, other, &mut s);
                let mut again = Vec::new();
                read(&s, want.len(), other, row.len() as u64 * 64, |c| again.push(c)).unwrap();
                assert_eq!(again, want, "k = {other}");
            }
        }
    }

    #[test]
    fn sparse_rows_cost_a_few_bits_an_entry() {
        // One entry in 5,000 columns of a row of H: log2(5000) + about 1.5 bits, not 16.
        let row = &rows()[5];
        let n = columns_of(row).len();
        let (_, words) = cost(row, n);
        let bits = words as f64 * 64.0 / n as f64;
        assert!(bits < 15.0, "{bits} bits an entry");
    }

    #[test]
    fn streams_cut_short_past_the_row_or_with_trailing_bits_are_refused() {
        let row = &rows()[2];
        let want = columns_of(row);
        let (k, words) = cost(row, want.len());
        let mut stream = vec![0u64; words];
        write(row, k, &mut stream);
        let read_all = |s: &[u64], n: usize, columns: u64| read(s, n, k, columns, |_| {});
        assert_eq!(read_all(&stream, want.len() + 1, 320), Err("a gap cut short"));
        assert_eq!(read_all(&stream[..words - 1], want.len(), 320), Err("a gap cut short"));
        assert_eq!(read_all(&stream, want.len(), 319), Err("a column past the row's end"));
        assert_eq!(read_all(&stream, want.len() - 1, 320), Err("bits after a row's last entry"));
        assert_eq!(read(&[u64::MAX; 2], 1, 63, 320, |_| {}), Err("a Rice parameter above 62"));
        // A gap of zeros longer than the row, then a one: refused, not an overflowing shift.
        let mut long = vec![0u64; 40];
        long[39] = 1;
        assert_eq!(read(&long, 1, 40, 320, |_| {}), Err("a column past the row's end"));
    }
}
