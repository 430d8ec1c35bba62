//! Equivalent respellings of a kernel, for metamorphic tests of the operators.
//!
//! The canonical form ([`super::canon`]) promises that an operator which fires on a kernel fires on
//! every equivalent spelling of it. These generators write such spellings, running the
//! normalisations in the other direction (`m = max(m, v)` → `if (v > m) { m = v; }`, `x += y` →
//! `x = x + (y)`) and adding what must never matter (comments, parentheses, other names). The
//! operators' unit tests check that the same operators fire on every spelling, and the adapter
//! tests (`tests/it/respell.rs`) that the rewrites of a spelling are still correct, so the module
//! is public.
//!
//! These are text transformations of test inputs, not analysis: they only need to produce valid,
//! equivalent WGSL for the kernels they are given, and every spelling they produce is re-validated
//! by the tests that use it.

/// One way of respelling a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spelling {
    /// A line comment after every statement and a block comment before every loop.
    Comments,
    /// Parentheses around every `let` initializer.
    Parens,
    /// `x op= y;` written out as `x = x op (y);`.
    Compound,
    /// `m = max(m, v);` as `if (v > m) { m = v; }` (and `min` with `<`).
    ExtremumIf,
    /// `m = max(m, v);` as `m = select(m, v, v > m);` (and `min` with `<`).
    ExtremumSelect,
    /// Every `let` and `var` of the entry point renamed.
    Rename,
    /// An arg-reduction's `if (v > m) { m = v; k = i; }` as two `select`s, the index first so
    /// that both tests see the old value: `k = select(k, i, v > m); m = select(m, v, v > m);`.
    ArgSelect,
    /// Every `for (var i = a; c; u) { body }` (without `continue`) as `var i_wN = a; while (c) {
    /// body u; }`, the counter renamed so that loops of one block keep apart.
    While,
    /// Every such `for` as `var i_wN = a; loop { if (!(c)) { break; } body continuing { u; } }`.
    LoopBreak,
    /// Each pair of adjacent one-line declarations (`let`/`var`) that do not name each other
    /// and call no function of the module, swapped.
    Reorder,
    /// Every one-line `let x = v;` as a chain `let x_v = v; let x = x_v;`.
    LetChain,
    /// A uniform struct of two to four members of one scalar type (`struct Dims { n: u32, d: u32 }`)
    /// read as a vector (`var<uniform> dims: vec2<u32>`, `dims.d` → `dims.y`).
    VecUniform,
    /// The first top-level `if (c) { return; }` of the entry point as an `if (!(c)) { .. }`
    /// around the statements after it.
    Guard,
    /// The entry point's body behind a test of a module constant, as templates select a code
    /// path at compile time: `const KF_MODE: u32 = 1u; .. if (KF_MODE == 1u) { body }`.
    ModeConst,
}

impl Spelling {
    /// Every spelling, in a fixed order.
    pub const ALL: [Spelling; 14] = [
        Spelling::VecUniform,
        Spelling::Reorder,
        Spelling::LetChain,
        Spelling::Guard,
        Spelling::While,
        Spelling::LoopBreak,
        Spelling::Comments,
        Spelling::Parens,
        Spelling::Compound,
        Spelling::ExtremumIf,
        Spelling::ExtremumSelect,
        Spelling::ArgSelect,
        Spelling::Rename,
        Spelling::ModeConst,
    ];

