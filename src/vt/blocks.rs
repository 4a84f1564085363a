//! A queue of plain values kept in fixed-size blocks: the storage of the
//! long-lived rings (the transcript, the history's text, runs and slots).
//!
//! A `VecDeque` that grows by reallocating copies its contents into a new
//! buffer and frees the old one; in a daemon whose sessions live for hours
//! that old buffer stays behind as touched, free memory in the session
//! thread's malloc arena, and the new one has slack. Here growing is
//! allocating one more block and never moves data: what a ring holds costs
//! its length plus at most one partly filled block, and a full ring that
//! drops its oldest block and allocates a new one hands the allocator back
//! the same size it asks for next.

use std::collections::VecDeque;
use std::ops::Range;

/// Bytes per block (a page's worth: the granularity of RSS).
const BLOCK_BYTES: usize = 4096;

#[derive(Clone, Debug)]
pub struct Blocks<T> {
    /// Every block but the last is full.
    blocks: VecDeque<Vec<T>>,
    /// Index in `blocks[0]` of the first item.
    head: usize,
    len: usize,
    /// The last block dropped from the front, emptied, for the next block
    /// the back needs. A full ring drops a block and needs one soon after;
    /// handing it to the allocator and back is a free and a malloc per
    /// block, and musl's mallocng returns a freed page to the kernel at
    /// once, so the next block also costs a page fault (5% of `render`
    /// of plain text in the static build). At most one block more than
    /// the items fill, and only in a ring that dropped one.
    spare: Option<Vec<T>>,
}

impl<T> Default for Blocks<T> {
    fn default() -> Self {
        Blocks {
            blocks: VecDeque::new(),
            head: 0,
            len: 0,
            spare: None,
        }
    }
}

impl<T: Copy> Blocks<T> {
    /// Items per block.
    const PER: usize = if std::mem::size_of::<T>() == 0 || std::mem::size_of::<T>() >= BLOCK_BYTES {
        1
    } else {
        BLOCK_BYTES / std::mem::size_of::<T>()
    };

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Append `items` at the back.
    #[inline]
    pub fn extend_from_slice(&mut self, items: &[T]) {
        if let Some(last) = self.blocks.back_mut() {
            if Self::PER - last.len() >= items.len() {
                last.extend_from_slice(items);
                self.len += items.len();
                return;
            }
        }
        self.extend_across(items);
    }

    /// [`Blocks::extend_from_slice`] where the last block cannot take it all.
    fn extend_across(&mut self, mut items: &[T]) {
        while !items.is_empty() {
            if self.blocks.back().map_or(true, |b| b.len() == Self::PER) {
                self.push_block();
            }
            let Some(last) = self.blocks.back_mut() else {
                return;
            };
            let n = (Self::PER - last.len()).min(items.len());
            last.extend_from_slice(&items[..n]);
            self.len += n;
            items = &items[n..];
        }
    }

    /// Append what `items` yields, written straight into the last block
    /// when it has room for `items.len()`: no intermediate buffer and no
    /// `memcpy` call for a short line (musl's costs some 60 cycles at any
    /// size below a hundred bytes; glibc's a few).
    #[inline]
    pub fn extend_exact<I: ExactSizeIterator<Item = T>>(&mut self, items: I) {
        let mut items = items;
        let mut left = items.len();
        while left > 0 {
            if self.blocks.back().map_or(true, |b| b.len() == Self::PER) {
                self.push_block();
            }
            let Some(last) = self.blocks.back_mut() else {
                return;
            };
            let before = last.len();
            if Self::PER - before >= left {
                last.extend(items);
                self.len += last.len() - before;
                return;
            }
            last.extend(items.by_ref().take(Self::PER - before));
            let n = last.len() - before;
            if n == 0 {
                return;
            }
            self.len += n;
            left -= n;
        }
    }

    #[inline]
    pub fn push(&mut self, item: T) {
        if self.blocks.back().map_or(true, |b| b.len() == Self::PER) {
            self.push_block();
        }
        if let Some(last) = self.blocks.back_mut() {
            last.push(item);
            self.len += 1;
        }
    }

    /// Drop the oldest `n` items (all of them if there are fewer).
    #[inline]
    pub fn drop_front(&mut self, n: usize) {
        if n < self.len && self.head + n < Self::PER {
            self.len -= n;
            self.head += n;
            return;
        }
        if n > 0 {
            self.drop_front_across(n);
        }
    }

    /// [`Blocks::drop_front`] where the first block empties.
    fn drop_front_across(&mut self, n: usize) {
        let n = n.min(self.len);
        self.len -= n;
        self.head += n;
        if self.len == 0 {
            // Keep one block for what comes next.
            self.blocks.truncate(1);
            if let Some(b) = self.blocks.front_mut() {
                b.clear();
            }
            self.head = 0;
            return;
        }
        // Only the last block can be partly filled, and it holds items.
        while self.head >= Self::PER {
            if let Some(mut b) = self.blocks.pop_front() {
                if self.spare.is_none() {
                    b.clear();
                    self.spare = Some(b);
                }
            }
            self.head -= Self::PER;
        }
    }

