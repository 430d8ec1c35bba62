//! The `#[kernelfoundry(..)]` grammar, parsed with syn.
//!
//! Both the macro (at compile time) and `cargo kernelfoundry` (reading source files) parse the
//! attribute with this one parser, so they can never disagree about what a spec says.
//!
//! ```text
//! path = "src/k.wgsl" | source = "<wgsl>"          the WGSL (exactly one)
//! entry = "main"                                    optional with one compute entry point
//! sizes(rows = 4096, cols = 4096)                   named sizes and their default values
//! tune_shapes = [(rows = 4096), (rows = 1, cols = 128256)]
//! verify_shapes = [(rows = 33, cols = 1000)]
//! bind(x = input(n), y = output(n), 2 = uniform(n, 1.5), idx = input(n, range(0, n)),
//!      dims = input(values(rows, cols)),              one value per scalar of a fixed-size buffer
//!      img = texture(w, h, format = rgba8unorm),      a sampled texture of random texels
//!      out = storage_texture(w, h))                   a storage texture (format from the WGSL)
//! grid = (cols, rows) | workgroups = (cdiv(n, 256)) the baseline's launch rule (min, max, cdiv)
//! stages = [(entry = "partial", workgroups = (cdiv(n, 256))), (entry = "combine", workgroups = (1))]
//!                                                    a launch sequence instead of `entry` and one
//!                                                    rule: entry points of the module, in order
//! params(TILE = [8, 16, 32], X = [8, 16], Y = [1, 2], THREADS = X * Y)
//!                                                    candidate values for `override`s, or a
//!                                                    value derived from others
//! constraints(THREADS <= 256, pow2(TILE), n % TILE == 0)
//!                                                    what every searched point must meet
//! tolerance = 1e-3                                   relative, for float outputs
//! flops = 2 * m * n * k                              for GFLOP/s reports
//! reference(path = "src/k_ref.wgsl", workgroups = (rows))   a hand-written yardstick (reports only)
//! ```
//!
//! Invariant: every part of the spec that later checks can reject has its span recorded in
//! [`SpecSpans`], so an error found by reflection still points at the token that caused it.

use crate::expr::{Op, SizeExpr};
use crate::interface::TexelFormat;
use crate::program::DispatchMode;
use crate::spec::{
    BindingRef, BindingSpec, DispatchSpec, Init, Loc, ReferenceSpec, Role, SourceRef, Spec,
    TextureSpec, Value,
};
use proc_macro2::{Span, TokenStream};
use std::borrow::Cow;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Ident, LitFloat, LitInt, LitStr, Token, bracketed, parenthesized};

/// The keys the attribute accepts, for error hints.
pub const KEYS: &str = "path, source, entry, sizes, tune_shapes, verify_shapes, bind, grid, workgroups, stages, params, constraints, tolerance, flops, reference";

/// How to write a launch sequence, for error hints.
const STAGES_HELP: &str = "  = help: write `stages = [(entry = \"partial\", workgroups = (cdiv(n, 256))), (entry = \"combine\", workgroups = (1))]`: each launch's entry point and launch rule, in order";

/// Spans of the parts of a parsed spec.
#[derive(Clone, Debug, Default)]
pub struct SpecSpans {
    spans: Vec<(Loc, Span)>,
    names: Vec<(Loc, String, Span)>,
    attr: Option<Span>,
}

impl SpecSpans {
    /// The span recorded for `loc`, falling back to the whole attribute.
    pub fn span(&self, loc: Loc) -> Span {
        self.spans
            .iter()
            .find(|(l, _)| *l == loc)
            .map(|(_, s)| *s)
            .or(self.attr)
            .unwrap_or_else(Span::call_site)
    }

    /// The span of the size name `name` used at `loc`, if it was recorded.
    pub fn name_span(&self, loc: Loc, name: &str) -> Option<Span> {
        self.names
            .iter()
            .find(|(l, n, _)| *l == loc && n == name)
            .map(|(_, _, s)| *s)
    }

    fn set(&mut self, loc: Loc, span: Span) {
        self.spans.push((loc, span));
    }

    /// Records the span of every size name in `expr` under `loc`.
    fn names_in(&mut self, loc: Loc, expr: &Expr) {
        match expr {
            Expr::Path(p) => {
                if let Some(ident) = p.path.get_ident() {
                    self.names.push((loc, ident.to_string(), ident.span()));
                }
            }
            Expr::Paren(p) => self.names_in(loc, &p.expr),
            Expr::Group(g) => self.names_in(loc, &g.expr),
            Expr::Binary(b) => {
                self.names_in(loc, &b.left);
                self.names_in(loc, &b.right);
            }
            Expr::Call(c) => {
                for a in &c.args {
                    self.names_in(loc, a);
                }
            }
            Expr::Unary(u) => self.names_in(loc, &u.expr),
            _ => {}
        }
    }

    /// Records the span of the whole attribute (or the item), used when nothing finer is known.
    pub fn set_attr(&mut self, span: Span) {
        self.attr = Some(span);
    }
}

/// Parses the tokens inside `#[kernelfoundry( … )]`.
pub fn parse_spec(tokens: TokenStream) -> syn::Result<(Spec, SpecSpans)> {
    let parser = |input: ParseStream| parse_items(input);
    parser.parse2(tokens)
}

/// Parses a whole `#[kernelfoundry(..)]` attribute read from a source file, as `cargo
/// kernelfoundry` does. Errors without a finer location point at the attribute, and an unexpected
/// end of the arguments at their closing parenthesis, where the compiler points.
pub fn parse_attribute(attr: &syn::Attribute) -> syn::Result<(Spec, SpecSpans)> {
    let list = attr.meta.require_list()?;
    let (spec, mut spans) = list.parse_args_with(parse_items)?;
    spans.set_attr(attr.span());
    Ok((spec, spans))
}