    /// A short name for tables.
    pub fn name(self) -> &'static str {
        match self {
            Spelling::Comments => "comments",
            Spelling::Parens => "parens",
            Spelling::Compound => "compound",
            Spelling::ExtremumIf => "max-if",
            Spelling::ExtremumSelect => "max-select",
            Spelling::Rename => "rename",
            Spelling::ArgSelect => "arg-select",
            Spelling::Guard => "guard",
            Spelling::While => "while",
            Spelling::Reorder => "reorder",
            Spelling::VecUniform => "vec-uniform",
            Spelling::LetChain => "let-chain",
            Spelling::LoopBreak => "loop",
            Spelling::ModeConst => "mode-const",
        }
    }

    /// `wgsl` respelled; `entry` names the entry point whose locals [`Spelling::Rename`] renames.
    pub fn apply(self, wgsl: &str, entry: &str) -> String {
        match self {
            Spelling::Comments => map_lines(wgsl, comments),
            Spelling::Parens => map_lines(wgsl, parens),
            Spelling::Compound => map_lines(wgsl, compound),
            Spelling::ExtremumIf => map_lines(wgsl, |l| extremum(l, false)),
            Spelling::ExtremumSelect => map_lines(wgsl, |l| extremum(l, true)),
            Spelling::Rename => rename(wgsl, entry),
            Spelling::ArgSelect => arg_select(wgsl),
            Spelling::Guard => guard(wgsl, entry),
            Spelling::While => for_loops(wgsl, false),
            Spelling::Reorder => reorder(wgsl),
            Spelling::VecUniform => vec_uniform(wgsl),
            Spelling::LetChain => map_lines(wgsl, let_chain),
            Spelling::LoopBreak => for_loops(wgsl, true),
            Spelling::ModeConst => mode_const(wgsl, entry),
        }
    }
}

/// `wgsl` in spelling `s`, or in every spelling in turn for `None`.
pub fn respell(s: Option<Spelling>, wgsl: &str, entry: &str) -> String {
    match s {
        Some(s) => s.apply(wgsl, entry),
        None => all_combined(wgsl, entry),
    }
}

/// The name of [`respell`]'s spelling `s`.
pub fn name(s: Option<Spelling>) -> &'static str {
    s.map_or("all", Spelling::name)
}

/// Every spelling applied in turn.
pub fn all_combined(wgsl: &str, entry: &str) -> String {
    // `ExtremumIf` and `ExtremumSelect` rewrite the same statements: the first wins.
    Spelling::ALL
        .iter()
        .fold(wgsl.to_owned(), |text, s| s.apply(&text, entry))
}

/// Every `for` loop with a counter declared in its header and no `continue` respelled as a
/// `while` (or, with `loop_break`, as a `loop` with a leading break test and a continuing block).
fn for_loops(wgsl: &str, loop_break: bool) -> String {
    use crate::analysis::text::{blank_comments, tokens};
    let mut text = wgsl.to_owned();
    let mut from = 0;
    let mut n = 0;
    loop {
        let code = blank_comments(&text);
        let Some(at) = find_word(&code, "for", from) else {
            return text;
        };
        from = at + 3;
        let Some(open) = code[at + 3..]
            .find(|c: char| !c.is_whitespace())
            .map(|p| at + 3 + p)
        else {
            return text;
        };
        if code.as_bytes()[open] != b'(' {
            continue;
        }
        let Some(close) = crate::analysis::ir::matching(&code, open, b'(', b')') else {
            return text;
        };
        let parts = split_top(&code[open + 1..close], b';');
        let Some(bopen) = code[close + 1..].find('{').map(|p| close + 1 + p) else {
            return text;
        };
        let Some(bclose) = crate::analysis::ir::matching(&code, bopen, b'{', b'}') else {
            return text;
        };
        let [init, cond, update] = parts.as_slice() else {
            continue;
        };
        let Some(decl) = init.trim().strip_prefix("var") else {
            continue;
        };
        let name: String = decl
            .trim_start()
            .chars()
            .take_while(|&c| is_ident(c))
            .collect();
        if name.is_empty()
            || cond.trim().is_empty()
            || update.trim().is_empty()
            || !code[close + 1..bopen].trim().is_empty()
            || find_word(&code[bopen..bclose], "continue", 0).is_some()
        {
            continue;
        }
        let new = format!("{name}_w{n}");
        n += 1;
        // The counter renamed in a range of the text (not after a `.`: a member is not it).
        let renamed = |range: std::ops::Range<usize>| -> String {
            let mut out = String::new();
            let mut pos = range.start;
            let toks = tokens(&text, range.clone());
            for (i, t) in toks.iter().enumerate() {
                let member = i > 0 && text[toks[i - 1].clone()] == *".";
                if text[t.clone()] == *name && !member {
                    out.push_str(&text[pos..t.start]);
                    out.push_str(&new);
                    pos = t.end;
                }
            }
            out.push_str(&text[pos..range.end]);
            out
        };
        let header = |s: &str| {
            let start = open + 1 + code[open + 1..close].find(s).unwrap_or(0);
            start..start + s.len()
        };
        let (init, cond, update) = (
            renamed(header(init.trim())),
            renamed(header(cond.trim())),
            renamed(header(update.trim())),
        );
        let mut body = renamed(bopen + 1..bclose).trim_end().to_owned();
        // A line comment last in the body must not swallow the update.
        if body.rsplit('\n').next().is_some_and(|l| l.contains("//")) {
            body.push('\n');
        }
        let replacement = if loop_break {
            format!(
                "{init}; loop {{ if (!({cond})) {{ break; }}{body} continuing {{ {update}; }} }}"
            )
        } else {
            format!("{init}; while ({cond}) {{{body} {update}; }}")
        };
        text.replace_range(at..bclose + 1, &replacement);
        from = at;
    }
}

