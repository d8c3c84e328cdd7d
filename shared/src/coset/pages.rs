//! One bit per element of H, laid out so that one pass over memory extends a whole set by H's
//! ten moves (the layout of Rokicki's coset solver, derived here from the group's structure).
//!
//! An element of H is a corner permutation `c`, a permutation `e` of the eight U/D-layer edges
//! and a permutation `s` of the four middle-slice edges, with parity(c) = parity(e) xor
//! parity(s). A *page* holds one corner permutation: 20,160 *groups* of 24 bits (3 bytes each,
//! 60,480 bytes a page, 2.44 GB a coset). A group is a pair {e, t e} of U/D-edge permutations
//! that differ by exchanging cubies 6 and 7, so one member is even and one odd; its low 12 bits
//! are the even member with the 12 slice permutations of the parity the page asks for, its high
//! 12 bits the odd member. The 12 slice permutations of a parity are numbered by *slots*; an odd
//! permutation takes the slot of its product with F2's slice exchange.
//!
//! Right-multiplying by a move commutes with relabelling cubies, so every move of H maps groups
//! to groups. Within a group, a move that is odd on the U/D edges exchanges the two halves, and
//! R2, L2 and B2 also permute the slots (a 12-bit table per move and parity); U, D and F2 leave
//! the slots alone. Extending a set by the ten moves is therefore, for each group of each page,
//! ten 3-byte reads from the ten neighbouring pages, three table lookups and a few shifts.
//!
//! Pages are stored orbit by orbit of <U, D> (16 corner permutations joined by U and D turns),
//! so the pages one thread works on share most of their sources. Groups are ordered the same
//! way, in blocks of 16 joined by U and D turns (<U, D> acts freely on groups), each block as
//! G U^a D^b at 4 b + a: a move of <U, D> then takes a block's sources from the same block of
//! the source page, permuted alike in every block, so six of the ten moves read 48 contiguous
//! bytes where the other four gather.

use super::prefetch;
use memmap2::MmapMut;
use rayon::prelude::*;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;

mod frames;
mod layout;
mod pass;

use frames::FrameMemory;
pub use layout::{Layout, Place};
use pass::extend_page;

/// Corner permutations: pages.
pub const PAGES: usize = 40320;
/// Groups of a page: pairs of U/D-edge permutations.
pub const GROUPS: usize = 20160;
/// Bytes of a page's bits.
pub const PAGE_BYTES: usize = 3 * GROUPS;
/// Elements of H in a page.
pub const PAGE_BITS: u32 = 24 * GROUPS as u32;
/// Bytes from one page to the next: the bits and a zero tail, so a 4-byte read or write of the
/// last group stays inside the page.
const STRIDE: usize = PAGE_BYTES + 8;
/// Pages in an orbit of <U, D>.
const ORBIT: usize = 16;
const LOW: u32 = 0xfff;
/// An empty page, as a pass reads one.
static ZEROS: [u8; STRIDE] = [0; STRIDE];
/// Elements a step of [`Pages::extend_sparse`] moves at once (ten places each).
const SPARSE_CHUNK: usize = 64;

/// A set of elements of H: one bit each, held page by page in *frames* of a mapping with room for
/// two sets. A pass ([`Pages::extend`]) writes each new page to a free frame and frees a page's
/// old frame once every page made from it is made, so a run touches only the frames it needs at
/// once (about 1.18 sets) and reuses them from depth to depth.
pub struct Pages {
    memory: MmapMut,
    /// Per page: its frame.
    frame: Vec<u32>,
    /// Per page: its elements.
    counts: Vec<u32>,
    /// Frames holding no page, the most recently freed last.
    free: Vec<u32>,
}

/// A set that several threads add elements to (see [`Pages::fill`]).
pub struct SharedPages<'a> {
    bits: &'a [AtomicU8],
    frame: &'a [u32],
    /// Per page: whether an element was added (its count is redone afterwards).
    touched: &'a [AtomicBool],
}

