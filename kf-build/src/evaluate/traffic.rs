//! The traffic the roofline cap counts: a lower bound of the bytes any correct kernel must move.
//!
//! The cap rejects a candidate whose measured speed would need more bandwidth than the adapter
//! can copy. It is the last line against cheats (the other checks — fresh buffers, poisoned
//! outputs, new inputs, the rerun on reused buffers — catch a kernel that does not do the work),
//! and it must never reject an honest kernel. So it counts only traffic no correct kernel can
//! avoid, never an estimate:
//!
//! - **Outputs count by what the baseline changed.** Before a run an `output` holds the poison
//!   pattern and an `inout` its input values; every scalar whose reference value differs from
//!   that must be written by a correct kernel (or, on a buffer reused from an identical run, at
//!   least read to see that it already holds the answer). Scalars the baseline left as they were
//!   count nothing.
//! - **Inputs count nothing.** A correct kernel may read only part of an input (a gather reads
//!   the rows its indices name, a kernel may ignore a padding region), so no number of input
//!   bytes is a lower bound without knowing the data; counting whole buffers rejected honest
//!   gathers. Scratch and uniforms count nothing either.
//!
//! The measured copy bandwidth counts bytes read plus bytes written, so an honest kernel's bound
//! traffic over its time stays well under it; the evaluator still re-measures the ceiling and
//! re-times the candidate before it calls anything an exceedance.
//!
//! Invariant: [`written_bytes`] never counts more than the bytes whose final value differs from
//! their value before the run.

use super::parts::parts;
use kf_runtime::interface::BufferLayout;
use rayon::prelude::*;

/// Bytes of the scalars of a buffer laid out as `layout` with `len` array elements whose value
/// in `after` differs from their value in `before` (compared bit for bit).
pub fn written_bytes(layout: &BufferLayout, len: u64, before: &[u8], after: &[u8]) -> u64 {
    parts(layout, len)
        .par_iter()
        .map(|part| {
            part.scalars(layout)
                .filter(|&(offset, scalar)| {
                    let range = offset as usize..offset as usize + scalar.size() as usize;
                    match (before.get(range.clone()), after.get(range)) {
                        (Some(b), Some(a)) => a != b,
                        _ => false,
                    }
                })
                .map(|(_, scalar)| u64::from(scalar.size()))
                .sum::<u64>()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kf_runtime::interface::{ArrayLayout, Field, Scalar};

    fn floats() -> BufferLayout {
        BufferLayout {
            header: vec![],
            header_size: 0,
            array: Some(ArrayLayout {
                stride: 8,
                fields: vec![
                    Field {
                        offset: 0,
                        scalar: Scalar::F32,
                    },
                    Field {
                        offset: 4,
                        scalar: Scalar::U32,
                    },
                ],
                count: None,
            }),
        }
    }

    #[test]
    fn counts_only_scalars_that_changed() {
        let before = vec![0xA5u8; 32];
        let mut after = before.clone();
        assert_eq!(written_bytes(&floats(), 4, &before, &after), 0);
        after[0] = 1; // element 0, the f32
        after[13] = 7; // element 1, the u32
        after[14] = 7; // the same u32 again: counted once
        assert_eq!(written_bytes(&floats(), 4, &before, &after), 8);
        // Padding or bytes past the layout never count.
        let mut longer = after.clone();
        longer.extend([1, 2, 3, 4]);
        assert_eq!(written_bytes(&floats(), 4, &before, &longer), 8);
        assert_eq!(written_bytes(&floats(), 2, &before, &after), 8);
        assert_eq!(written_bytes(&floats(), 1, &before, &after), 4);
    }

    #[test]
    fn counts_changes_in_every_part() {
        use crate::evaluate::parts::PART_ELEMENTS;
        let n = 2 * PART_ELEMENTS + 1;
        let before = vec![0u8; 8 * n as usize];
        let mut after = before.clone();
        for element in [0, PART_ELEMENTS, 2 * PART_ELEMENTS] {
            after[8 * element as usize + 4] = 1;
        }
        assert_eq!(written_bytes(&floats(), n, &before, &after), 12);
    }
}