/// The first `word` in `code` at or after `from`, as a whole word.
fn find_word(code: &str, word: &str, mut from: usize) -> Option<usize> {
    while let Some(p) = code[from..].find(word) {
        let at = from + p;
        let before = code[..at].chars().next_back().is_none_or(|c| !is_ident(c));
        let after = code[at + word.len()..]
            .chars()
            .next()
            .is_none_or(|c| !is_ident(c));
        if before && after {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// `s` split at the `sep`s outside brackets.
fn split_top(s: &str, sep: u8) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, b) in s.bytes().enumerate() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            _ if b == sep && depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// The name a one-line `let`/`var` declaration declares, if `line` is one.
fn declared(line: &str) -> Option<&str> {
    let t = line.trim();
    let rest = t.strip_prefix("let ").or_else(|| t.strip_prefix("var "))?;
    if !t.ends_with(';') || t.matches(';').count() != 1 || t.contains('{') || t.contains("//") {
        return None;
    }
    let end = rest.find(|c: char| !is_ident(c))?;
    (end > 0).then_some(&rest[..end])
}

/// Whether `text` names `word` as a whole identifier.
fn names(text: &str, word: &str) -> bool {
    find_word(text, word, 0).is_some()
}

fn vec_uniform(wgsl: &str) -> String {
    use crate::analysis::text::{blank_comments, tokens};
    let code = blank_comments(wgsl);
    let mut from = 0;
    while let Some(at) = find_word(&code, "struct", from) {
        from = at + 6;
        let Some(open) = code[at..].find('{').map(|p| at + p) else {
            break;
        };
        let Some(close) = crate::analysis::ir::matching(&code, open, b'{', b'}') else {
            break;
        };
        let name = code[at + 6..open].trim();
        let fields: Vec<(String, String)> = split_top(&code[open + 1..close], b',')
            .into_iter()
            .filter(|f| !f.trim().is_empty())
            .filter_map(|f| {
                let (n, t) = f.split_once(':')?;
                Some((n.trim().to_owned(), t.trim().to_owned()))
            })
            .collect();
        let scalar = fields.first().map(|f| f.1.clone()).unwrap_or_default();
        let plain = ["u32", "i32", "f32"].contains(&scalar.as_str())
            && (2..=4).contains(&fields.len())
            && fields.iter().all(|f| f.1 == scalar && !f.0.contains('@'));
        // The struct's one use: the type of one uniform.
        let uses: Vec<usize> = std::iter::successors(find_word(&code, name, 0), |&p| {
            find_word(&code, name, p + name.len())
        })
        .collect();
        if !plain || uses.len() != 2 {
            continue;
        }
        let before = code[..uses[1]].trim_end();
        let Some(colon) = before.strip_suffix(':') else {
            continue;
        };
        let var: String = colon
            .trim_end()
            .chars()
            .rev()
            .take_while(|&c| is_ident(c))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if !colon.trim_end()[..colon.trim_end().len() - var.len()]
            .trim_end()
            .ends_with("var<uniform>")
        {
            continue;
        }
        // `var.field` → `var.x`, and the type.
        let toks = tokens(wgsl, 0..wgsl.len());
        let mut edits: Vec<(std::ops::Range<usize>, &str)> = Vec::new();
        for w in toks.windows(3) {
            let (v, dot, f) = (
                &wgsl[w[0].clone()],
                &wgsl[w[1].clone()],
                &wgsl[w[2].clone()],
            );
            if v == var
                && dot == "."
                && let Some(i) = fields.iter().position(|x| x.0 == f)
            {
                edits.push((w[2].clone(), ["x", "y", "z", "w"][i]));
            }
        }
        let ty = format!("vec{}<{scalar}>", fields.len());
        edits.push((uses[1]..uses[1] + name.len(), &ty));
        edits.sort_by_key(|e| e.0.start);
        let mut out = String::new();
        let mut pos = 0;
        for (r, t) in edits {
            out.push_str(&wgsl[pos..r.start]);
            out.push_str(t);
            pos = r.end;
        }
        out.push_str(&wgsl[pos..]);
        return out;
    }
    wgsl.to_owned()
}

fn reorder(wgsl: &str) -> String {
    // Functions of the module: a call could have effects whose order matters.
    let fns: Vec<String> = wgsl
        .split("fn ")
        .skip(1)
        .filter_map(|r| {
            let n: String = r
                .trim_start()
                .chars()
                .take_while(|&c| is_ident(c))
                .collect();
            (!n.is_empty()).then_some(n)
        })
        .collect();
    let calls = |line: &str| fns.iter().any(|f| line.contains(&format!("{f}(")));
    let mut lines: Vec<String> = wgsl.split('\n').map(str::to_owned).collect();
    let mut i = 0;
    while i + 1 < lines.len() {
        let (a, b) = (&lines[i], &lines[i + 1]);
        let swap = match (declared(a), declared(b)) {
            (Some(x), Some(y)) => {
                !names(b, x) && !names(a, y) && !calls(a) && !calls(b) && indent(a) == indent(b)
            }
            _ => false,
        };
        if swap {
            lines.swap(i, i + 1);
            i += 2;
        } else {
            i += 1;
        }
    }
    lines.join("\n")
}

fn let_chain(line: &str) -> Option<String> {
    let t = line.trim();
    let name = declared(line)?;
    let rest = t.strip_prefix("let ")?;
    let after = &rest[name.len()..];
    let ws = indent(line);
    Some(format!(
        "{ws}let {name}_v{after}\n{ws}let {name} = {name}_v;"
    ))
}

fn map_lines(wgsl: &str, f: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(wgsl.len() + 256);
    for line in wgsl.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        match f(body) {
            Some(new) => out.push_str(&new),
            None => out.push_str(body),
        }
        out.push_str(nl);
    }
    out
}

fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

fn comments(line: &str) -> Option<String> {
    let t = line.trim();
    if t.starts_with("//") || t.contains("//") {
        return None;
    }
    let loop_head = ["for ", "for(", "while ", "while(", "loop "]
        .iter()
        .any(|k| t.starts_with(k));
    let mut out = line.to_owned();
    if loop_head {
        out = format!("{}/* a loop */ {}", indent(line), t);
    }
    if t.ends_with(';') || t.ends_with('{') {
        out.push_str(" // respelled");
    }
    (out != line).then_some(out)
}

fn parens(line: &str) -> Option<String> {
    let t = line.trim();
    let rest = t.strip_prefix("let ")?;
    let eq = rest.find('=')?;
    let value = rest[eq + 1..].trim().strip_suffix(';')?;
    if value.is_empty() || value.contains(';') {
        return None;
    }
    Some(format!(
        "{}let {} = ({value});",
        indent(line),
        rest[..eq].trim()
    ))
}

fn compound(line: &str) -> Option<String> {
    let t = line.trim();
    let stmt = t.strip_suffix(';')?;
    if stmt.contains(';') || stmt.contains('{') || stmt.starts_with("for") {
        return None;
    }
    for op in ["+", "-", "*", "/"] {
        let pat = format!(" {op}= ");
        if let Some(at) = stmt.find(&pat) {
            let lhs = stmt[..at].trim();
            let rhs = stmt[at + pat.len()..].trim();
            if lhs.contains('=') || lhs.starts_with("let") || lhs.starts_with("var") {
                return None;
            }
            return Some(format!("{}{lhs} = {lhs} {op} ({rhs});", indent(line)));
        }
    }
    None
}

/// `m = max(m, v);` → `if (v > m) { m = v; }` or `m = select(m, v, v > m);`.
fn extremum(line: &str, select: bool) -> Option<String> {
    let t = line.trim();
    let stmt = t.strip_suffix(';')?;
    let eq = stmt.find(" = ")?;
    let name = stmt[..eq].trim();
    if !name.chars().all(|c| c.is_alphanumeric() || c == '_') || name.is_empty() {
        return None;
    }
    let value = stmt[eq + 3..].trim();
    let (fun, args) = if let Some(a) = value.strip_prefix("max(") {
        (">", a)
    } else if let Some(a) = value.strip_prefix("min(") {
        ("<", a)
    } else {
        return None;
    };
    let args = args.strip_suffix(')')?;
    let v = args
        .strip_prefix(name)?
        .trim_start()
        .strip_prefix(',')?
        .trim();
    if !balanced(v) {
        return None;
    }
    Some(if select {
        format!(
            "{}{name} = select({name}, {v}, {v} {fun} {name});",
            indent(line)
        )
    } else {
        format!("{}if ({v} {fun} {name}) {{ {name} = {v}; }}", indent(line))
    })
}

/// `if (c) { a = x; b = y; }`, on one line or four, with `c` naming exactly one of `a` and `b`
/// (the value): the index's `select` first, then the value's.
fn arg_select(wgsl: &str) -> String {
    let lines: Vec<&str> = wgsl.split_inclusive('\n').collect();
    let assign = |t: &str| -> Option<(String, String)> {
        let stmt = t.trim().strip_suffix(';')?;
        let eq = stmt.find(" = ")?;
        let name = stmt[..eq].trim();
        (!name.is_empty() && name.chars().all(is_ident) && !stmt[eq + 3..].contains(';'))
            .then(|| (name.to_owned(), stmt[eq + 3..].trim().to_owned()))
    };
    let mentions = |cond: &str, name: &str| cond.split(|c: char| !is_ident(c)).any(|w| w == name);
    let mut out = String::with_capacity(wgsl.len() + 64);
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim();
        let found = t.strip_prefix("if").and_then(|rest| {
            let rest = rest.trim_start();
            // One line: `if (c) { a = x; b = y; }`.
            if let Some(body) = rest.strip_suffix('}') {
                let open = body.find('{')?;
                let cond = body[..open].trim().to_owned();
                let stmts: Vec<&str> = body[open + 1..]
                    .split_inclusive(';')
                    .filter(|s| !s.trim().is_empty())
                    .collect();
                let [s1, s2] = stmts[..] else { return None };
                return Some((cond, assign(s1)?, assign(s2)?, 1));
            }
            let cond = rest.strip_suffix('{')?.trim().to_owned();
            let a = assign(lines.get(i + 1)?)?;
            let b = assign(lines.get(i + 2)?)?;
            (lines.get(i + 3)?.trim() == "}").then_some((cond, a, b, 4))
        });
        let Some((cond, a, b, n)) =
            found.filter(|(c, a, b, _)| balanced(c) && mentions(c, &a.0) != mentions(c, &b.0))
        else {
            out.push_str(line);
            i += 1;
            continue;
        };
        let ((v, x), (k, j)) = if mentions(&cond, &a.0) {
            (a, b)
        } else {
            (b, a)
        };
        let ind = indent(line.trim_end_matches('\n'));
        out.push_str(&format!(
            "{ind}{k} = select({k}, {j}, {cond});\n{ind}{v} = select({v}, {x}, {cond});\n"
        ));
        i += n;
    }
    out
}

