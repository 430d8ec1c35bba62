//! Text edits at the spans naga reports, and one-token reads of the source around them.
//!
//! Operators never regenerate WGSL with naga's writer (it is not a faithful round trip once
//! overrides are involved); they splice the user's text at byte ranges naga gave them. The only
//! lexing here is skipping whitespace and comments from a position naga reported, and reading the
//! token that starts there, so a rewrite never depends on a text search.
//!
//! The edited text becomes a checked rewrite in `operators::finish`, which re-parses and
//! re-validates it and checks its interface against the baseline's bind groups.

use std::ops::Range;

/// Replace `range` of the source with `text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    /// Byte range in the source.
    pub range: Range<usize>,
    /// Replacement.
    pub text: String,
}

impl Edit {
    /// An edit replacing `range` with `text`.
    pub fn new(range: Range<usize>, text: impl Into<String>) -> Self {
        Edit {
            range,
            text: text.into(),
        }
    }

    /// An insertion at `at`.
    pub fn insert(at: usize, text: impl Into<String>) -> Self {
        Edit::new(at..at, text)
    }
}

/// Applies `edits` to `src`, or `None` when two of them overlap or one is out of bounds.
/// Insertions at the same position keep their order.
pub fn apply(src: &str, edits: &[Edit]) -> Option<String> {
    let mut order: Vec<&Edit> = edits.iter().collect();
    order.sort_by_key(|e| (e.range.start, e.range.end));
    let mut out = String::with_capacity(src.len() + 256);
    let mut at = 0;
    for e in order {
        if e.range.start < at || e.range.end > src.len() || e.range.start > e.range.end {
            return None;
        }
        out.push_str(src.get(at..e.range.start)?);
        out.push_str(&e.text);
        at = e.range.end;
    }
    out.push_str(src.get(at..)?);
    Some(out)
}

/// Applies `edits` to the sub-range `range` of `src` (edits outside it are ignored), returning the
/// edited text of that range: how a loop body is copied with its counter substituted.
pub fn apply_within(src: &str, range: Range<usize>, edits: &[Edit]) -> Option<String> {
    let inside: Vec<Edit> = edits
        .iter()
        .filter(|e| e.range.start >= range.start && e.range.end <= range.end)
        .map(|e| {
            Edit::new(
                e.range.start - range.start..e.range.end - range.start,
                &e.text,
            )
        })
        .collect();
    apply(src.get(range)?, &inside)
}

/// The byte range of a naga span, if it has one.
pub fn range(span: naga::Span) -> Option<Range<usize>> {
    span.to_range()
}

/// Position of the first byte at or after `pos` that is neither whitespace nor inside a comment.
pub fn skip_trivia(src: &str, mut pos: usize) -> usize {
    let b = src.as_bytes();
    loop {
        while pos < b.len() && b[pos].is_ascii_whitespace() {
            pos += 1;
        }
        if pos >= b.len() {
            return pos;
        }
        if b[pos..].starts_with(b"//") {
            while pos < b.len() && b[pos] != b'\n' {
                pos += 1;
            }
        } else if b[pos..].starts_with(b"/*") {
            let mut depth = 0usize;
            while pos < b.len() {
                if b[pos..].starts_with(b"/*") {
                    depth += 1;
                    pos += 2;
                } else if b[pos..].starts_with(b"*/") {
                    depth -= 1;
                    pos += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    pos += 1;
                }
            }
        } else {
            return pos;
        }
    }
}

/// The token starting at `pos` (after [`skip_trivia`]): an identifier or number, or one byte of
/// punctuation. Empty at the end of the text.
pub fn token_at(src: &str, pos: usize) -> Range<usize> {
    let b = src.as_bytes();
    if pos >= b.len() {
        return pos..pos;
    }
    // Bytes of non-ASCII characters belong to identifiers (WGSL allows Unicode identifiers), so
    // a token never ends inside a character.
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
    if ident(b[pos]) {
        let number = b[pos].is_ascii_digit();
        let mut end = pos;
        // A `.` continues only a number (`1.5`), never an identifier (`dims.k`).
        while end < b.len() && (ident(b[end]) || (number && b[end] == b'.')) {
            end += 1;
        }
        pos..end
    } else {
        pos..pos + 1
    }
}

/// The tokens of `src[range]`, skipping whitespace and comments.
pub fn tokens(src: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut pos = range.start;
    loop {
        pos = skip_trivia(src, pos);
        if pos >= range.end {
            return out;
        }
        let t = token_at(src, pos);
        pos = t.end;
        out.push(t);
    }
}

/// 1-based line of byte `pos`, for messages.
pub fn line_of(src: &str, pos: usize) -> usize {
    src[..pos.min(src.len())].matches('\n').count() + 1
}

/// A WGSL literal of `value` typed like `scalar` (`3u`, `-2i`).
pub fn int_literal(value: i64, signed: bool) -> String {
    if signed {
        format!("{value}i")
    } else {
        format!("{value}u")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_apply_in_order_and_refuse_overlaps() {
        let src = "abcdef";
        let e = [
            Edit::new(4..5, "E"),
            Edit::new(0..1, "A"),
            Edit::insert(2, "+"),
        ];
        assert_eq!(apply(src, &e).as_deref(), Some("Ab+cdEf"));
        assert!(apply(src, &[Edit::new(0..3, "x"), Edit::new(2..4, "y")]).is_none());
        assert_eq!(
            apply_within(src, 1..5, &[Edit::new(2..3, "C"), Edit::new(0..1, "Z")]).as_deref(),
            Some("bCde")
        );
    }

    #[test]
    fn tokens_skip_comments_and_keep_numbers_whole() {
        let src = "var /* a /* nested */ c */ i: u32 = 1.5e3; // tail\n dims.k ünï";
        let t: Vec<&str> = tokens(src, 0..src.len())
            .into_iter()
            .map(|r| &src[r])
            .collect();
        assert_eq!(
            t,
            [
                "var", "i", ":", "u32", "=", "1.5e3", ";", "dims", ".", "k", "ünï"
            ]
        );
    }
}
