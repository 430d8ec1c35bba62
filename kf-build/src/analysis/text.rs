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

/// One replacement of the WGSL text: `range` (empty for an insertion) becomes `text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    /// The bytes replaced.
    pub range: Range<usize>,
    /// The new text.
    pub text: String,
}

impl Edit {
    /// Replaces `range` with `text`.
    pub fn replace(range: Range<usize>, text: impl Into<String>) -> Self {
        Edit {
            range,
            text: text.into(),
        }
    }

    /// Inserts `text` at `at`.
    pub fn insert(at: usize, text: impl Into<String>) -> Self {
        Edit::replace(at..at, text)
    }
}

/// Applies `edits` to `src`. Insertions at the same position keep their order in `edits`; an
/// insertion at the start or end of a replaced range stays outside it. Returns `None` when two
/// replacements overlap or a range is out of bounds or not on character boundaries.
pub fn apply_edits(src: &str, edits: &[Edit]) -> Option<String> {
    let mut order: Vec<usize> = (0..edits.len()).collect();
    // By start; at one position, insertions before the replacement that starts there.
    order.sort_by_key(|&i| (edits[i].range.start, !edits[i].range.is_empty(), i));
    let mut out = String::with_capacity(src.len() + 256);
    let mut pos = 0;
    for i in order {
        let e = &edits[i];
        // `get` refuses a reversed range, one out of bounds and one off character boundaries.
        if e.range.start < pos || src.get(e.range.clone()).is_none() {
            return None;
        }
        out.push_str(&src[pos..e.range.start]);
        out.push_str(&e.text);
        pos = e.range.end;
    }
    out.push_str(&src[pos..]);
    Some(out)
}

/// Applies `edits` to the sub-range `range` of `src` (edits outside it are ignored), returning the
/// edited text of that range: how a loop body is copied with its counter substituted.
pub fn apply_within(src: &str, range: Range<usize>, edits: &[Edit]) -> Option<String> {
    let inside: Vec<Edit> = edits
        .iter()
        .filter(|e| e.range.start >= range.start && e.range.end <= range.end)
        .map(|e| {
            Edit::replace(
                e.range.start - range.start..e.range.end - range.start,
                &e.text,
            )
        })
        .collect();
    apply_edits(src.get(range)?, &inside)
}

/// The byte range of a naga span, if it has one.
pub fn range(span: naga::Span) -> Option<Range<usize>> {
    span.to_range()
}

/// Where the declaration of a global whose span starts at `decl` writes its type (naga's span of
/// a global ends at its name or its type; this reads on to the `;`), and the type as written with
/// blanks removed (`array<vec4<f32>>`).
pub fn declared_type(code: &str, decl: Range<usize>) -> Option<(Range<usize>, String)> {
    let end = decl.start + code[decl.start..].find(';')?;
    let colon = decl.start + code[decl.start..end].rfind(':')?;
    let ty = &code[colon + 1..end];
    let start = colon + 1 + (ty.len() - ty.trim_start().len());
    let written: String = ty.chars().filter(|c| !c.is_whitespace()).collect();
    Some((start..start + ty.trim().len(), written))
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

/// Where function `name` is declared in comment-blanked `code`: the byte offsets of its `fn`
/// keyword, of its name and of the `(` that opens its parameters. naga records no span for entry
/// points, so the rewrites that edit a signature find it lexically, here: the first `fn` that is
/// a whole word, followed by `name` as a whole word and then `(`.
pub fn fn_declaration(code: &str, name: &str) -> Option<(usize, usize, usize)> {
    let bytes = code.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut search = 0;
    while let Some(rel) = code[search..].find("fn") {
        let at = search + rel;
        search = at + 2;
        if at > 0 && ident(bytes[at - 1]) {
            continue;
        }
        let rest = &code[at + 2..];
        let trimmed = rest.trim_start();
        if rest.len() == trimmed.len() || !trimmed.starts_with(name) {
            continue;
        }
        let name_start = code.len() - trimmed.len();
        let after_name = &trimmed[name.len()..];
        if after_name.bytes().next().is_some_and(ident) {
            continue;
        }
        let open = code.len() - after_name.trim_start().len();
        if bytes.get(open) == Some(&b'(') {
            return Some((at, name_start, open));
        }
    }
    None
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

/// Replaces comments with spaces of the same length, so byte offsets stay valid.
pub fn blank_comments(src: &str) -> String {
    let bytes = src.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    let mut depth = 0usize;
    while i < bytes.len() {
        if depth == 0 && bytes[i..].starts_with(b"//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                out[i] = b' ';
                i += 1;
            }
        } else if bytes[i..].starts_with(b"/*") {
            depth += 1;
            out[i] = b' ';
            out[i + 1] = b' ';
            i += 2;
        } else if depth > 0 && bytes[i..].starts_with(b"*/") {
            depth -= 1;
            out[i] = b' ';
            out[i + 1] = b' ';
            i += 2;
        } else {
            if depth > 0 && bytes[i] != b'\n' {
                out[i] = b' ';
            }
            i += 1;
        }
    }
    // Multi-byte characters inside comments were blanked byte by byte: still valid UTF-8 (all
    // spaces); outside comments they are untouched.
    String::from_utf8(out).unwrap_or_else(|_| src.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_function_is_found_by_its_whole_name_before_its_parameters() {
        let code = "fn mainly() {}\nconst fnmain = 1;\nfn main_2(x: u32) {}\n@compute @workgroup_size(1)\nfn  main (x: u32) {}\n";
        let (at, name, open) = fn_declaration(code, "main").unwrap();
        assert_eq!(&code[at..at + 2], "fn");
        assert_eq!(&code[name..name + 4], "main");
        assert_eq!(&code[open..], "(x: u32) {}\n");
        assert_eq!(fn_declaration(code, "mai"), None);
        assert_eq!(fn_declaration("let fn_main = 1;", "main"), None);
    }

    #[test]
    fn edits_apply_in_order_and_refuse_overlaps() {
        let src = "abcdef";
        let e = [
            Edit::replace(4..5, "E"),
            Edit::replace(0..1, "A"),
            Edit::insert(2, "+"),
        ];
        assert_eq!(apply_edits(src, &e).as_deref(), Some("Ab+cdEf"));
        assert!(apply_edits(src, &[Edit::replace(0..3, "x"), Edit::replace(2..4, "y")]).is_none());
        assert_eq!(
            apply_within(
                src,
                1..5,
                &[Edit::replace(2..3, "C"), Edit::replace(0..1, "Z")]
            )
            .as_deref(),
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
