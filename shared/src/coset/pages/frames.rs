//! The mapping that holds a set's pages, as frames that threads write at once.

use super::{Pages, STRIDE};
use memmap2::MmapMut;

/// A set's mapping as frames that threads write at once, each its own (a pass's, a clear's):
/// the callers say which frames are whose.
#[derive(Clone, Copy)]
pub(super) struct FrameMemory(*mut u8);

// SAFETY: the pointer is a mapping that outlives every use (the borrow in `of`), and callers of
// the unsafe accessors keep threads to disjoint frames.
unsafe impl Send for FrameMemory {}
unsafe impl Sync for FrameMemory {}

impl FrameMemory {
    pub(super) fn of(memory: &mut MmapMut) -> Self {
        assert_eq!(memory.len(), Pages::FRAMES * STRIDE);
        FrameMemory(memory.as_mut_ptr())
    }

    /// Where frame `frame` starts (to prefetch: whoever holds it may be writing it).
    pub(super) fn address(self, frame: u32) -> *const u8 {
        self.0.wrapping_add(frame as usize * STRIDE)
    }

    /// Frame `frame`'s bytes.
    ///
    /// # Safety
    /// No thread writes the frame meanwhile.
    pub(super) unsafe fn frame<'a>(self, frame: u32) -> &'a [u8] {
        assert!((frame as usize) < Pages::FRAMES);
        // SAFETY: inside the mapping (asserted); the caller rules out writers.
        unsafe { std::slice::from_raw_parts(self.0.add(frame as usize * STRIDE), STRIDE) }
    }

    /// Frame `frame`'s bytes, to write.
    ///
    /// # Safety
    /// No other thread reads or writes the frame meanwhile.
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn frame_mut<'a>(self, frame: u32) -> &'a mut [u8] {
        assert!((frame as usize) < Pages::FRAMES);
        // SAFETY: inside the mapping (asserted); the caller rules out other access.
        unsafe { std::slice::from_raw_parts_mut(self.0.add(frame as usize * STRIDE), STRIDE) }
    }
}