    /// A new, empty last block: the spare if there is one.
    fn push_block(&mut self) {
        let b = self
            .spare
            .take()
            .unwrap_or_else(|| Vec::with_capacity(Self::PER));
        self.blocks.push_back(b);
    }

    /// Drop the newest `n` items (all of them if there are fewer).
    pub fn truncate_back(&mut self, n: usize) {
        let mut n = n.min(self.len);
        if n == self.len {
            self.drop_front(n);
            return;
        }
        self.len -= n;
        while n > 0 {
            let Some(last) = self.blocks.back_mut() else {
                return;
            };
            let k = n.min(last.len());
            last.truncate(last.len() - k);
            n -= k;
            if last.is_empty() {
                self.blocks.pop_back();
            }
        }
    }

    /// Block and index of item `i` (which must be below `len`).
    #[inline]
    fn locate(&self, i: usize) -> (usize, usize) {
        let at = self.head + i;
        (at / Self::PER, at % Self::PER)
    }

    #[inline]
    pub fn get(&self, i: usize) -> Option<T> {
        if i >= self.len {
            return None;
        }
        let (b, k) = self.locate(i);
        self.blocks.get(b)?.get(k).copied()
    }

    /// Append items `range` (clamped to what is held) to `out`.
    pub fn copy_to(&self, range: Range<usize>, out: &mut Vec<T>) {
        let end = range.end.min(self.len);
        let mut i = range.start.min(end);
        while i < end {
            let (b, k) = self.locate(i);
            let Some(block) = self.blocks.get(b) else {
                return;
            };
            let n = (block.len() - k).min(end - i);
            out.extend_from_slice(&block[k..k + n]);
            i += n;
        }
    }

    /// Items `range` (clamped to what is held) as slices, oldest first.
    pub fn slices(&self, range: Range<usize>) -> impl Iterator<Item = &[T]> + '_ {
        let end = range.end.min(self.len);
        let mut i = range.start.min(end);
        std::iter::from_fn(move || {
            if i >= end {
                return None;
            }
            let (b, k) = self.locate(i);
            let block = self.blocks.get(b)?;
            let n = (block.len() - k).min(end - i);
            i += n;
            Some(&block[k..k + n])
        })
    }

    /// Items `range` as a new `Vec` of exactly that length.
    pub fn to_vec(&self, range: Range<usize>) -> Vec<T> {
        let mut v = Vec::with_capacity(range.len());
        self.copy_to(range, &mut v);
        v
    }

    /// Heap bytes held: the blocks and the table of blocks.
    pub fn heap_bytes(&self) -> usize {
        (self.blocks.len() + usize::from(self.spare.is_some()))
            * Self::PER
            * std::mem::size_of::<T>()
            + self.blocks.capacity() * std::mem::size_of::<Vec<T>>()
    }
}

#[cfg(test)]
mod tests {
    use super::Blocks;

    /// The same operations on a `VecDeque`, compared after each step.
    #[test]
    fn behaves_like_a_deque() {
        let mut b = Blocks::<u32>::default();
        let mut d = std::collections::VecDeque::new();
        let mut next = 0u32;
        let mut rng = 12345u64;
        for step in 0..20_000 {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1);
            let r = (rng >> 33) as usize;
            match r % 4 {
                0 | 1 => {
                    let items: Vec<u32> = (0..r % 3000).map(|k| next + k as u32).collect();
                    next += items.len() as u32;
                    if r % 8 < 4 {
                        b.extend_from_slice(&items);
                    } else {
                        b.extend_exact(items.iter().copied());
                    }
                    d.extend(items);
                }
                2 => {
                    let n = (r / 4) % 2500;
                    b.drop_front(n);
                    d.drain(..n.min(d.len()));
                }
                _ => {
                    let n = (r / 4) % 700;
                    b.truncate_back(n);
                    d.truncate(d.len().saturating_sub(n));
                }
            }
            assert_eq!(b.len(), d.len(), "step {step}");
            let lo = (r / 7) % (d.len() + 1);
            let hi = (lo + r / 11 % 5000).min(d.len());
            let want: Vec<u32> = d.range(lo..hi).copied().collect();
            assert_eq!(b.to_vec(lo..hi), want, "step {step}");
            assert_eq!(
                b.slices(lo..hi).collect::<Vec<_>>().concat(),
                want,
                "step {step}"
            );
            assert_eq!(b.get(lo), d.get(lo).copied());
            // Never more than one block beyond what the items fill (the
            // first and last may be partly used), and one spare.
            let per = 4096 / 4;
            let most = d.len().div_ceil(per) + 1;
            assert!(b.spare.as_ref().map_or(true, Vec::is_empty));
            assert!(
                b.blocks.len() <= most.max(1),
                "step {step}: {} blocks for {} items",
                b.blocks.len(),
                d.len()
            );
        }
    }
}
