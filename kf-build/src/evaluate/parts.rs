//! Fixed parts of a buffer's scalars, so the host work on large buffers (generating inputs,
//! poisoning outputs, comparing, counting traffic) runs on every core.
//!
//! At production shapes a buffer holds tens of millions of scalars, and one evaluation generates,
//! compares and scans several such buffers per seed and shape; done one scalar at a time on one
//! core, that host work took seconds while the GPU work took milliseconds. A buffer is split into
//! its header and runs of [`PART_ELEMENTS`] array elements; each part is worked on independently
//! and the per-part results are merged in part order.
//!
//! Invariant: the parts depend only on the layout and the length, never on the number of threads,
//! so whatever is computed per part and merged in order (a part's random stream, the first
//! mismatches, a sum) is the same on every machine.

use kf_runtime::interface::{BufferLayout, Field, Scalar};
use std::ops::Range;

/// Array elements per part: large enough that a part's setup (a random stream, partial sums)
/// costs nothing next to its work, small enough that a buffer of a few MiB still spreads over
/// the cores.
pub const PART_ELEMENTS: u64 = 1 << 15;

/// One part of a buffer's scalars.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// The fields before the array (a struct's header, a uniform's fields).
    Header,
    /// A run of array elements, the `k`-th of the buffer (counting from 0).
    Elements {
        /// Which run.
        k: u64,
        /// The element indices.
        range: Range<u64>,
    },
}

/// The parts of a buffer laid out as `layout` with `len` array elements, in address order:
/// the header (if it has fields), then the runs of elements.
pub fn parts(layout: &BufferLayout, len: u64) -> Vec<Part> {
    let mut out = Vec::new();
    if !layout.header.is_empty() {
        out.push(Part::Header);
    }
    if let Some(a) = &layout.array {
        let n = a.count.map_or(len, u64::from);
        out.extend((0..n.div_ceil(PART_ELEMENTS)).map(|k| Part::Elements {
            k,
            range: k * PART_ELEMENTS..((k + 1) * PART_ELEMENTS).min(n),
        }));
    }
    out
}

impl Part {
    /// The part's scalars as `(byte offset in the buffer, scalar)`, in address order: the
    /// same items [`BufferLayout::scalars`] yields for them.
    pub fn scalars<'a>(&self, layout: &'a BufferLayout) -> Scalars<'a> {
        let (header, range) = match self {
            Part::Header => (layout.header.as_slice(), 0..0),
            Part::Elements { range, .. } => (&[][..], range.clone()),
        };
        let (fields, stride) = layout
            .array
            .as_ref()
            .map_or((&[][..], 0), |a| (a.fields.as_slice(), u64::from(a.stride)));
        Scalars {
            header: header.iter(),
            fields,
            field: 0,
            at: u64::from(layout.header_size) + range.start * stride,
            stride,
            left: if fields.is_empty() {
                0
            } else {
                range.end - range.start
            },
        }
    }

    /// The index, among all the buffer's scalars, of the part's first scalar.
    pub fn first_index(&self, layout: &BufferLayout) -> u64 {
        match (self, &layout.array) {
            (Part::Elements { range, .. }, Some(a)) => {
                layout.header.len() as u64 + range.start * a.fields.len() as u64
            }
            _ => 0,
        }
    }
}

/// The scalars of a [`Part`] (a plain loop over elements and fields: this runs once per scalar
/// of buffers of tens of millions).
pub struct Scalars<'a> {
    header: std::slice::Iter<'a, Field>,
    fields: &'a [Field],
    /// The next field of the current element.
    field: usize,
    /// The current element's byte offset.
    at: u64,
    stride: u64,
    /// Elements left, the current one included.
    left: u64,
}

impl Iterator for Scalars<'_> {
    type Item = (u64, Scalar);

    #[inline]
    fn next(&mut self) -> Option<(u64, Scalar)> {
        if let Some(f) = self.header.next() {
            return Some((u64::from(f.offset), f.scalar));
        }
        if self.left == 0 {
            return None;
        }
        let f = &self.fields[self.field];
        let item = (self.at + u64::from(f.offset), f.scalar);
        self.field += 1;
        if self.field == self.fields.len() {
            self.field = 0;
            self.at += self.stride;
            self.left -= 1;
        }
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kf_runtime::interface::ArrayLayout;

    fn layout(header: bool, count: Option<u32>) -> BufferLayout {
        BufferLayout {
            header: if header {
                vec![
                    Field {
                        offset: 0,
                        scalar: Scalar::U32,
                    },
                    Field {
                        offset: 4,
                        scalar: Scalar::F32,
                    },
                ]
            } else {
                vec![]
            },
            header_size: if header { 16 } else { 0 },
            array: Some(ArrayLayout {
                stride: 8,
                fields: vec![
                    Field {
                        offset: 0,
                        scalar: Scalar::F32,
                    },
                    Field {
                        offset: 4,
                        scalar: Scalar::F16,
                    },
                ],
                count,
            }),
        }
    }

    #[test]
    fn parts_cover_every_scalar_once_in_order() {
        for l in [
            layout(true, None),
            layout(false, None),
            layout(true, Some(7)),
        ] {
            for len in [
                0,
                1,
                PART_ELEMENTS - 1,
                PART_ELEMENTS,
                2 * PART_ELEMENTS + 3,
            ] {
                let all: Vec<_> = l.scalars(len).collect();
                let ps = parts(&l, len);
                let joined: Vec<_> = ps.iter().flat_map(|p| p.scalars(&l)).collect();
                assert_eq!(joined, all, "len {len}");
                // Each part's first index is where its scalars start in the whole sequence.
                let mut at = 0;
                for p in &ps {
                    assert_eq!(p.first_index(&l), at);
                    at += p.scalars(&l).count() as u64;
                }
            }
        }
    }

    #[test]
    fn runs_are_numbered_and_sized_by_the_length_alone() {
        let ps = parts(&layout(false, None), 2 * PART_ELEMENTS + 3);
        assert_eq!(
            ps,
            vec![
                Part::Elements {
                    k: 0,
                    range: 0..PART_ELEMENTS
                },
                Part::Elements {
                    k: 1,
                    range: PART_ELEMENTS..2 * PART_ELEMENTS
                },
                Part::Elements {
                    k: 2,
                    range: 2 * PART_ELEMENTS..2 * PART_ELEMENTS + 3
                },
            ]
        );
        let fixed = parts(&layout(true, Some(3)), 1 << 40);
        assert_eq!(fixed.len(), 2, "a fixed-size array ignores the length");
    }
}