fn balanced(s: &str) -> bool {
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The names declared at module scope, as naga reads them: variables, constants, overrides,
/// functions and types (none when the text does not parse).
fn module_scope_names(wgsl: &str) -> Vec<String> {
    let Ok(m) = naga::front::wgsl::parse_str(wgsl) else {
        return Vec::new();
    };
    let globals = m.global_variables.iter().map(|(_, v)| v.name.clone());
    let constants = m.constants.iter().map(|(_, c)| c.name.clone());
    let overrides = m.overrides.iter().map(|(_, o)| o.name.clone());
    let functions = m.functions.iter().map(|(_, f)| f.name.clone());
    let types = m.types.iter().map(|(_, t)| t.name.clone());
    globals
        .chain(constants)
        .chain(overrides)
        .chain(functions)
        .chain(types)
        .flatten()
        .collect()
}

/// Renames every `let` and `var` declared in the entry point's body (`x` → `x_r`), except those
/// that shadow a module-scope name.
fn rename(wgsl: &str, entry: &str) -> String {
    let Some(fn_at) = wgsl.find(&format!("fn {entry}(")) else {
        return wgsl.to_owned();
    };
    let Some(open) = wgsl[fn_at..].find('{').map(|o| fn_at + o) else {
        return wgsl.to_owned();
    };
    let body = &wgsl[open..];
    let module_names = module_scope_names(wgsl);
    // Declared names.
    let mut names: Vec<String> = Vec::new();
    for kw in ["let ", "var "] {
        let mut from = 0;
        while let Some(at) = body[from..].find(kw) {
            let start = from + at;
            from = start + kw.len();
            if start > 0 && body[..start].ends_with(is_ident) {
                continue;
            }
            let name: String = body[from..].chars().take_while(|&c| is_ident(c)).collect();
            // A `let` that shadows a module-scope name (`let view = shrink(view);`) reads that
            // name in its own initialiser: renaming every occurrence would break it.
            if !name.is_empty() && !names.contains(&name) && !module_names.contains(&name) {
                names.push(name);
            }
        }
    }
    // Every occurrence of a declared name as a whole word, not after `.` (a member).
    let mut out = String::with_capacity(body.len() + 64);
    let mut word = String::new();
    let mut prev_dot = false;
    let flush = |word: &mut String, out: &mut String, prev_dot: bool| {
        if !word.is_empty() {
            out.push_str(word);
            if !prev_dot && names.contains(word) && !word.starts_with(|c: char| c.is_ascii_digit())
            {
                out.push_str("_r");
            }
            word.clear();
        }
    };
    let mut in_comment = false;
    let mut last = ' ';
    for c in body.chars() {
        if in_comment {
            out.push(c);
            if c == '\n' {
                in_comment = false;
            }
            last = c;
            continue;
        }
        if is_ident(c) {
            if word.is_empty() {
                prev_dot = last == '.';
            }
            word.push(c);
        } else {
            flush(&mut word, &mut out, prev_dot);
            if c == '/' && last == '/' {
                in_comment = true;
            }
            out.push(c);
        }
        last = c;
    }
    flush(&mut word, &mut out, prev_dot);
    format!("{}{out}", &wgsl[..open])
}

/// The positions of the entry point's opening and closing braces; the entry point must be the
/// last function (its `}` is the text's last).
fn entry_braces(wgsl: &str, entry: &str) -> Option<(usize, usize)> {
    let fn_at = wgsl.find(&format!("fn {entry}("))?;
    let open = fn_at + wgsl[fn_at..].find('{')?;
    let close = wgsl.rfind('}').filter(|&c| c > open)?;
    Some((open, close))
}

/// `if (c) { return; }` (on one line or three) at the top level of the entry point's body →
/// `if (!(c)) {` with the rest of the body inside.
fn guard(wgsl: &str, entry: &str) -> String {
    let Some((open, close)) = entry_braces(wgsl, entry) else {
        return wgsl.to_owned();
    };
    let body = &wgsl[open + 1..close];
    let lines: Vec<&str> = body.split_inclusive('\n').collect();
    let Some(top) = lines
        .iter()
        .find(|l| !l.trim().is_empty() && !l.trim().starts_with("//"))
        .map(|l| indent(l.trim_end_matches('\n')).to_owned())
    else {
        return wgsl.to_owned();
    };
    let mut depth = 0i32;
    let code = |l: &str| l.split("//").next().unwrap_or("").trim().to_owned();
    for (i, line) in lines.iter().enumerate() {
        let t = code(line);
        let at_top = depth == 0 && indent(line.trim_end_matches('\n')) == top;
        let cond = t.strip_prefix("if").and_then(|rest| {
            let rest = rest.trim_start();
            if let Some(c) = rest.strip_suffix("{ return; }") {
                return Some((c.trim().to_owned(), 1));
            }
            let c = rest.strip_suffix('{')?;
            let next = code(lines.get(i + 1)?);
            let after = code(lines.get(i + 2)?);
            (next == "return;" && after == "}").then(|| (c.trim().to_owned(), 3))
        });
        if at_top && let Some((c, n)) = cond {
            let head: String = lines[..i].concat();
            let rest: String = lines[i + n..]
                .iter()
                .map(|l| {
                    if l.trim().is_empty() {
                        (*l).to_owned()
                    } else {
                        format!("    {l}")
                    }
                })
                .collect();
            return format!(
                "{}{{{head}{top}if (!({c})) {{\n{rest}{top}}}\n{}",
                &wgsl[..open],
                &wgsl[close..]
            );
        }
        depth += t.matches('{').count() as i32 - t.matches('}').count() as i32;
    }
    wgsl.to_owned()
}

/// The entry point's body inside `if (KF_MODE == 1u) { .. }`, the constant declared first.
fn mode_const(wgsl: &str, entry: &str) -> String {
    let Some((open, close)) = entry_braces(wgsl, entry) else {
        return wgsl.to_owned();
    };
    let body: String = wgsl[open + 1..close]
        .split_inclusive('\n')
        .map(|l| {
            if l.trim().is_empty() {
                l.to_owned()
            } else {
                format!("    {l}")
            }
        })
        .collect();
    format!(
        "const KF_MODE: u32 = 1u;\n{}{{\n    if (KF_MODE == 1u) {{{body}    }}\n{}",
        &wgsl[..open],
        &wgsl[close..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_rewrite_what_they_claim() {
        let src = "fn main(a: u32) {\n    var m = 0.0;\n    let v = x[a] * 2.0;\n    m = max(m, v);\n    s += v * v;\n    y.m = m; // twice\n}\n";
        assert!(
            Spelling::ExtremumIf
                .apply(src, "main")
                .contains("if (v > m) { m = v; }")
        );
        assert!(
            Spelling::ExtremumSelect
                .apply(src, "main")
                .contains("m = select(m, v, v > m);")
        );
        assert!(
            Spelling::Compound
                .apply(src, "main")
                .contains("s = s + (v * v);")
        );
        assert!(
            Spelling::Parens
                .apply(src, "main")
                .contains("let v = (x[a] * 2.0);")
        );
        let renamed = Spelling::Rename.apply(src, "main");
        assert!(renamed.contains("m_r = max(m_r, v_r);"), "{renamed}");
        assert!(renamed.contains("y.m = m_r;"), "{renamed}");
        assert!(renamed.contains("// twice"), "{renamed}");
        let pair = "    if (v > m) {\n        m = v;\n        k = i;\n    }\n    if (m < v) { k = i; m = v; }\n";
        assert_eq!(
            Spelling::ArgSelect.apply(pair, "main"),
            "    k = select(k, i, (v > m));\n    m = select(m, v, (v > m));\n    k = select(k, i, (m < v));\n    m = select(m, v, (m < v));\n"
        );
        let guarded = Spelling::Guard.apply(
            "fn main(a: u32) {\n    if (a >= n) {\n        return;\n    }\n    y[a] = 1.0;\n}\n",
            "main",
        );
        assert_eq!(
            guarded,
            "fn main(a: u32) {\n    if (!((a >= n))) {\n        y[a] = 1.0;\n    }\n}\n"
        );
        let reordered = Spelling::Reorder.apply(src, "main");
        assert!(
            reordered.contains("    let v = x[a] * 2.0;\n    var m = 0.0;\n"),
            "{reordered}"
        );
        // `b` names `a`: that pair stays; `b` and `c` swap; a call of the module's `f` stays put.
        let deps = "fn f() -> u32 { return 1u; }\nfn main() {\n    let a = 1u;\n    let b = a;\n    let c = 2u;\n    let d = 3u;\n    let e = f();\n    let g = 4u;\n}\n";
        assert_eq!(
            Spelling::Reorder.apply(deps, "main"),
            "fn f() -> u32 { return 1u; }\nfn main() {\n    let a = 1u;\n    let c = 2u;\n    let b = a;\n    let d = 3u;\n    let e = f();\n    let g = 4u;\n}\n"
        );
        assert!(
            Spelling::LetChain
                .apply(src, "main")
                .contains("    let v_v = x[a] * 2.0;\n    let v = v_v;\n")
        );
        let looped = "fn main() {\n    for (var i = 0u; i < n; i++) { s += x[i]; }\n    for (var i = 1u; i < n; i += 2u) { if (s > 0.0) { continue; } s += 1.0; }\n}\n";
        assert_eq!(
            Spelling::While.apply(looped, "main"),
            "fn main() {\n    var i_w0 = 0u; while (i_w0 < n) { s += x[i_w0]; i_w0++; }\n    for (var i = 1u; i < n; i += 2u) { if (s > 0.0) { continue; } s += 1.0; }\n}\n"
        );
        assert!(
            Spelling::LoopBreak.apply(looped, "main").contains(
                "var i_w0 = 0u; loop { if (!(i_w0 < n)) { break; } s += x[i_w0]; continuing { i_w0++; } }"
            )
        );
        let uniform = "fn rows() -> u32 { return dims.n; }\nstruct Dims { n: u32, d: u32 }\n@group(0) @binding(2) var<uniform> dims: Dims;\nfn main() { let i = dims.d * rows(); }\n";
        assert_eq!(
            Spelling::VecUniform.apply(uniform, "main"),
            "fn rows() -> u32 { return dims.x; }\nstruct Dims { n: u32, d: u32 }\n@group(0) @binding(2) var<uniform> dims: vec2<u32>;\nfn main() { let i = dims.y * rows(); }\n"
        );
        // Members of two types stay a struct.
        let mixed = "struct P { n: u32, s: f32 }\n@group(0) @binding(2) var<uniform> p: P;\n";
        assert_eq!(Spelling::VecUniform.apply(mixed, "main"), mixed);
        let commented = Spelling::Comments.apply(src, "main");
        assert!(
            commented.contains("var m = 0.0; // respelled"),
            "{commented}"
        );
    }
}
