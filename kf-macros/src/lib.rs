/*!
`#[kernelfoundry(..)]`: marks a WGSL compute kernel for tuning and embeds its tuned variants.

```
use kf_macros::kernelfoundry;
use kf_runtime::Kernel;

#[kernelfoundry(
    // or `path = "src/saxpy.wgsl"`, relative to the crate root
    source = r#"
struct Params { n: u32, a: f32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < p.n) { y[g.x] = p.a * x[g.x] + y[g.x]; }
}
"#,
    sizes(n = 1048576),                                  // named sizes and their default values
    bind(x = input(n), y = inout(n), p = uniform(n, 2.0)),
    grid = (n),                                          // invocations of the baseline (x, y, z)
)]
pub static SAXPY: Kernel;

assert_eq!(SAXPY.name, "SAXPY");
assert_eq!(SAXPY.baseline.workgroup_size, [64, 1, 1]);
```

At compile time the macro parses and validates the WGSL with naga, checks the spec against naga's
reflection (errors point at the offending token, with a hint), and embeds every cache entry under
`kernelfoundry/<NAME>/<content-hash>/` whose variant still fits the kernel. Entries that do not are
skipped with a warning; the build never fails because of the cache. The grammar is documented in
`kf_runtime::syntax`.
*/

mod expand;

use proc_macro::TokenStream;

/// Marks `static NAME: Kernel;` as a tunable WGSL kernel. See the crate docs for the grammar.
#[proc_macro_attribute]
pub fn kernelfoundry(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    match expand::expand(attr.into(), item.clone()) {
        Ok(tokens) => tokens.into(),
        Err(error) => {
            // The error, plus a placeholder static so uses of it add no unrelated errors.
            let mut tokens = error.into_compile_error();
            tokens.extend(expand::fallback(item));
            tokens.into()
        }
    }
}
