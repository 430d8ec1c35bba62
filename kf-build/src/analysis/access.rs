//! Which memory a program only reads, whatever access mode it declares.
//!
//! Code generators declare every storage buffer `read_write` (TVM and web-llm do, so one bind
//! group layout serves every kernel), and hand-written kernels often do too. A buffer the program
//! never writes is read-only in effect: its loads have the same value in every iteration and in
//! every invocation, and it can be an operand of a product as well as a `read` buffer. Reading the
//! declared access mode instead made every such kernel look as if it wrote its inputs, and each
//! analysis that asked had its own copy of the test. They all ask here.

use naga::{AddressSpace, Expression, Function, GlobalVariable, Handle, Module, Statement};

/// Whether every load from `g` reads memory that no invocation writes while the program runs: a
/// uniform, a storage buffer declared without write access, or a storage buffer no function of
/// `module` stores to (directly, atomically, or through a pointer argument, which is taken to
/// write every storage buffer).
pub fn read_only(module: &Module, g: Handle<GlobalVariable>) -> bool {
    match module.global_variables[g].space {
        AddressSpace::Uniform => true,
        AddressSpace::Storage { access } => {
            !access.contains(naga::StorageAccess::STORE) || !written(module, g)
        }
        _ => false,
    }
}

/// Whether some function of `module` (the entry points included) stores to `g`.
pub fn written(module: &Module, g: Handle<GlobalVariable>) -> bool {
    module
        .functions
        .iter()
        .map(|(_, f)| f)
        .chain(module.entry_points.iter().map(|ep| &ep.function))
        .any(|f| body_writes(module, f, g, false))
}

/// Whether module function `function` (or one it calls) writes `g`, or writes through a pointer
/// argument, which may point into `g`.
pub fn function_writes(
    module: &Module,
    function: Handle<Function>,
    g: Handle<GlobalVariable>,
) -> bool {
    body_writes(module, &module.functions[function], g, true)
}

/// Whether `f`'s statements store to `g` (directly, atomically, or through a pointer argument),
/// or hand a pointer into it to a helper; with `follow`, also whether a function it calls writes
/// `g` (without, the callees are taken on their own, as [`written`] walks every function).
fn body_writes(module: &Module, f: &Function, g: Handle<GlobalVariable>, follow: bool) -> bool {
    let mut hit = false;
    for_each_stmt(&f.body, &mut |s| {
        let pointer = match s {
            Statement::Store { pointer, .. } | Statement::Atomic { pointer, .. } => *pointer,
            Statement::ImageStore { image, .. } => *image,
            Statement::Call {
                function,
                arguments,
                ..
            } => {
                hit |= arguments.iter().any(|a| root(f, *a) == Root::Global(g))
                    || (follow && function_writes(module, *function, g));
                return;
            }
            _ => return,
        };
        match root(f, pointer) {
            Root::Global(r) if r == g => hit = true,
            Root::Argument => hit = true,
            _ => {}
        }
    });
    hit
}

#[derive(PartialEq)]
enum Root {
    Global(Handle<GlobalVariable>),
    Argument,
    Other,
}

/// What a pointer expression is rooted at.
fn root(f: &Function, mut at: Handle<Expression>) -> Root {
    loop {
        match f.expressions[at] {
            Expression::GlobalVariable(g) => return Root::Global(g),
            Expression::FunctionArgument(_) => return Root::Argument,
            Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => at = base,
            _ => return Root::Other,
        }
    }
}

/// Calls `f` on every statement of `block`, nested blocks included.
pub fn for_each_stmt(block: &naga::Block, f: &mut dyn FnMut(&Statement)) {
    for s in block.iter() {
        f(s);
        match s {
            Statement::Block(b) => for_each_stmt(b, f),
            Statement::If { accept, reject, .. } => {
                for_each_stmt(accept, f);
                for_each_stmt(reject, f);
            }
            Statement::Loop {
                body, continuing, ..
            } => {
                for_each_stmt(body, f);
                for_each_stmt(continuing, f);
            }
            Statement::Switch { cases, .. } => {
                for c in cases {
                    for_each_stmt(&c.body, f);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn global(module: &Module, name: &str) -> Handle<GlobalVariable> {
        module
            .global_variables
            .iter()
            .find(|(_, g)| g.name.as_deref() == Some(name))
            .map(|(h, _)| h)
            .unwrap()
    }

    #[test]
    fn a_read_write_buffer_that_nothing_stores_to_is_read_only() {
        let src = "
            @group(0) @binding(0) var<storage, read_write> a: array<f32>;
            @group(0) @binding(1) var<storage, read_write> b: array<f32>;
            @group(0) @binding(2) var<storage, read_write> c: array<f32>;
            @group(0) @binding(3) var<storage, read_write> d: array<atomic<u32>>;
            @group(0) @binding(4) var<storage, read> e: array<f32>;
            fn put(i: u32, v: f32) { c[i] = v; }
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                b[gid.x] = a[gid.x] + e[gid.x];
                put(gid.x, a[gid.x]);
                atomicAdd(&d[0], 1u);
            }";
        let module = naga::front::wgsl::parse_str(src).unwrap();
        assert!(read_only(&module, global(&module, "a")));
        assert!(read_only(&module, global(&module, "e")));
        assert!(!read_only(&module, global(&module, "b")));
        // Stored in a helper, and atomically.
        assert!(!read_only(&module, global(&module, "c")));
        assert!(!read_only(&module, global(&module, "d")));
    }
}
