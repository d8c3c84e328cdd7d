//! Large arrays that the kernel may back by transparent huge pages (`MADV_HUGEPAGE`).
//!
//! A worker's parts hold three arrays of tens of megabytes each, and its messages are made and
//! received in buffers as large. Their pages are first touched level by level, and with 4 KiB
//! pages each one costs a fault of its own. The engine's bit arrays take huge pages for the
//! same reason (`bfs::bitmap`; docs/kernels.md, "Edges: the cost of first touching memory").
//! Where the kernel refuses the advice, the memory is used with the pages it gives.

/// Smallest allocation advised: below a few huge pages the advice gains little.
const SMALLEST: usize = 4 << 20;

/// `words` zero words, advised for huge pages when large (see the module's documentation).
/// The memory comes zeroed from the allocator (fresh pages, not written here), so pages the
/// caller never touches stay unbacked.
pub fn zeroed_words(words: usize) -> Vec<u64> {
    let v = vec![0u64; words];
    advise(v.as_ptr().cast(), v.len() * 8);
    v
}

/// Advises the whole 4 KiB pages within `len` bytes from `start` for huge pages (nothing for
/// a small range, or off Linux). The advice changes how the kernel backs the pages, never
/// their content.
pub fn advise(start: *const u8, len: usize) {
    if len < SMALLEST {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let first = (start as usize).next_multiple_of(PAGE);
        let end = (start as usize + len) & !(PAGE - 1);
        if end > first {
            // SAFETY: [first, end) lies inside the caller's allocation and is page aligned;
            // MADV_HUGEPAGE reads or writes no byte of it. A refusal is harmless (4 KiB pages).
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advised_arrays_are_zero_and_writable() {
        for words in [0, 1, 1000, (SMALLEST / 8) + 3, 3 << 20] {
            let mut v = zeroed_words(words);
            assert_eq!(v.len(), words);
            assert!(v.iter().all(|&w| w == 0));
            if let Some(last) = v.last_mut() {
                *last = 7;
            }
            assert_eq!(v.iter().sum::<u64>(), if words > 0 { 7 } else { 0 });
        }
    }
}