impl SharedPages<'_> {
    /// Adds elements given by their places. The bytes are prefetched first, so their cache
    /// misses overlap instead of each waiting behind the previous atomic write; a bit already
    /// set costs a plain read.
    pub fn insert(&self, places: &[Place]) {
        let at = |p: &Place| self.frame[p.page as usize] as usize * STRIDE + p.byte as usize;
        for p in places {
            prefetch(&self.bits[at(p)]);
        }
        for p in places {
            let (byte, mask) = (&self.bits[at(p)], 1u8 << p.bit);
            if byte.load(Ordering::Relaxed) & mask == 0 {
                byte.fetch_or(mask, Ordering::Relaxed);
                let touched = &self.touched[p.page as usize];
                if !touched.load(Ordering::Relaxed) {
                    touched.store(true, Ordering::Relaxed);
                }
            }
        }
    }
}

/// The bits of a page that are set (`set`) or clear, in increasing order.
fn indices(page: &[u8], set: bool) -> impl Iterator<Item = u32> + '_ {
    page[..PAGE_BYTES].chunks_exact(8).enumerate().flat_map(move |(w, chunk)| {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let mut bits = if set { word } else { !word };
        std::iter::from_fn(move || {
            (bits != 0).then(|| {
                let b = bits.trailing_zeros();
                bits &= bits - 1;
                64 * w as u32 + b
            })
        })
    })
}

fn count_page(page: &[u8]) -> u32 {
    page[..PAGE_BYTES]
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")).count_ones())
        .sum()
}

impl Pages {
    /// Frames the mapping has room for: two sets (a pass holds at most 1.18, see
    /// [`Pages::extend`]; the rest is never touched, so it costs address space only).
    const FRAMES: usize = 2 * PAGES;

    /// Bytes a set's frames come to: one set and a fifth (a pass in the layout's order holds
    /// 1.18 sets on one thread, and a few orbits' more pages on many, which finish out of
    /// order; see `passes_hold_under_a_set_and_a_fifth`).
    pub const BYTES: u64 = ((PAGES + PAGES / 5) * STRIDE) as u64;

