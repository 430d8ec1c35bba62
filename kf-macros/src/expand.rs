//! Expansion of `#[kernelfoundry(..)]`: parse → read and reflect WGSL → check the spec → pick up
//! cache entries → emit the `Kernel` static.
//!
//! Errors about the user's code are `syn::Error`s on the offending token; problems with cache files
//! are never errors: the entry is skipped, a warning is emitted (through a `#[deprecated]` item, the
//! only way a proc macro can warn on stable Rust) and the reason is embedded so the runtime logs it.
//!
//! Invariant: every file the expansion read is named in an `include_bytes!`/`include_str!`, so
//! cargo rebuilds the crate when one changes. New files are picked up through the build-script
//! helper `kf_build::track_cache()`.

use kf_runtime::AdapterKey;
use kf_runtime::cache::{self, CacheEntry, Outcome};
use kf_runtime::expr::{Op, SizeExpr};
use kf_runtime::interface::{BindingKind, SampleType, TextureAccess, TextureDim};
use kf_runtime::program::{DispatchMode, Program};
use kf_runtime::resolve::{self, ReflectError, ResolveError, ResolvedKernel};
use kf_runtime::spec::{Loc, SourceRef};
use kf_runtime::syntax::{self, SpecSpans};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use std::path::{Path, PathBuf};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Attribute, Ident, Token, Type, Visibility};

/// `static NAME: Kernel;` — a static without a value (the macro provides it).
struct KernelItem {
    attrs: Vec<Attribute>,
    vis: Visibility,
    ident: Ident,
    ty: Type,
}

impl Parse for KernelItem {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        if !input.peek(Token![static]) {
            return Err(input.error(
                "#[kernelfoundry] goes on a static without a value: `pub static NAME: Kernel;`",
            ));
        }
        input.parse::<Token![static]>()?;
        if input.peek(Token![mut]) {
            return Err(input.error("a kernel static cannot be `mut`"));
        }
        let ident: Ident = input.parse()?;
        input.parse::<Token![:]>()?;
        let ty: Type = input.parse()?;
        if input.peek(Token![=]) {
            return Err(input.error(
                "leave the static without a value (`static NAME: Kernel;`): #[kernelfoundry] builds it",
            ));
        }
        input.parse::<Token![;]>()?;
        Ok(KernelItem {
            attrs,
            vis,
            ident,
            ty,
        })
    }
}

fn is_kernel_type(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Kernel"))
}