fn parse_items(input: ParseStream) -> syn::Result<(Spec, SpecSpans)> {
    let mut spans = SpecSpans::default();
    let mut source: Option<(SourceRef, Span)> = None;
    let mut spec = Spec {
        source: SourceRef::Inline(String::new()),
        entry: None,
        sizes: Vec::new(),
        tune_shapes: Vec::new(),
        verify_shapes: Vec::new(),
        bindings: Vec::new(),
        dispatch: None,
        stages: Vec::new(),
        params: Vec::new(),
        derived: Vec::new(),
        constraints: Vec::new(),
        tolerance: None,
        flops: None,
        reference: None,
    };
    let mut seen: Vec<String> = Vec::new();
    // `entry`, `grid`/`workgroups` and `stages` as given, to refuse a mix of the two forms.
    let mut single: Option<(String, Span)> = None;
    let mut stages_key: Option<Span> = None;
    while !input.is_empty() {
        let key: Ident = input.parse()?;
        let name = key.to_string();
        if seen.contains(&name) {
            return Err(syn::Error::new(
                key.span(),
                format!("`{name}` is given twice"),
            ));
        }
        seen.push(name.clone());
        if matches!(name.as_str(), "entry" | "grid" | "workgroups") && single.is_none() {
            single = Some((name.clone(), key.span()));
        }
        match name.as_str() {
            "path" | "source" => {
                input.parse::<Token![=]>()?;
                let lit: LitStr = input.parse()?;
                if let Some((_, first)) = &source {
                    let mut err = syn::Error::new(
                        key.span(),
                        "give the WGSL once: either `path = \"..\"` or `source = \"..\"`",
                    );
                    err.combine(syn::Error::new(*first, "first given here"));
                    return Err(err);
                }
                let value = if name == "path" {
                    SourceRef::Path(lit.value())
                } else {
                    SourceRef::Inline(lit.value())
                };
                spans.set(Loc::Source, lit.span());
                source = Some((value, key.span()));
            }
            "entry" => {
                input.parse::<Token![=]>()?;
                let lit: LitStr = input.parse()?;
                spans.set(Loc::Entry, lit.span());
                spec.entry = Some(lit.value());
            }
            "sizes" => {
                let content;
                parenthesized!(content in input);
                for (i, (name, value, span)) in parse_assignments(&content)?.into_iter().enumerate()
                {
                    spans.set(Loc::Size(i), span);
                    spec.sizes.push((name, value));
                }
            }
            "tune_shapes" | "verify_shapes" => {
                input.parse::<Token![=]>()?;
                let content;
                bracketed!(content in input);
                let mut shapes = Vec::new();
                while !content.is_empty() {
                    let inner;
                    let paren = parenthesized!(inner in content);
                    let shape: Vec<(String, u64)> = parse_assignments(&inner)?
                        .into_iter()
                        .map(|(n, v, _)| (n, v))
                        .collect();
                    let loc = if name == "tune_shapes" {
                        Loc::TuneShape(shapes.len())
                    } else {
                        Loc::VerifyShape(shapes.len())
                    };
                    spans.set(loc, paren.span.join());
                    shapes.push(shape);
                    if content.is_empty() {
                        break;
                    }
                    content.parse::<Token![,]>()?;
                }
                if shapes.is_empty() {
                    return Err(syn::Error::new(
                        key.span(),
                        format!("`{name}` needs at least one shape, e.g. `{name} = [(n = 1024)]`"),
                    ));
                }
                if name == "tune_shapes" {
                    spec.tune_shapes = shapes;
                } else {
                    spec.verify_shapes = shapes;
                }
            }
            "bind" => {
                let content;
                parenthesized!(content in input);
                while !content.is_empty() {
                    let i = spec.bindings.len();
                    let (binding, target_span, len_span, role_span) =
                        parse_binding(&content, i, &mut spans)?;
                    spans.set(Loc::Binding(i), target_span);
                    if let Some(s) = len_span {
                        spans.set(Loc::BindingLen(i), s);
                    }
                    spans.set(Loc::BindingRole(i), role_span);
                    spec.bindings.push(binding);
                    if content.is_empty() {
                        break;
                    }
                    content.parse::<Token![,]>()?;
                }
            }
            "grid" | "workgroups" => {
                if seen
                    .iter()
                    .filter(|k| *k == "grid" || *k == "workgroups")
                    .count()
                    > 1
                {
                    return Err(syn::Error::new(
                        key.span(),
                        "give either `grid = (..)` (invocations) or `workgroups = (..)` (workgroup counts), not both",
                    ));
                }
                input.parse::<Token![=]>()?;
                let exprs: Vec<Expr> = if input.peek(syn::token::Paren) {
                    let content;
                    parenthesized!(content in input);
                    Punctuated::<Expr, Token![,]>::parse_terminated(&content)?
                        .into_iter()
                        .collect()
                } else {
                    vec![input.parse()?]
                };
                if exprs.is_empty() || exprs.len() > 3 {
                    return Err(syn::Error::new(
                        key.span(),
                        format!(
                            "`{name}` takes one to three dimensions, e.g. `{name} = (cols, rows)`"
                        ),
                    ));
                }
                let span = exprs
                    .iter()
                    .map(|e| e.span())
                    .reduce(|a, b| a.join(b).unwrap_or(a))
                    .unwrap_or_else(|| key.span());
                spans.set(Loc::Dispatch, span);
                for e in &exprs {
                    spans.names_in(Loc::Dispatch, e);
                }
                spec.dispatch = Some(DispatchSpec {
                    mode: if name == "grid" {
                        DispatchMode::Grid
                    } else {
                        DispatchMode::Workgroups
                    },
                    size: exprs.iter().map(size_expr).collect::<syn::Result<_>>()?,
                });
            }
            "params" => {
                let content;
                parenthesized!(content in input);
                while !content.is_empty() {
                    let name: Ident = content.parse()?;
                    content.parse::<Token![=]>()?;
                    if content.peek(syn::token::Bracket) {
                        let values;
                        bracketed!(values in content);
                        let list: Vec<f64> =
                            Punctuated::<Expr, Token![,]>::parse_terminated(&values)?
                                .iter()
                                .map(number)
                                .collect::<syn::Result<_>>()?;
                        if list.is_empty() {
                            return Err(syn::Error::new(
                                name.span(),
                                "give at least one candidate value",
                            ));
                        }
                        spans.set(Loc::Param(spec.params.len()), name.span());
                        spec.params.push((name.to_string(), list));
                    } else {
                        // `THREADS = X * Y`: a value that follows from other parameters.
                        let e: Expr = content.parse()?;
                        let loc = Loc::Derived(spec.derived.len());
                        spans.set(loc, name.span());
                        spans.names_in(loc, &e);
                        spec.derived.push((name.to_string(), param_expr(&e)?));
                    }
                    if content.is_empty() {
                        break;
                    }
                    content.parse::<Token![,]>()?;
                }
            }
            "constraints" => {
                let content;
                parenthesized!(content in input);
                let exprs = Punctuated::<Expr, Token![,]>::parse_terminated(&content)?;
                if exprs.is_empty() {
                    return Err(syn::Error::new(
                        key.span(),
                        "give at least one condition, e.g. `constraints(pow2(TILE), n % TILE == 0)`",
                    ));
                }
                for e in &exprs {
                    let loc = Loc::Constraint(spec.constraints.len());
                    spans.set(loc, e.span());
                    spans.names_in(loc, e);
                    spec.constraints.push(param_expr(e)?);
                }
            }
            "tolerance" => {
                input.parse::<Token![=]>()?;
                let e: Expr = input.parse()?;
                let t = number(&e)?;
                if !(t > 0.0 && t < 1.0) {
                    return Err(syn::Error::new(
                        e.span(),
                        "tolerance is relative and must be in (0, 1), e.g. `tolerance = 1e-3`",
                    ));
                }
                spec.tolerance = Some(t);
            }
            "flops" => {
                input.parse::<Token![=]>()?;
                let e: Expr = input.parse()?;
                spans.set(Loc::Flops, e.span());
                spans.names_in(Loc::Flops, &e);
                spec.flops = Some(size_expr(&e)?);
            }
            "reference" => {
                let content;
                parenthesized!(content in input);
                spec.reference = Some(parse_reference(&content, key.span(), &mut spans)?);
            }
            "stages" => {
                input.parse::<Token![=]>()?;
                let content;
                bracketed!(content in input);
                while !content.is_empty() {
                    let inner;
                    let paren = parenthesized!(inner in content);
                    let i = spec.stages.len();
                    spec.stages
                        .push(parse_stage(&inner, i, paren.span.join(), &mut spans)?);
                    if content.is_empty() {
                        break;
                    }
                    content.parse::<Token![,]>()?;
                }
                if spec.stages.is_empty() {
                    return Err(syn::Error::new(
                        key.span(),
                        format!("`stages` needs at least one launch\n{STAGES_HELP}"),
                    ));
                }
                stages_key = Some(key.span());
            }
            other => {
                return Err(syn::Error::new(
                    key.span(),
                    format!("unknown key `{other}`\n  = help: expected one of: {KEYS}"),
                ));
            }
        }
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    if let (Some(stages), Some((other, span))) = (stages_key, &single) {
        let mut err = syn::Error::new(
            *span,
            format!(
                "`{other}` and `stages` both say what to launch: a launch sequence gives each stage its own entry point and launch rule\n  = help: remove `{other}`, or remove `stages` for a kernel of one launch"
            ),
        );
        err.combine(syn::Error::new(stages, "`stages` given here"));
        return Err(err);
    }
    match source {
        Some((s, _)) => spec.source = s,
        None => {
            return Err(syn::Error::new(
                input.span(),
                "missing the WGSL: add `path = \"src/kernel.wgsl\"` (relative to the crate root) or `source = r#\"..\"#`",
            ));
        }
    }
    Ok((spec, spans))
}

/// The inside of `reference(path = "..", entry = "..", grid | workgroups = (..))`.
fn parse_reference(
    input: ParseStream,
    key: Span,
    spans: &mut SpecSpans,
) -> syn::Result<ReferenceSpec> {
    const HELP: &str = "  = help: write `reference(path = \"src/k_ref.wgsl\", workgroups = (rows))`: the WGSL and its own launch rule";
    let mut source = None;
    let mut entry = None;
    let mut dispatch = None;
    while !input.is_empty() {
        let k: Ident = input.parse()?;
        input.parse::<Token![=]>()?;
        match k.to_string().as_str() {
            "path" | "source" if source.is_none() => {
                let lit: LitStr = input.parse()?;
                spans.set(Loc::Reference, lit.span());
                source = Some(if k == "path" {
                    SourceRef::Path(lit.value())
                } else {
                    SourceRef::Inline(lit.value())
                });
            }
            "entry" if entry.is_none() => entry = Some(input.parse::<LitStr>()?.value()),
            "grid" | "workgroups" if dispatch.is_none() => {
                let exprs: Vec<Expr> = if input.peek(syn::token::Paren) {
                    let inner;
                    parenthesized!(inner in input);
                    Punctuated::<Expr, Token![,]>::parse_terminated(&inner)?
                        .into_iter()
                        .collect()
                } else {
                    vec![input.parse()?]
                };
                if exprs.is_empty() || exprs.len() > 3 {
                    return Err(syn::Error::new(
                        k.span(),
                        format!("`{k}` takes one to three dimensions, e.g. `{k} = (cols, rows)`"),
                    ));
                }
                let span = exprs
                    .iter()
                    .map(|e| e.span())
                    .reduce(|a, b| a.join(b).unwrap_or(a))
                    .unwrap_or_else(|| k.span());
                spans.set(Loc::ReferenceDispatch, span);
                for e in &exprs {
                    spans.names_in(Loc::ReferenceDispatch, e);
                }
                dispatch = Some(DispatchSpec {
                    mode: if k == "grid" {
                        DispatchMode::Grid
                    } else {
                        DispatchMode::Workgroups
                    },
                    size: exprs.iter().map(size_expr).collect::<syn::Result<_>>()?,
                });
            }
            "path" | "source" => {
                return Err(syn::Error::new(
                    k.span(),
                    format!("give the reference's WGSL once\n{HELP}"),
                ));
            }
            "entry" | "grid" | "workgroups" => {
                return Err(syn::Error::new(
                    k.span(),
                    format!(
                        "`reference(..)` takes one `entry` and one launch rule (`grid` or `workgroups`)\n{HELP}"
                    ),
                ));
            }
            other => {
                return Err(syn::Error::new(
                    k.span(),
                    format!(
                        "unknown key `{other}` in `reference(..)`: expected path, source, entry, grid or workgroups\n{HELP}"
                    ),
                ));
            }
        }
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    let Some(source) = source else {
        return Err(syn::Error::new(
            key,
            format!("`reference(..)` needs its WGSL\n{HELP}"),
        ));
    };
    let Some(dispatch) = dispatch else {
        return Err(syn::Error::new(
            key,
            format!(
                "`reference(..)` needs its own launch rule: `grid = (..)` or `workgroups = (..)`\n{HELP}"
            ),
        ));
    };
    Ok(ReferenceSpec {
        source,
        entry,
        dispatch,
    })
}

/// The inside of one `(entry = "..", grid | workgroups = (..))` of `stages = [..]`.
fn parse_stage(
    input: ParseStream,
    i: usize,
    whole: Span,
    spans: &mut SpecSpans,
) -> syn::Result<crate::spec::StageSpec> {
    let mut entry = None;
    let mut dispatch = None;
    while !input.is_empty() {
        let k: Ident = input.parse()?;
        input.parse::<Token![=]>()?;
        match k.to_string().as_str() {
            "entry" if entry.is_none() => {
                let lit: LitStr = input.parse()?;
                spans.set(Loc::Stage(i), lit.span());
                entry = Some(lit.value());
            }
            "grid" | "workgroups" if dispatch.is_none() => {
                let exprs: Vec<Expr> = if input.peek(syn::token::Paren) {
                    let inner;
                    parenthesized!(inner in input);
                    Punctuated::<Expr, Token![,]>::parse_terminated(&inner)?
                        .into_iter()
                        .collect()
                } else {
                    vec![input.parse()?]
                };
                if exprs.is_empty() || exprs.len() > 3 {
                    return Err(syn::Error::new(
                        k.span(),
                        format!("`{k}` takes one to three dimensions, e.g. `{k} = (cols, rows)`"),
                    ));
                }
                let span = exprs
                    .iter()
                    .map(|e| e.span())
                    .reduce(|a, b| a.join(b).unwrap_or(a))
                    .unwrap_or_else(|| k.span());
                spans.set(Loc::StageDispatch(i), span);
                for e in &exprs {
                    spans.names_in(Loc::StageDispatch(i), e);
                }
                dispatch = Some(DispatchSpec {
                    mode: if k == "grid" {
                        DispatchMode::Grid
                    } else {
                        DispatchMode::Workgroups
                    },
                    size: exprs.iter().map(size_expr).collect::<syn::Result<_>>()?,
                });
            }
            "entry" | "grid" | "workgroups" => {
                return Err(syn::Error::new(
                    k.span(),
                    format!(
                        "a stage takes one `entry` and one launch rule (`grid` or `workgroups`)\n{STAGES_HELP}"
                    ),
                ));
            }
            other => {
                return Err(syn::Error::new(
                    k.span(),
                    format!(
                        "unknown key `{other}` in a stage: expected entry, grid or workgroups\n{STAGES_HELP}"
                    ),
                ));
            }
        }
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    let Some(entry) = entry else {
        return Err(syn::Error::new(
            whole,
            format!(
                "stage {} needs its entry point: `entry = \"..\"`\n{STAGES_HELP}",
                i + 1
            ),
        ));
    };
    let Some(dispatch) = dispatch else {
        return Err(syn::Error::new(
            whole,
            format!(
                "stage {} (`{entry}`) needs its launch rule: `grid = (..)` (invocations) or `workgroups = (..)` (workgroup counts)\n{STAGES_HELP}",
                i + 1
            ),
        ));
    };
    Ok(crate::spec::StageSpec { entry, dispatch })
}

fn parse_assignments(input: ParseStream) -> syn::Result<Vec<(String, u64, Span)>> {
    let mut out: Vec<(String, u64, Span)> = Vec::new();
    while !input.is_empty() {
        let name: Ident = input.parse()?;
        input.parse::<Token![=]>()?;
        let value: Expr = input.parse()?;
        let v = const_int(&value)?;
        if out.iter().any(|(n, _, _)| name == n) {
            return Err(syn::Error::new(
                name.span(),
                format!("size `{name}` is given twice"),
            ));
        }
        out.push((name.to_string(), v, name.span()));
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    Ok(out)
}

/// Returns the binding and the spans of its target, its length expression and its role.
fn parse_binding(
    input: ParseStream,
    index: usize,
    spans: &mut SpecSpans,
) -> syn::Result<(BindingSpec, Span, Option<Span>, Span)> {
    let (target, target_span) = if input.peek(Ident) {
        let ident: Ident = input.parse()?;
        (BindingRef::Name(ident.to_string()), ident.span())
    } else if input.peek(LitInt) {
        let lit: LitInt = input.parse()?;
        (
            BindingRef::Slot {
                group: 0,
                binding: lit.base10_parse()?,
            },
            lit.span(),
        )
    } else if input.peek(LitFloat) {
        // `1.3` lexes as a float literal: group 1, binding 3.
        let lit: LitFloat = input.parse()?;
        let text = lit.base10_digits().to_owned();
        let (g, b) = text.split_once('.').ok_or_else(|| {
            syn::Error::new(
                lit.span(),
                "write a binding as `name`, `3` (group 0) or `1.3` (group 1, binding 3)",
            )
        })?;
        let parse = |s: &str| {
            s.parse::<u32>().map_err(|_| {
                syn::Error::new(
                    lit.span(),
                    "write a binding as `name`, `3` (group 0) or `1.3` (group 1, binding 3)",
                )
            })
        };
        (
            BindingRef::Slot {
                group: parse(g)?,
                binding: parse(b)?,
            },
            lit.span(),
        )
    } else {
        return Err(input.error("expected a binding: its WGSL name (`x = input(n)`), its number (`0 = input(n)`) or `group.binding` (`1.0 = input(n)`)"));
    };
    input.parse::<Token![=]>()?;
    let role_ident: Ident = input.parse()?;
    let role_name = role_ident.to_string();
    let role = match role_name.as_str() {
        "input" | "texture" => Role::Input,
        // A storage texture's role follows from its access (write, read_write, read).
        "output" | "storage_texture" => Role::Output,
        "inout" => Role::Inout,
        "scratch" => Role::Scratch,
        "uniform" => Role::Uniform,
        other => {
            return Err(syn::Error::new(
                role_ident.span(),
                format!(
                    "unknown binding role `{other}`\n  = help: expected input(len), output(len), inout(len), scratch(len), uniform(values..), texture(width, height) or storage_texture(width, height)"
                ),
            ));
        }
    };
    let mut binding = BindingSpec {
        target,
        role,
        len: None,
        init: None,
        values: Vec::new(),
        texture: None,
    };
    if role_name == "texture" || role_name == "storage_texture" {
        let parsed = parse_texture(input, index, spans, &role_ident)?;
        binding.init = parsed.init;
        binding.texture = Some(parsed.texture);
        return Ok((binding, target_span, parsed.extent_span, parsed.role_span));
    }
    let mut len_span = None;
    let mut role_span = role_ident.span();
    if input.peek(syn::token::Paren) {
        let content;
        let paren = parenthesized!(content in input);
        role_span = role_ident
            .span()
            .join(paren.span.join())
            .unwrap_or(role_span);
        let args: Vec<Expr> = Punctuated::<Expr, Token![,]>::parse_terminated(&content)?
            .into_iter()
            .collect();
        for (k, a) in args.iter().enumerate() {
            let is_len = k == 0 && role != Role::Uniform && !is_init_call(a);
            let loc = if is_len {
                Loc::BindingLen(index)
            } else {
                Loc::BindingRole(index)
            };
            spans.names_in(loc, a);
        }
        if role == Role::Uniform {
            binding.values = args.iter().map(value).collect::<syn::Result<_>>()?;
        } else {
            let mut args = args.into_iter();
            if let Some(first) = args.next() {
                if let Expr::Call(call) = &first
                    && is_init_call(&first)
                {
                    // `input(range(0, 10))` without a length: a fixed-size array.
                    binding.init = Some(init(call)?);
                } else {
                    len_span = Some(first.span());
                    binding.len = Some(size_expr(&first)?);
                }
            }
            if let Some(second) = args.next() {
                match &second {
                    Expr::Call(call) => binding.init = Some(init(call)?),
                    Expr::Path(p) if p.path.is_ident("bits") => {
                        return Err(syn::Error::new(
                            p.span(),
                            "`bits` is a call, like every input distribution\n  = help: write `bits()`",
                        ));
                    }
                    other => {
                        return Err(syn::Error::new(
                            other.span(),
                            format!("expected an input distribution: {DISTRIBUTIONS}"),
                        ));
                    }
                }
            }
            if let Some(extra) = args.next() {
                return Err(syn::Error::new(
                    extra.span(),
                    "too many arguments: expected `(len)` or `(len, range(lo, hi))`",
                ));
            }
            if binding.init.is_some() && matches!(role, Role::Output | Role::Scratch) {
                return Err(syn::Error::new(
                    role_span,
                    format!(
                        "`{role}` buffers are poisoned before every run; an input distribution only applies to `input` and `inout`"
                    ),
                ));
            }
        }
    }
    Ok((binding, target_span, len_span, role_span))
}

/// A parsed `texture(..)` / `storage_texture(..)`.
struct ParsedTexture {
    texture: TextureSpec,
    init: Option<Init>,
    /// The extents, for errors about them.
    extent_span: Option<Span>,
    /// The whole role with its arguments.
    role_span: Span,
}

/// The arguments of `texture(..)` / `storage_texture(..)`: one to three extents, then an optional
/// input distribution and an optional `format = name`.
fn parse_texture(
    input: ParseStream,
    index: usize,
    spans: &mut SpecSpans,
    role_ident: &Ident,
) -> syn::Result<ParsedTexture> {
    let storage = role_ident == "storage_texture";
    let example = if storage {
        "`out = storage_texture(width, height)`"
    } else {
        "`img = texture(width, height)` or `img = texture(width, height, range(0.0, 1.0), format = rgba16float)`"
    };
    if !input.peek(syn::token::Paren) {
        return Err(syn::Error::new(
            role_ident.span(),
            format!("give the texture's extents, e.g. {example}"),
        ));
    }
    let content;
    let paren = parenthesized!(content in input);
    let role_span = role_ident
        .span()
        .join(paren.span.join())
        .unwrap_or_else(|| role_ident.span());
    let args = Punctuated::<Expr, Token![,]>::parse_terminated(&content)?;
    let mut texture = TextureSpec {
        storage,
        extent: Vec::new(),
        format: None,
    };
    let mut init_spec = None;
    let mut extent_span: Option<Span> = None;
    for a in &args {
        match a {
            Expr::Assign(assign) => {
                let is_format = matches!(&*assign.left, Expr::Path(p) if p.path.is_ident("format"));
                let name = match &*assign.right {
                    Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
                    _ => None,
                };
                let formats = || {
                    TexelFormat::ALL
                        .iter()
                        .map(|f| f.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                if !is_format {
                    return Err(syn::Error::new(
                        assign.left.span(),
                        format!("the only named argument of a texture is `format`, e.g. {example}"),
                    ));
                }
                let format = name
                    .as_deref()
                    .and_then(TexelFormat::parse)
                    .ok_or_else(|| {
                        syn::Error::new(
                            assign.right.span(),
                            format!(
                                "unknown texel format\n  = help: expected one of {}",
                                formats()
                            ),
                        )
                    })?;
                texture.format = Some(format);
            }
            call if is_init_call(call) => {
                let Expr::Call(c) = call else {
                    unreachable!("checked")
                };
                init_spec = Some(init(c)?);
            }
            extent => {
                if init_spec.is_some() || texture.format.is_some() {
                    return Err(syn::Error::new(
                        extent.span(),
                        format!("give the extents first, e.g. {example}"),
                    ));
                }
                spans.names_in(Loc::BindingLen(index), extent);
                extent_span = Some(match extent_span {
                    Some(s) => s.join(extent.span()).unwrap_or(s),
                    None => extent.span(),
                });
                texture.extent.push(size_expr(extent)?);
            }
        }
    }
    if texture.extent.is_empty() || texture.extent.len() > 3 {
        return Err(syn::Error::new(
            role_span,
            format!(
                "a texture has one to three extents (width, height, depth or layers), e.g. {example}"
            ),
        ));
    }
    Ok(ParsedTexture {
        texture,
        init: init_spec,
        extent_span,
        role_span,
    })
}

/// The input distributions, for errors that list them.
const DISTRIBUTIONS: &str = "`range(lo, hi)` (uniform in [lo, hi)), `constant(v)`, `values(a, b, ..)` (one per scalar of a fixed-size buffer), `causal_mask(rows, cols)`, `probabilities(cols)` or `bits()`";

/// Whether `expr` is an input distribution (`range(..)`, `causal_mask(..)`, ..) rather than a
/// size expression (which may call `min`, `max` or `cdiv`).
fn is_init_call(expr: &Expr) -> bool {
    const NAMES: [&str; 6] = [
        "range",
        "constant",
        "values",
        "causal_mask",
        "probabilities",
        "bits",
    ];
    matches!(expr, Expr::Call(c) if matches!(&*c.func, Expr::Path(p)
        if p.path.get_ident().is_some_and(|i| NAMES.iter().any(|n| i == n))))
}

fn init(call: &syn::ExprCall) -> syn::Result<Init> {
    let Expr::Path(p) = &*call.func else {
        return Err(syn::Error::new(
            call.func.span(),
            format!("expected an input distribution: {DISTRIBUTIONS}"),
        ));
    };
    let name = p
        .path
        .get_ident()
        .map(|i| i.to_string())
        .unwrap_or_default();
    let args: Vec<&Expr> = call.args.iter().collect();
    match (name.as_str(), args.as_slice()) {
        ("range", [lo, hi]) => Ok(Init::Range(value(lo)?, value(hi)?)),
        ("constant", [v]) => Ok(Init::Constant(value(v)?)),
        ("values", values) if !values.is_empty() => Ok(Init::Values(
            values
                .iter()
                .map(|v| value(v))
                .collect::<syn::Result<_>>()?,
        )),
        ("causal_mask", [rows, cols]) => Ok(Init::CausalMask(size_expr(rows)?, size_expr(cols)?)),
        ("probabilities", [cols]) => Ok(Init::Probabilities(size_expr(cols)?)),
        ("bits", []) => Ok(Init::Bits),
        ("causal_mask", _) => Err(syn::Error::new(
            call.span(),
            "`causal_mask` takes the rows and columns of one mask\n  = help: e.g. `mask = input(rows * cols, causal_mask(rows, cols))`",
        )),
        ("probabilities", _) => Err(syn::Error::new(
            call.span(),
            "`probabilities` takes the length of one row\n  = help: e.g. `p = input(rows * cols, probabilities(cols))`",
        )),
        ("bits", _) => Err(syn::Error::new(
            call.span(),
            "`bits()` takes no arguments: every bit of every integer is random",
        )),
        _ => Err(syn::Error::new(
            call.span(),
            format!("expected an input distribution: {DISTRIBUTIONS}"),
        )),
    }
}

/// A float literal (possibly negative) or a size expression.
fn value(expr: &Expr) -> syn::Result<Value> {
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(_),
            ..
        }) => Ok(Value::Float(number(expr)?)),
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            ..
        }) => Ok(Value::Float(number(expr)?)),
        _ => Ok(Value::Size(size_expr(expr)?)),
    }
}

/// A numeric literal, possibly negated.
fn number(expr: &Expr) -> syn::Result<f64> {
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(f),
            ..
        }) => f.base10_parse(),
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<i64>().map(|v| v as f64),
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => number(expr).map(|v| -v),
        other => Err(syn::Error::new(other.span(), "expected a number")),
    }
}