    /// An empty set, its memory mapped lazily: in huge pages if `huge`, else in 4 KiB pages.
    /// First touched memory is slow on this machine's virtual machine, and slower in huge pages
    /// (4 GiB written a byte per 4 KiB took 5.5 to 9 system seconds advised into huge pages
    /// against 2 without, measured with a small C program); a pass's reads stay within a few
    /// 60 KB pages at a time, which the TLB covers either way, but a deep phase-1 search's
    /// inserts land anywhere. A run writes its set over once ([`Pages::commit`]) before it
    /// grows, and a process that solves several cosets clears and reuses it.
    pub fn new(huge: bool) -> io::Result<Self> {
        let memory = MmapMut::map_anon(Self::FRAMES * STRIDE)?;
        #[cfg(target_os = "linux")]
        if huge {
            let _ = memory.advise(memmap2::Advice::HugePage);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = huge;
        Ok(Pages {
            memory,
            frame: (0..PAGES as u32).collect(),
            counts: vec![0; PAGES],
            free: (PAGES as u32..Self::FRAMES as u32).rev().collect(),
        })
    }

    /// Makes the set empty, keeping its memory mapped.
    pub fn clear(&mut self) {
        let memory = FrameMemory::of(&mut self.memory);
        self.frame.par_iter().zip(self.counts.par_iter_mut()).for_each(|(&frame, count)| {
            if *count != 0 {
                // SAFETY: each page has its own frame.
                let page = unsafe { memory.frame_mut(frame) };
                page[..PAGE_BYTES].fill(0);
                *count = 0;
            }
        });
    }

    /// Maps the set's frames, in parallel, by writing a byte of every 4 KiB (the byte it holds).
    /// Memory first read maps a shared page of zeros, which the first write then copies and
    /// flushes from every core's TLB (a costly interrupt on a virtual machine): a set about to
    /// grow is cheaper written over once, before anything reads it. (A pass writes the frames it
    /// takes before it reads them.)
    pub fn commit(&mut self) {
        let memory = FrameMemory::of(&mut self.memory);
        self.frame.par_iter().zip(self.counts.par_iter()).for_each(|(&frame, &count)| {
            // SAFETY: each page has its own frame.
            let page = unsafe { memory.frame_mut(frame) };
            for byte in page.iter_mut().step_by(4096) {
                if count == 0 {
                    *byte = 0;
                } else {
                    // An atomic OR of nothing: one write, so no page of zeros is mapped first.
                    // SAFETY: a valid, exclusively borrowed byte, aligned as every u8 is.
                    unsafe { AtomicU8::from_ptr(byte) }.fetch_or(0, Ordering::Relaxed);
                }
            }
        });
    }

    /// Adds to the set every element times each of H's moves, in place: element by element
    /// while it holds at most `sparse_limit` elements (cheaper than a pass over every page),
    /// else by a pass.
    pub fn extend(&mut self, layout: &Layout, sparse_limit: u64) {
        if self.count() <= sparse_limit {
            self.extend_sparse(layout);
        } else {
            self.extend_dense(layout);
        }
    }

    /// [`Pages::extend`] element by element.
    fn extend_sparse(&mut self, layout: &Layout) {
        // The elements first, page by page: the set grows in place.
        let elements: Vec<(u16, u32)> = (0..PAGES)
            .into_par_iter()
            .filter(|&p| self.counts[p] != 0)
            .flat_map_iter(|p| indices(self.page(p), true).map(move |i| (p as u16, i)))
            .collect();
        // Then their products with the moves, a few hundred at a time so that the inserts'
        // prefetches stay in cache; on both threads, since the first elements of a set fault
        // in most of its memory.
        self.fill(|set| {
            elements.par_chunks(SPARSE_CHUNK).for_each_init(Vec::new, |places, chunk| {
                places.clear();
                places.extend(chunk.iter().flat_map(|&(p, i)| (0..10).map(move |k| layout.moved(p, i, k))));
                set.insert(places);
            })
        });
    }

    /// [`Pages::extend`] by a pass: each page of the new set made from its own page and its ten
    /// neighbours in the old one, orbit by orbit in the layout's pass order, into a free frame.
    /// An old page's frame is freed once the pages made from it are made. Pages whose sources
    /// are all empty or all full, and groups full in the old set, are written without reading
    /// the rest.
    fn extend_dense(&mut self, layout: &Layout) {
        let memory = FrameMemory::of(&mut self.memory);
        let (old_frame, old_counts) = (&self.frame, &self.counts);
        let readers: Vec<AtomicU8> = layout.readers.iter().map(|&r| AtomicU8::new(r)).collect();
        let new_frame: Vec<AtomicU32> = (0..PAGES).map(|_| AtomicU32::new(u32::MAX)).collect();
        let new_counts: Vec<AtomicU32> = (0..PAGES).map(|_| AtomicU32::new(0)).collect();
        let free = Mutex::new(std::mem::take(&mut self.free));
        let taken = AtomicUsize::new(0);
        let threads = rayon::current_num_threads();
        // SAFETY (every `frame` and `frame_mut` below): an old page's frame is read only while
        // pages made from it are being made, and freed (so written again) only after; a frame
        // taken from the free list belongs to the page it is taken for alone.
        // An empty page is read as the page of zeros, not from its frame: memory never written
        // would map the kernel's shared page of zeros, whose copy at the frame's next write
        // flushes every core's TLB (see [`Pages::commit`]).
        let old = |q: u16| match old_counts[q as usize] {
            0 => &ZEROS[..],
            _ => unsafe { memory.frame(old_frame[q as usize]) },
        };
        rayon::broadcast(|_| {
            let mut done = Vec::new();
            loop {
                let i = taken.fetch_add(1, Ordering::Relaxed);
                let Some(&orbit) = layout.pass_order.get(i) else { break };
                let pages = orbit as usize * ORBIT..(orbit as usize + 1) * ORBIT;
                let frames: [u32; ORBIT] = {
                    let mut free = free.lock().unwrap_or_else(|e| e.into_inner());
                    std::array::from_fn(|_| free.pop().expect("free frames for a pass"))
                };
                for (p, &frame) in pages.clone().zip(&frames) {
                    let dst = unsafe { memory.frame_mut(frame) };
                    let from = &layout.neighbours[p];
                    let all = |n: u32| from.iter().all(|&q| old_counts[q as usize] == n);
                    let count = if old_counts[p] == PAGE_BITS || all(PAGE_BITS) {
                        // A set grows: what was full stays full.
                        dst[..PAGE_BYTES].fill(u8::MAX);
                        PAGE_BITS
                    } else if old_counts[p] == 0 && all(0) {
                        dst[..PAGE_BYTES].fill(0);
                        0
                    } else {
                        // The page this thread likely makes next: the orbit's next, or the
                        // first of the orbit a turn of every thread on.
                        let next = match p + 1 {
                            n if n < pages.end => n,
                            _ => layout.pass_order.get(i + threads).map_or(p, |&o| o as usize * ORBIT),
                        };
                        let ahead = layout
                            .kernel
                            .gathered()
                            .map(|k| memory.address(old_frame[layout.neighbours[next][k] as usize]));
                        extend_page(
                            dst,
                            &from.map(old),
                            old(p as u16),
                            &layout.kernel,
                            layout.page_odd[p],
                            ahead,
                        )
                    };
                    new_frame[p].store(frame, Ordering::Relaxed);
                    new_counts[p].store(count, Ordering::Relaxed);
                }
                done.clear();
                for p in pages {
                    for q in std::iter::once(p as u16).chain(layout.neighbours[p]) {
                        if readers[q as usize].fetch_sub(1, Ordering::AcqRel) == 1 {
                            done.push(old_frame[q as usize]);
                        }
                    }
                }
                free.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(&done);
            }
        });
        self.free = free.into_inner().unwrap_or_else(|e| e.into_inner());
        self.frame = new_frame.into_iter().map(AtomicU32::into_inner).collect();
        self.counts = new_counts.into_iter().map(AtomicU32::into_inner).collect();
    }

    /// Elements in the set.
    pub fn count(&self) -> u64 {
        self.counts.iter().map(|&c| c as u64).sum()
    }

    /// The bytes of page `p`.
    fn page(&self, p: usize) -> &[u8] {
        let at = self.frame[p] as usize * STRIDE;
        &self.memory[at..at + STRIDE]
    }

    fn page_mut(&mut self, p: usize) -> &mut [u8] {
        let at = self.frame[p] as usize * STRIDE;
        &mut self.memory[at..at + STRIDE]
    }

    /// Runs `f` with a view through which several threads add elements at once, then
    /// recounts the pages they added to.
    pub fn fill<R>(&mut self, f: impl FnOnce(&SharedPages) -> R) -> R {
        let touched: Vec<AtomicBool> = (0..PAGES).map(|_| AtomicBool::new(false)).collect();
        let bytes: &mut [u8] = &mut self.memory;
        // SAFETY: the exclusive borrow is turned into a shared atomic view of the same memory
        // for the view's lifetime (AtomicU8 has u8's layout), so no other access exists
        // meanwhile.
        let bits = unsafe { std::slice::from_raw_parts(bytes.as_mut_ptr() as *const AtomicU8, bytes.len()) };
        let result = f(&SharedPages { bits, frame: &self.frame, touched: &touched });
        let (memory, frame) = (&self.memory, &self.frame);
        self.counts.par_iter_mut().zip(touched.par_iter()).enumerate().for_each(|(p, (c, t))| {
            if t.load(Ordering::Relaxed) {
                let at = frame[p] as usize * STRIDE;
                *c = count_page(&memory[at..at + STRIDE]);
            }
        });
        result
    }

    /// Adds elements given by their places; returns how many were new.
    pub fn insert(&mut self, places: &[Place]) -> u64 {
        let mut new = 0;
        for p in places {
            let mask = 1u8 << p.bit;
            let byte = &mut self.page_mut(p.page as usize)[p.byte as usize];
            if *byte & mask == 0 {
                *byte |= mask;
                self.counts[p.page as usize] += 1;
                new += 1;
            }
        }
        new
    }

    /// Whether an element is in the set.
    pub fn contains(&self, p: Place) -> bool {
        self.page(p.page as usize)[p.byte as usize] >> p.bit & 1 == 1
    }

    /// Recounts every page (for a caller that wrote bits directly).
    #[cfg(test)]
    fn recount(&mut self) {
        let counts: Vec<u32> = (0..PAGES).into_par_iter().map(|p| count_page(self.page(p))).collect();
        self.counts = counts;
    }

    /// Calls `f` with the index (page x 483,840 + bit) of every element of H not in the set, in
    /// index order ([`Layout::element`] makes the element).
    pub fn for_each_missing(&self, mut f: impl FnMut(u64)) {
        for p in 0..PAGES {
            if self.counts[p] == PAGE_BITS {
                continue;
            }
            for i in indices(self.page(p), false) {
                f(p as u64 * PAGE_BITS as u64 + i as u64);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::{Cube, SplitMix64};
    use std::collections::HashSet;

    fn random_element(layout: &Layout, rng: &mut SplitMix64) -> Cube {
        let mut y = Cube::SOLVED;
        for _ in 0..40 {
            y = y.compose(layout.moves()[rng.below(10) as usize].cube());
        }
        y
    }

    #[test]
    fn places_and_elements_round_trip() {
        let layout = Layout::new();
        let mut rng = SplitMix64::new(7);
        let mut seen = HashSet::new();
        for _ in 0..3000 {
            let y = random_element(&layout, &mut rng);
            let p = layout.place(&y);
            assert!((p.byte as usize) < PAGE_BYTES);
            let index = 8 * p.byte as u32 + p.bit as u32;
            assert_eq!(layout.element(p.page, index), y);
            seen.insert((p.page, p.byte, p.bit));
        }
        // Every bit of a page is an element: the page's bits are a bijection.
        for index in (0..PAGE_BITS).step_by(997) {
            let y = layout.element(123, index);
            let p = layout.place(&y);
            assert_eq!((p.page, 8 * p.byte as u32 + p.bit as u32), (123, index));
        }
        assert!(seen.len() > 2900);
    }

    #[test]
    fn moving_a_place_is_moving_its_element() {
        let layout = Layout::new();
        let mut rng = SplitMix64::new(3);
        for _ in 0..3000 {
            let y = random_element(&layout, &mut rng);
            let p = layout.place(&y);
            let index = 8 * p.byte as u32 + p.bit as u32;
            for (k, m) in layout.moves().iter().enumerate() {
                assert_eq!(layout.moved(p.page, index, k), layout.place(&y.compose(m.cube())));
            }
        }
    }

    #[test]
    fn a_pass_is_every_element_times_every_move() {
        let layout = Layout::new();
        let mut rng = SplitMix64::new(11);
        let elements: Vec<Cube> = (0..2000).map(|_| random_element(&layout, &mut rng)).collect();
        let mut source = Pages::new(false).unwrap();
        source.insert(&elements.iter().map(|y| layout.place(y)).collect::<Vec<_>>());
        let mut expected: HashSet<Cube> =
            elements.iter().flat_map(|y| layout.moves().map(|m| y.compose(m.cube()))).collect();
        expected.extend(&elements);
        // By a pass, and element by element: the same set.
        let mut sparse = Pages::new(false).unwrap();
        sparse.insert(&elements.iter().map(|y| layout.place(y)).collect::<Vec<_>>());
        source.extend(&layout, 0);
        sparse.extend(&layout, u64::MAX);
        for set in [&source, &sparse] {
            assert_eq!(set.count(), expected.len() as u64);
            assert!(expected.iter().all(|y| set.contains(layout.place(y))));
        }
    }

    /// Passes free the old set's frames as they go: after several, the set's pages still have a
    /// frame each and no frame past a set and a fifth was ever taken (the mapping has room for
    /// two).
    #[test]
    fn passes_hold_under_a_set_and_a_fifth() {
        let layout = Layout::new();
        let mut rng = SplitMix64::new(13);
        let mut set = Pages::new(false).unwrap();
        set.commit();
        let elements: Vec<Place> =
            (0..200_000).map(|_| layout.place(&random_element(&layout, &mut rng))).collect();
        set.insert(&elements);
        let mut counts = vec![set.count()];
        for _ in 0..3 {
            set.extend(&layout, 0);
            counts.push(set.count());
        }
        assert!(counts.windows(2).all(|w| w[0] < w[1]), "{counts:?}");
        let mut frames = set.frame.clone();
        frames.sort_unstable();
        frames.dedup();
        assert_eq!(frames.len(), PAGES);
        assert_eq!(frames.len() + set.free.len(), Pages::FRAMES);
        // The free list hands out the most recently freed frames first and fresh ones from the
        // end of its first order (the highest first): frames past a set and a fifth were never
        // taken if they are still where they started.
        let limit = (Pages::BYTES / STRIDE as u64) as usize;
        let fresh: Vec<u32> = (limit as u32..Pages::FRAMES as u32).rev().collect();
        assert!(set.free.starts_with(&fresh), "frames past a set and a fifth were taken");
        // One thread's pass in the layout's order holds 1.18 sets at most.
        let peak = single_thread_peak(&layout);
        assert!(peak as f64 <= 1.18 * PAGES as f64, "{peak}");
    }

    /// Pages held at once by a pass that makes the orbits one at a time in the layout's order.
    fn single_thread_peak(layout: &Layout) -> usize {
        let mut readers = layout.readers.clone();
        let (mut made, mut freed, mut peak) = (0, 0, 0);
        for &o in &layout.pass_order {
            made += ORBIT;
            peak = peak.max(PAGES - freed + made);
            for p in o as usize * ORBIT..(o as usize + 1) * ORBIT {
                for q in std::iter::once(p as u16).chain(layout.neighbours[p]) {
                    readers[q as usize] -= 1;
                    freed += (readers[q as usize] == 0) as usize;
                }
            }
        }
        assert_eq!(freed, PAGES);
        peak
    }

    /// The vector kernel against the scalar one on dense random pages, groups full and not.
    #[test]
    fn both_pass_kernels_write_the_same_bytes() {
        let vector = Layout::new().kernel;
        let scalar = vector.scalar();
        if !vector.is_vector() {
            eprintln!("no AVX-512 here: only the scalar kernel runs");
            return;
        }
        let mut rng = SplitMix64::new(5);
        let mut random_page = || {
            let mut page = vec![0u8; STRIDE];
            for (i, byte) in page[..PAGE_BYTES].iter_mut().enumerate() {
                // Runs of full groups, and sparse and dense bytes.
                *byte = match (i / 96) % 3 {
                    0 => u8::MAX,
                    1 => rng.below(256) as u8 & rng.below(256) as u8,
                    _ => rng.below(256) as u8 | rng.below(256) as u8,
                };
            }
            page
        };
        let pages: Vec<Vec<u8>> = (0..16).map(|_| random_page()).collect();
        let mut sparse = random_page();
        sparse.iter_mut().for_each(|b| *b &= 0x11);
        for round in 0..16 {
            let src: [&[u8]; 10] = std::array::from_fn(|k| &pages[(round + 3 * k) % 16][..]);
            let own: &[u8] = if round % 2 == 0 { &pages[round] } else { &sparse };
            let (mut a, mut b) = (vec![0u8; STRIDE], vec![0u8; STRIDE]);
            for odd in [false, true] {
                let ahead = std::array::from_fn(|k| src[k].as_ptr());
                let count = extend_page(&mut a, &src, own, &vector, odd, ahead);
                extend_page(&mut b, &src, own, &scalar, odd, ahead);
                assert!(a == b, "the kernels' bytes differ");
                assert_eq!(count, count_page(&b));
            }
        }
    }

    #[test]
    fn missing_elements_are_listed_by_index() {
        let layout = Layout::new();
        let mut pages = Pages::new(false).unwrap();
        for p in 0..PAGES {
            pages.page_mut(p)[..PAGE_BYTES].fill(u8::MAX);
        }
        pages.recount();
        let holes = [(5u16, 0u32), (5, 483_839), (40_000, 77)];
        for &(page, index) in &holes {
            let p = layout.place(&layout.element(page, index));
            pages.page_mut(p.page as usize)[p.byte as usize] &= !(1 << p.bit);
        }
        pages.recount();
        let mut listed = Vec::new();
        pages.for_each_missing(|i| listed.push(i));
        let expected: Vec<u64> = holes.iter().map(|&(p, i)| p as u64 * PAGE_BITS as u64 + i as u64).collect();
        assert_eq!(listed, expected);
        assert_eq!(pages.count(), PAGES as u64 * PAGE_BITS as u64 - 3);
        // A pass over full pages makes full pages without reading them.
        let before = pages.count();
        pages.extend_dense(&layout);
        assert!(pages.count() > before);
    }
}