/// What to emit beside a compile error: the static with a placeholder value, when the item is
/// well-formed enough to name one.
pub fn fallback(item: TokenStream) -> TokenStream {
    match syn::parse2::<KernelItem>(item) {
        Ok(KernelItem {
            attrs,
            vis,
            ident,
            ty,
        }) if is_kernel_type(&ty) => {
            let name = ident.to_string();
            quote!(#(#attrs)* #vis static #ident: #ty = ::kf_runtime::Kernel::__placeholder(#name);)
        }
        _ => TokenStream::new(),
    }
}

pub fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let item: KernelItem = syn::parse2(item)?;
    if !is_kernel_type(&item.ty) {
        return Err(syn::Error::new(
            item.ty.span(),
            "a #[kernelfoundry] static must have type `Kernel` (kf_runtime::Kernel)",
        ));
    }
    let (spec, spans) = syntax::parse_spec(attr)?;
    let name = item.ident.to_string();
    let manifest_dir =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into()));

    let (wgsl, label, wgsl_path) = match &spec.source {
        SourceRef::Path(rel) => {
            let path = manifest_dir.join(rel);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                syn::Error::new(
                    spans.span(Loc::Source),
                    format!(
                        "cannot read WGSL file `{rel}`: {e}\n  = help: paths are relative to the root of crate `{}` (the directory of its Cargo.toml)",
                        std::env::var("CARGO_PKG_NAME").unwrap_or_default()
                    ),
                )
            })?;
            (text, rel.clone(), Some(path))
        }
        SourceRef::Inline(text) => (text.clone(), format!("<inline WGSL of {name}>"), None),
    };

    let kernel = resolve::resolve(&name, &spec, &wgsl, &label)
        .map_err(|e| resolve_error(e, &spans, &label))?;
    // A hand-written reference is checked against the kernel but not embedded: reports run it
    // beside the tuned variant, the app never selects it. Its file is still tracked for rebuilds.
    let mut reference_path = None;
    if let Some(reference) = &spec.reference {
        let (text, label) = match &reference.source {
            SourceRef::Path(rel) => {
                let path = manifest_dir.join(rel);
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    syn::Error::new(
                        spans.span(Loc::Reference),
                        format!(
                            "cannot read the reference's WGSL file `{rel}`: {e}\n  = help: paths are relative to the crate root ({})",
                            manifest_dir.display()
                        ),
                    )
                })?;
                reference_path = Some(path);
                (text, rel.clone())
            }
            SourceRef::Inline(text) => (text.clone(), format!("<inline reference of {name}>")),
        };
        resolve::resolve_reference(&kernel, reference, &text, &label)
            .map_err(|e| resolve_error(e, &spans, &label))?;
    }
    let found = embed_cache(&manifest_dir, &kernel);

    let baseline_wgsl = match &wgsl_path {
        Some(p) => {
            let p = p.to_string_lossy();
            quote!(::kf_runtime::__private::Cow::Borrowed(
                ::core::include_str!(#p)
            ))
        }
        None => quote!(::kf_runtime::__private::Cow::Borrowed(#wgsl)),
    };
    let baseline = program_tokens(&kernel.baseline, baseline_wgsl);
    let bindings = kernel.interface.bindings.iter().map(|b| {
        let (group, binding, bname) = (b.group, b.binding, &b.name);
        let kind = kind_tokens(b.kind);
        quote!(::kf_runtime::Binding { group: #group, binding: #binding, name: #bname, kind: #kind })
    });
    let variants = found
        .variants
        .iter()
        .map(|(rel, entry)| variant_tokens(rel, entry));
    let notes = &found.notes;
    let reference_tracked = reference_path.iter().map(|p| {
        let p = p.to_string_lossy();
        quote!(
            const _: &str = ::core::include_str!(#p);
        )
    });
    let tracked = found.tracked.iter().map(|p| {
        let p = p.to_string_lossy();
        quote!(
            const _: &[u8] = ::core::include_bytes!(#p);
        )
    });
    let warnings: Vec<TokenStream> = found
        .notes
        .iter()
        .enumerate()
        .map(|(i, note)| warning(&item.ident, i, note))
        .collect();
    let KernelItem {
        attrs,
        vis,
        ident,
        ty,
    } = item;
    let content_hash = &kernel.content_hash;
    let measure_plan = kf_runtime::plan::MeasurePlan::of(&kernel).to_json();
    let size_constraints = match kernel.size_constraints().as_slice() {
        [] => String::new(),
        c => serde_json::to_string(c).expect("constraints serialize"),
    };
    Ok(quote! {
        #(#attrs)*
        #vis static #ident: #ty = ::kf_runtime::Kernel {
            name: #name,
            content_hash: #content_hash,
            baseline: #baseline,
            bindings: &[#(#bindings),*],
            variants: &[#(#variants),*],
            build_notes: &[#(#notes),*],
            measure_plan: #measure_plan,
            size_constraints: #size_constraints,
        };
        #(#tracked)*
        #(#reference_tracked)*
        #(#warnings)*
    })
}

fn resolve_error(e: ResolveError, spans: &SpecSpans, label: &str) -> syn::Error {
    match e {
        ResolveError::Wgsl(e @ (ReflectError::Parse { .. } | ReflectError::Validation { .. })) => {
            syn::Error::new(
                spans.span(Loc::Source),
                format!("invalid WGSL in {label}: {}", e.to_string().trim_end()),
            )
        }
        ResolveError::Spec(errors) => {
            let mut iter = errors.into_iter().map(|e| {
                let message = match e.hint {
                    Some(h) => format!("{}\n  = help: {h}", e.message),
                    None => e.message,
                };
                let span = e
                    .culprit
                    .as_deref()
                    .and_then(|n| spans.name_span(e.loc, n))
                    .unwrap_or_else(|| spans.span(e.loc));
                syn::Error::new(span, message)
            });
            let mut first = iter.next().expect("at least one spec error");
            for e in iter {
                first.combine(e);
            }
            first
        }
        ResolveError::Wgsl(ReflectError::Unsupported(why)) => syn::Error::new(
            spans.span(Loc::Source),
            format!("{label} is valid WGSL that KernelFoundry cannot tune yet: {why}"),
        ),
        other => syn::Error::new(spans.span(Loc::Source), format!("{label}: {other}")),
    }
}

/// Cache entries that fit the kernel, notes on those that don't, and every file read.
struct Found {
    variants: Vec<(String, CacheEntry)>,
    notes: Vec<String>,
    tracked: Vec<PathBuf>,
}

fn embed_cache(crate_root: &Path, kernel: &ResolvedKernel) -> Found {
    let scan = cache::scan(crate_root, &kernel.name, &kernel.content_hash);
    let mut found = Found {
        variants: Vec::new(),
        notes: Vec::new(),
        tracked: Vec::new(),
    };
    let rel = |p: &Path| {
        p.strip_prefix(crate_root)
            .unwrap_or(p)
            .to_string_lossy()
            .replace('\\', "/")
    };
    for problem in scan.problems {
        let path = match &problem {
            cache::CacheError::Io { path, .. }
            | cache::CacheError::Corrupt { path, .. }
            | cache::CacheError::Version { path, .. } => path.clone(),
            _ => PathBuf::new(),
        };
        if path.is_file() {
            found.tracked.push(path.clone());
        }
        found.notes.push(format!(
            "skipped cache file {}: {}",
            rel(&path),
            problem
                .to_string()
                .replace(&path.to_string_lossy().to_string(), "it")
        ));
    }
    for (path, entry) in scan.entries {
        found.tracked.push(path.clone());
        match kf_runtime::variant::check_entry(kernel, &entry) {
            Ok(()) => found.variants.push((rel(&path), entry)),
            Err(why) => found
                .notes
                .push(format!("skipped cache file {}: {why}", rel(&path))),
        }
    }
    found
}

fn expr_tokens(e: &SizeExpr) -> TokenStream {
    let ops = e.ops().iter().map(|op| match op {
        Op::Lit(v) => quote!(::kf_runtime::__private::Op::Lit(#v)),
        Op::Size(n) => {
            let n = n.as_ref();
            quote!(::kf_runtime::__private::Op::Size(::kf_runtime::__private::Cow::Borrowed(#n)))
        }
        Op::Add => quote!(::kf_runtime::__private::Op::Add),
        Op::Sub => quote!(::kf_runtime::__private::Op::Sub),
        Op::Mul => quote!(::kf_runtime::__private::Op::Mul),
        Op::Div => quote!(::kf_runtime::__private::Op::Div),
        Op::Rem => quote!(::kf_runtime::__private::Op::Rem),
        Op::Min => quote!(::kf_runtime::__private::Op::Min),
        Op::Max => quote!(::kf_runtime::__private::Op::Max),
        Op::CeilDiv => quote!(::kf_runtime::__private::Op::CeilDiv),
    });
    quote!(::kf_runtime::__private::SizeExpr::from_static(&[#(#ops),*]))
}

fn program_tokens(p: &Program, wgsl: TokenStream) -> TokenStream {
    let entry = p.entry.as_ref();
    let constants = p.constants.iter().map(|(k, v)| {
        let k = k.as_ref();
        quote!((::kf_runtime::__private::Cow::Borrowed(#k), #v))
    });
    let [x, y, z] = p.workgroup_size;
    let bytes = p.workgroup_storage_bytes;
    let dispatch = dispatch_tokens(&p.dispatch);
    // The later launches of a sequence, each an entry point of the same module.
    let then = p.then.iter().map(|s| {
        let entry = s.entry.as_ref();
        let [x, y, z] = s.workgroup_size;
        let bytes = s.workgroup_storage_bytes;
        let dispatch = dispatch_tokens(&s.dispatch);
        quote! {
            ::kf_runtime::Stage {
                entry: ::kf_runtime::__private::Cow::Borrowed(#entry),
                workgroup_size: [#x, #y, #z],
                workgroup_storage_bytes: #bytes,
                dispatch: #dispatch,
            }
        }
    });
    // The buffers the program binds for itself (a split-K variant's partial sums).
    let workspace = p.workspace.iter().map(|w| {
        let (group, binding) = (w.group, w.binding);
        let words = expr_tokens(&w.words);
        quote! {
            ::kf_runtime::Workspace {
                group: #group,
                binding: #binding,
                words: #words,
            }
        }
    });
    quote! {
        ::kf_runtime::Program {
            wgsl: #wgsl,
            entry: ::kf_runtime::__private::Cow::Borrowed(#entry),
            constants: ::kf_runtime::__private::Cow::Borrowed(&[#(#constants),*]),
            workgroup_size: [#x, #y, #z],
            workgroup_storage_bytes: #bytes,
            dispatch: #dispatch,
            then: ::kf_runtime::__private::Cow::Borrowed(&[#(#then),*]),
            workspace: ::kf_runtime::__private::Cow::Borrowed(&[#(#workspace),*]),
        }
    }
}

fn dispatch_tokens(d: &kf_runtime::Dispatch) -> TokenStream {
    let mode = match d.mode {
        DispatchMode::Grid => quote!(Grid),
        DispatchMode::Workgroups => quote!(Workgroups),
    };
    let size = d.size.iter().map(expr_tokens);
    quote! {
        ::kf_runtime::Dispatch {
            mode: ::kf_runtime::DispatchMode::#mode,
            size: [#(#size),*],
        }
    }
}

fn variant_tokens(rel: &str, entry: &CacheEntry) -> TokenStream {
    let a = &entry.adapter.identity;
    let key: &AdapterKey = &entry.adapter.key;
    let key = key.as_str();
    let (name, vendor, device, backend, driver, driver_info) = (
        &a.name,
        a.vendor,
        a.device,
        &a.backend,
        &a.driver,
        &a.driver_info,
    );
    let (outcome, id, program) = match (&entry.outcome, &entry.variant) {
        (Outcome::Tuned, Some(v)) => {
            let wgsl = v.program.wgsl.as_ref();
            let p = program_tokens(
                &v.program,
                quote!(::kf_runtime::__private::Cow::Borrowed(#wgsl)),
            );
            (
                quote!(Tuned),
                v.id.as_str(),
                quote!(::core::option::Option::Some(#p)),
            )
        }
        _ => (
            quote!(BaselineBest),
            "baseline",
            quote!(::core::option::Option::None),
        ),
    };
    let speedup = entry.speedup;
    quote! {
        ::kf_runtime::EmbeddedVariant {
            adapter_key: #key,
            adapter_name: #name,
            vendor: #vendor,
            device: #device,
            backend: #backend,
            driver: #driver,
            driver_info: #driver_info,
            outcome: ::kf_runtime::__private::Outcome::#outcome,
            id: #id,
            program: #program,
            speedup: #speedup,
            file: #rel,
        }
    }
}

/// The tokens of a binding kind, textures and samplers included.
fn kind_tokens(kind: BindingKind) -> TokenStream {
    let p = quote!(::kf_runtime::__private);
    let dim_tokens = |d: TextureDim| match d {
        TextureDim::D1 => quote!(#p::TextureDim::D1),
        TextureDim::D2 => quote!(#p::TextureDim::D2),
        TextureDim::D2Array => quote!(#p::TextureDim::D2Array),
        TextureDim::D3 => quote!(#p::TextureDim::D3),
    };
    match kind {
        BindingKind::Uniform => quote!(#p::BindingKind::Uniform),
        BindingKind::StorageRead => quote!(#p::BindingKind::StorageRead),
        BindingKind::StorageReadWrite => quote!(#p::BindingKind::StorageReadWrite),
        BindingKind::SampledTexture { dim, sample } => {
            let dim = dim_tokens(dim);
            let sample = match sample {
                SampleType::Float { filterable } => {
                    quote!(#p::SampleType::Float { filterable: #filterable })
                }
                SampleType::Uint => quote!(#p::SampleType::Uint),
                SampleType::Sint => quote!(#p::SampleType::Sint),
            };
            quote!(#p::BindingKind::SampledTexture { dim: #dim, sample: #sample })
        }
        BindingKind::StorageTexture {
            dim,
            format,
            access,
        } => {
            let dim = dim_tokens(dim);
            // The variant's name is the format's WGSL name with a capital first letter.
            let name = format.name();
            let format = format_ident!("{}{}", name[..1].to_uppercase(), &name[1..]);
            let access = match access {
                TextureAccess::Read => quote!(Read),
                TextureAccess::Write => quote!(Write),
                TextureAccess::ReadWrite => quote!(ReadWrite),
            };
            quote!(#p::BindingKind::StorageTexture {
                dim: #dim,
                format: #p::TexelFormat::#format,
                access: #p::TextureAccess::#access,
            })
        }
        BindingKind::Sampler { filtering } => {
            quote!(#p::BindingKind::Sampler { filtering: #filtering })
        }
    }
}

/// A compiler warning from a proc macro on stable Rust: a use of a `#[deprecated]` constant whose
/// note carries the message.
fn warning(kernel: &Ident, index: usize, note: &str) -> TokenStream {
    let name = format_ident!(
        "kernelfoundry_cache_{}_{}",
        kernel.to_string().to_lowercase(),
        index
    );
    let note = format!(
        "kernel {kernel}: {note} (the entry is ignored; retune with `cargo kernelfoundry tune`)"
    );
    let span = Span::call_site();
    quote_spanned! {span=>
        const _: () = {
            #[deprecated(note = #note)]
            #[allow(non_upper_case_globals)]
            const #name: () = ();
            #name
        };
    }
}