/// An integer computed from literals, for shape values (`1 << 20` and `4096 * 4` are allowed).
fn const_int(expr: &Expr) -> syn::Result<u64> {
    let err = |span: Span, msg: &str| syn::Error::new(span, msg);
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse(),
        Expr::Paren(p) => const_int(&p.expr),
        Expr::Binary(b) => {
            let (l, r) = (const_int(&b.left)?, const_int(&b.right)?);
            let v = match b.op {
                syn::BinOp::Add(_) => l.checked_add(r),
                syn::BinOp::Sub(_) => l.checked_sub(r),
                syn::BinOp::Mul(_) => l.checked_mul(r),
                syn::BinOp::Div(_) => l.checked_div(r),
                syn::BinOp::Shl(_) => u32::try_from(r).ok().and_then(|r| l.checked_shl(r)),
                _ => {
                    return Err(err(
                        b.op.span(),
                        "only + - * / << are allowed in a size value",
                    ));
                }
            };
            v.ok_or_else(|| err(expr.span(), "size value out of range"))
        }
        other => Err(err(
            other.span(),
            "expected an integer, e.g. `4096` or `1 << 20`",
        )),
    }
}

/// Converts a Rust expression into a parameter expression: integers, `true`/`false`, names,
/// `+ - * / % <<`, comparisons, `&& || !`, and `min`, `max`, `cdiv`, `pow2`.
pub fn param_expr(expr: &Expr) -> syn::Result<crate::params::ParamExpr> {
    use crate::params::{BinOp, Func, ParamExpr, UnOp};
    let boxed = |e: &Expr| param_expr(e).map(Box::new);
    Ok(match expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => ParamExpr::Int(i.base10_parse()?),
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Bool(b),
            ..
        }) => ParamExpr::Int(i64::from(b.value)),
        Expr::Path(p) if p.path.get_ident().is_some() => {
            ParamExpr::Name(p.path.get_ident().expect("checked").to_string())
        }
        Expr::Paren(p) => param_expr(&p.expr)?,
        Expr::Group(g) => param_expr(&g.expr)?,
        Expr::Unary(u) => match u.op {
            syn::UnOp::Neg(_) => ParamExpr::Unary(UnOp::Neg, boxed(&u.expr)?),
            syn::UnOp::Not(_) => ParamExpr::Unary(UnOp::Not, boxed(&u.expr)?),
            _ => {
                return Err(syn::Error::new(
                    u.op.span(),
                    "only `-` and `!` apply to a single value here",
                ));
            }
        },
        Expr::Binary(b) => {
            let op = match b.op {
                syn::BinOp::Add(_) => BinOp::Add,
                syn::BinOp::Sub(_) => BinOp::Sub,
                syn::BinOp::Mul(_) => BinOp::Mul,
                syn::BinOp::Div(_) => BinOp::Div,
                syn::BinOp::Rem(_) => BinOp::Rem,
                syn::BinOp::Shl(_) => BinOp::Shl,
                syn::BinOp::Eq(_) => BinOp::Eq,
                syn::BinOp::Ne(_) => BinOp::Ne,
                syn::BinOp::Lt(_) => BinOp::Lt,
                syn::BinOp::Le(_) => BinOp::Le,
                syn::BinOp::Gt(_) => BinOp::Gt,
                syn::BinOp::Ge(_) => BinOp::Ge,
                syn::BinOp::And(_) => BinOp::And,
                syn::BinOp::Or(_) => BinOp::Or,
                other => {
                    return Err(syn::Error::new(
                        other.span(),
                        "expected one of + - * / % << == != < <= > >= && ||",
                    ));
                }
            };
            ParamExpr::Binary(op, boxed(&b.left)?, boxed(&b.right)?)
        }
        Expr::Call(call) => {
            let name = match &*call.func {
                Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
                _ => None,
            };
            let Some((func, arity)) = name.as_deref().and_then(Func::named) else {
                return Err(syn::Error::new(
                    call.func.span(),
                    "unknown function\n  = help: expected `min(a, b)`, `max(a, b)`, `cdiv(a, b)` (division rounded up) or `pow2(a)` (a is a power of two)",
                ));
            };
            if call.args.len() != arity {
                return Err(syn::Error::new(
                    call.span(),
                    format!("`{}` takes {arity} argument(s)", name.unwrap_or_default()),
                ));
            }
            ParamExpr::Call(
                func,
                call.args
                    .iter()
                    .map(param_expr)
                    .collect::<syn::Result<_>>()?,
            )
        }
        other => {
            return Err(syn::Error::new(
                other.span(),
                "expected an integer expression over overrides and sizes, e.g. `X * Y`, `pow2(TILE)` or `n % TILE == 0`",
            ));
        }
    })
}

