//! Little-endian values read from the front of a byte slice, for the indexes that travel as
//! bytes ([`super::RowSpace::to_bytes`], [`crate::h48::H11Rows::to_bytes`]): every read is
//! bounded by what is left, so a short or damaged input is an error, never a panic or an
//! allocation of the size it claims.

use super::IndexBytesError;

pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    /// Bytes read so far.
    pub at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    /// Reads the 4 bytes of `magic` and the format's version, refusing others.
    pub fn header(&mut self, magic: &[u8; 4], version: u32) -> Result<(), IndexBytesError> {
        if self.take(4)? != magic {
            return Err(IndexBytesError::Magic);
        }
        match self.u32()? {
            v if v == version => Ok(()),
            v => Err(IndexBytesError::Version(v, version)),
        }
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], IndexBytesError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or(IndexBytesError::Short(self.at))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    pub fn u8(&mut self) -> Result<u8, IndexBytesError> {
        Ok(self.take(1)?[0])
    }

    pub fn u32(&mut self) -> Result<u32, IndexBytesError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    pub fn u64(&mut self) -> Result<u64, IndexBytesError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    /// `n` values of 2 bytes.
    pub fn u16s(&mut self, n: usize) -> Result<Vec<u16>, IndexBytesError> {
        let bytes = self.take(n.checked_mul(2).ok_or(IndexBytesError::Short(self.at))?)?;
        Ok(bytes.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect())
    }

    /// `n` values of 4 bytes.
    pub fn u32s(&mut self, n: usize) -> Result<Vec<u32>, IndexBytesError> {
        let bytes = self.take(n.checked_mul(4).ok_or(IndexBytesError::Short(self.at))?)?;
        Ok(bytes.chunks_exact(4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes"))).collect())
    }

    /// `n` values of 8 bytes.
    pub fn u64s(&mut self, n: usize) -> Result<Vec<u64>, IndexBytesError> {
        let bytes = self.take(n.checked_mul(8).ok_or(IndexBytesError::Short(self.at))?)?;
        Ok(bytes.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))).collect())
    }

    /// Whether every byte was read.
    pub fn at_end(&self) -> bool {
        self.at == self.bytes.len()
    }
}

/// Appends `values` little-endian.
pub(crate) fn put_u16s(out: &mut Vec<u8>, values: &[u16]) {
    out.extend(values.iter().flat_map(|v| v.to_le_bytes()));
}

/// Appends `values` little-endian.
pub(crate) fn put_u32s(out: &mut Vec<u8>, values: &[u32]) {
    out.extend(values.iter().flat_map(|v| v.to_le_bytes()));
}

/// Appends `values` little-endian.
pub(crate) fn put_u64s(out: &mut Vec<u8>, values: &[u64]) {
    out.extend(values.iter().flat_map(|v| v.to_le_bytes()));
}