/// Converts a Rust expression into a size expression (postfix program).
pub fn size_expr(expr: &Expr) -> syn::Result<SizeExpr> {
    let mut ops = Vec::new();
    push_ops(expr, &mut ops)?;
    Ok(SizeExpr::from_ops(ops))
}

fn push_ops(expr: &Expr, ops: &mut Vec<Op>) -> syn::Result<()> {
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => ops.push(Op::Lit(i.base10_parse()?)),
        Expr::Path(p) if p.path.get_ident().is_some() => {
            let ident = p.path.get_ident().expect("checked");
            ops.push(Op::Size(Cow::Owned(ident.to_string())));
        }
        Expr::Paren(p) => push_ops(&p.expr, ops)?,
        Expr::Group(g) => push_ops(&g.expr, ops)?,
        Expr::Binary(b) => {
            push_ops(&b.left, ops)?;
            push_ops(&b.right, ops)?;
            ops.push(match b.op {
                syn::BinOp::Add(_) => Op::Add,
                syn::BinOp::Sub(_) => Op::Sub,
                syn::BinOp::Mul(_) => Op::Mul,
                syn::BinOp::Div(_) => Op::Div,
                syn::BinOp::Rem(_) => Op::Rem,
                other => {
                    return Err(syn::Error::new(
                        other.span(),
                        "only + - * / % are allowed in a size expression",
                    ));
                }
            });
        }
        Expr::Call(call) => {
            let name = match &*call.func {
                Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
                _ => None,
            };
            let Some(op) = name.as_deref().and_then(Op::function) else {
                return Err(syn::Error::new(
                    call.func.span(),
                    "only `min(a, b)`, `max(a, b)` and `cdiv(a, b)` (division rounded up) can be called in a size expression",
                ));
            };
            if call.args.len() != 2 {
                return Err(syn::Error::new(
                    call.span(),
                    format!(
                        "`{}` takes two arguments, e.g. `{}(n, 256)`",
                        name.unwrap_or_default(),
                        op.function_name().unwrap_or("min")
                    ),
                ));
            }
            for a in &call.args {
                push_ops(a, ops)?;
            }
            ops.push(op);
        }
        other => {
            return Err(syn::Error::new(
                other.span(),
                "expected a size expression over named sizes and integers, e.g. `rows * cols`, `(n + 3) / 4` or `cdiv(n, 256)`",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote_free::ts;

    /// Tiny helper so tests read like the attribute.
    mod quote_free {
        pub fn ts(s: &str) -> proc_macro2::TokenStream {
            s.parse().expect("tokens")
        }
    }

    #[test]
    fn parses_the_full_grammar() {
        let (spec, _) = parse_spec(ts(r#"
            path = "shaders/softmax.wgsl", entry = "main",
            sizes(rows = 4096, cols = 1 << 12),
            tune_shapes = [(rows = 4096, cols = 4096), (rows = 1)],
            verify_shapes = [(rows = 33, cols = 1000)],
            bind(input = input(rows * cols, range(-2.0, 2.0)), 1 = output(rows * cols),
                 1.2 = uniform(rows, cols, 0.5), idx = input(n, range(0, n))),
            grid = (rows, 1),
            params(TILE = [8, 16]),
            tolerance = 1e-4, flops = 2 * rows * cols,
        "#))
        .unwrap();
        assert_eq!(spec.source, SourceRef::Path("shaders/softmax.wgsl".into()));
        assert_eq!(
            spec.sizes,
            vec![("rows".into(), 4096), ("cols".into(), 4096)]
        );
        assert_eq!(spec.tune_shapes.len(), 2);
        assert_eq!(spec.bindings.len(), 4);
        assert_eq!(
            spec.bindings[1].target,
            BindingRef::Slot {
                group: 0,
                binding: 1
            }
        );
        assert_eq!(
            spec.bindings[2].target,
            BindingRef::Slot {
                group: 1,
                binding: 2
            }
        );
        assert_eq!(spec.bindings[2].values.len(), 3);
        assert_eq!(
            spec.bindings[0].len.as_ref().unwrap().to_string(),
            "rows * cols"
        );
        assert!(matches!(
            spec.bindings[0].init,
            Some(Init::Range(Value::Float(-2.0), Value::Float(2.0)))
        ));
        assert_eq!(spec.dispatch.as_ref().unwrap().size.len(), 2);
        assert_eq!(spec.params, vec![("TILE".into(), vec![8.0, 16.0])]);
        assert_eq!(spec.tolerance, Some(1e-4));
        assert_eq!(spec.flops.unwrap().to_string(), "2 * rows * cols");
    }

    #[track_caller]
    fn check_err(tokens: &str, needle: &str) {
        let err = parse_spec(ts(tokens)).expect_err("should fail").to_string();
        assert!(
            err.contains(needle),
            "error `{err}` should contain `{needle}`"
        );
    }

    #[test]
    fn structured_distributions_parse_and_print_back() {
        let (spec, _) = parse_spec(ts(r#"
            source = "",
            bind(mask = input(heads * rows * cols, causal_mask(rows, cols)),
                 p = input(rows * cols, probabilities(cols)), w = input(n, bits()),
                 ids = input(n, range(0, vocab))),
        "#))
        .unwrap();
        let inits: Vec<String> = spec
            .bindings
            .iter()
            .map(|b| b.init.as_ref().unwrap().to_string())
            .collect();
        assert_eq!(
            inits,
            [
                "causal_mask(rows, cols)",
                "probabilities(cols)",
                "bits()",
                "range(0, vocab)"
            ]
        );
        assert_eq!(
            spec.bindings[0].len.as_ref().unwrap().to_string(),
            "heads * rows * cols"
        );
        check_err(r#"source = "", bind(w = input(n, bits))"#, "write `bits()`");
        check_err(
            r#"source = "", bind(m = input(n, causal_mask(rows)))"#,
            "takes the rows and columns",
        );
        check_err(
            r#"source = "", bind(p = input(n, probabilities()))"#,
            "takes the length of one row",
        );
        check_err(
            r#"source = "", bind(w = input(n, bits(8)))"#,
            "takes no arguments",
        );
        check_err(
            r#"source = "", bind(w = input(n, normal(0, 1)))"#,
            "`causal_mask(rows, cols)`, `probabilities(cols)` or `bits()`",
        );
    }

    #[test]
    fn errors_explain_what_is_expected() {
        check_err(r#"path = "a", colour = 3"#, "unknown key `colour`");
        check_err(r#"sizes(n = 3)"#, "missing the WGSL");
        check_err(r#"path = "a", source = "b""#, "give the WGSL once");
        check_err(
            r#"path = "a", bind(x = banana(n))"#,
            "unknown binding role `banana`",
        );
        check_err(
            r#"path = "a", bind(x = input(n.len()))"#,
            "expected a size expression",
        );
        check_err(
            r#"path = "a", bind(x = output(n, range(0, 1)))"#,
            "poisoned",
        );
        check_err(
            r#"path = "a", grid = (a, b, c, d)"#,
            "one to three dimensions",
        );
        check_err(r#"path = "a", grid = (n), workgroups = (n)"#, "not both");
        check_err(r#"path = "a", tolerance = 2.0"#, "must be in (0, 1)");
        check_err(r#"path = "a", entry = "x", entry = "y""#, "given twice");
        check_err(r#"path = "a", sizes(n = 1, n = 2)"#, "given twice");
        check_err(
            r#"path = "a", reference(path = "r.wgsl")"#,
            "needs its own launch rule",
        );
        check_err(r#"path = "a", reference(grid = (n))"#, "needs its WGSL");
        check_err(
            r#"path = "a", reference(path = "r", source = "s", grid = (n))"#,
            "WGSL once",
        );
        check_err(
            r#"path = "a", reference(path = "r", grid = (n), workgroups = (n))"#,
            "one launch rule",
        );
        check_err(
            r#"path = "a", reference(path = "r", tile = 4)"#,
            "unknown key `tile` in `reference(..)`",
        );
        check_err(r#"path = "a", params(T = log(X))"#, "unknown function");
        check_err(r#"path = "a", params(T = min(X))"#, "takes 2 argument(s)");
        check_err(r#"path = "a", constraints()"#, "at least one condition");
        check_err(r#"path = "a", grid = (ceil(n, 4))"#, "only `min(a, b)`");
        check_err(
            r#"path = "a", bind(x = input(values()))"#,
            "expected an input distribution",
        );
    }

    #[test]
    fn stages_give_each_launch_an_entry_point_and_a_launch_rule() {
        let (spec, spans) = parse_spec(ts(
            r#"source = "", sizes(n = 8),
               stages = [(entry = "partial", workgroups = (cdiv(n, 256))), (entry = "combine", grid = (1, 2))]"#,
        ))
        .unwrap();
        assert_eq!(spec.entry, None);
        assert_eq!(spec.dispatch, None);
        assert_eq!(spec.stages.len(), 2);
        assert_eq!(spec.stages[0].entry, "partial");
        assert_eq!(spec.stages[0].dispatch.mode, DispatchMode::Workgroups);
        assert_eq!(spec.stages[0].dispatch.size[0].to_string(), "cdiv(n, 256)");
        assert_eq!(spec.stages[1].entry, "combine");
        assert_eq!(spec.stages[1].dispatch.mode, DispatchMode::Grid);
        assert_eq!(spec.stages[1].dispatch.size.len(), 2);
        assert!(spans.name_span(Loc::StageDispatch(0), "n").is_some());

        check_err(
            r#"source = "", stages = [(entry = "a")]"#,
            "stage 1 (`a`) needs its launch rule",
        );
        check_err(
            r#"source = "", stages = [(workgroups = (1))]"#,
            "stage 1 needs its entry point",
        );
        check_err(
            r#"source = "", stages = [(entry = "a", workgroups = (1), threads = 4)]"#,
            "unknown key `threads` in a stage",
        );
        check_err(
            r#"source = "", stages = []"#,
            "`stages` needs at least one launch",
        );
        check_err(
            r#"source = "", entry = "a", stages = [(entry = "a", workgroups = (1))]"#,
            "`entry` and `stages` both say what to launch",
        );
        check_err(
            r#"source = "", stages = [(entry = "a", workgroups = (1))], grid = (n)"#,
            "`grid` and `stages` both say what to launch",
        );
    }

    #[test]
    fn a_reference_has_its_own_source_entry_and_launch_rule() {
        let (spec, spans) = parse_spec(ts(r#"
            path = "k.wgsl",
            sizes(rows = 8, cols = 8),
            reference(path = "k_ref.wgsl", entry = "fast", workgroups = ((cols + 63) / 64, rows)),
        "#))
        .unwrap();
        let r = spec.reference.expect("a reference");
        assert_eq!(r.source, SourceRef::Path("k_ref.wgsl".into()));
        assert_eq!(r.entry.as_deref(), Some("fast"));
        assert_eq!(r.dispatch.mode, DispatchMode::Workgroups);
        assert_eq!(r.dispatch.size[0].to_string(), "(cols + 63) / 64");
        assert!(spans.name_span(Loc::ReferenceDispatch, "rows").is_some());
        let (spec, _) = parse_spec(ts(r#"path = "k.wgsl", sizes(n = 8)"#)).unwrap();
        assert_eq!(spec.reference, None);
    }

    #[test]
    fn parses_derived_parameters_constraints_and_launch_functions() {
        let (spec, spans) = parse_spec(ts(r#"
            path = "k.wgsl", sizes(n = 1024),
            bind(x = input(cdiv(n, 4)), dims = input(values(n, 2 * n))),
            workgroups = (min(cdiv(n, 256), 65535)),
            params(X = [8, 16], Y = [8, 16], THREADS = X * Y, ITEMS = [1, 2]),
            constraints(ITEMS == 2 || THREADS <= 128, pow2(ITEMS), n % (THREADS * ITEMS) == 0, !false),
        "#))
        .unwrap();
        assert_eq!(spec.params.len(), 3);
        assert_eq!(spec.derived.len(), 1);
        assert_eq!(spec.derived[0].0, "THREADS");
        assert_eq!(spec.derived[0].1.to_string(), "X * Y");
        let c: Vec<String> = spec.constraints.iter().map(|c| c.to_string()).collect();
        assert_eq!(
            c,
            vec![
                "ITEMS == 2 || THREADS <= 128",
                "pow2(ITEMS)",
                "n % (THREADS * ITEMS) == 0",
                "!0"
            ]
        );
        assert_eq!(
            spec.bindings[0].len.as_ref().unwrap().to_string(),
            "cdiv(n, 4)"
        );
        assert!(matches!(&spec.bindings[1].init, Some(Init::Values(v)) if v.len() == 2));
        assert_eq!(
            spec.dispatch.unwrap().size[0].to_string(),
            "min(cdiv(n, 256), 65535)"
        );
        assert!(spans.name_span(Loc::Constraint(2), "THREADS").is_some());
        assert!(spans.name_span(Loc::Derived(0), "Y").is_some());
    }
}
