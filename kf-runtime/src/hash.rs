//! Content hashes: what makes a cache entry belong to a kernel.
//!
//! The content hash covers everything that decides whether a variant is *correct* for a kernel:
//! the original WGSL text (line endings normalized), the entry point, the baseline's dispatch
//! rule, and the kernel's *contract* — a canonical serialization of the spec parts the verifier
//! judges by (every binding's role, length, input distribution and uniform values, the tolerance,
//! and the verify shapes when the spec gives them; see `resolve::ResolvedKernel`). Editing any of
//! these files the kernel under a new hash, so entries verified against the old meaning stop
//! matching and the runtime falls back to the baseline.
//!
//! What only decides how *fast* a variant is — tune shapes, `params(..)` candidates, the search
//! budget — is left out: an edit there leaves the entry valid but *stale* (see
//! `cache::TuningRecord`), which `list` reports and `tune` retunes.
//!
//! Hash version 2 added the contract; entries written under version 1 (without it) sit under
//! other hash directories and are simply no longer matched.
//!
//! Invariant: hashing uses the text as the user wrote it, never naga's writer output (which renames
//! identifiers and is not a stable round trip).

use sha2::{Digest, Sha256};

/// 16 lower-case hex digits of a digest's first 8 bytes.
pub fn hex16(digest: &[u8]) -> String {
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The content hash of a kernel: 16 hex digits of a sha256 over its WGSL, entry point, dispatch
/// rule and contract (the canonical text of its correctness-relevant spec parts).
pub fn content_hash(wgsl: &str, entry: &str, dispatch: &str, contract: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"kernelfoundry-kernel-v2\0");
    hasher.update(wgsl.replace("\r\n", "\n").as_bytes());
    hasher.update(b"\0");
    hasher.update(entry.as_bytes());
    hasher.update(b"\0");
    hasher.update(dispatch.as_bytes());
    hasher.update(b"\0");
    hasher.update(contract.as_bytes());
    hex16(&hasher.finalize())
}

/// A short id for a variant: `v` + 10 hex digits over its source and its constants.
pub fn variant_id(wgsl: &str, constants: &[(&str, f64)], dispatch: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"kernelfoundry-variant-v1\0");
    hasher.update(wgsl.as_bytes());
    for (name, value) in constants {
        hasher.update(format!("\0{name}={value}").as_bytes());
    }
    hasher.update(b"\0");
    hasher.update(dispatch.as_bytes());
    let digest = hasher.finalize();
    format!("v{}", &hex16(&digest)[..10])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_hash_covers_every_part_and_normalizes_line_endings_only() {
        let hash = |wgsl: &str, entry: &str, dispatch: &str, contract: &str| {
            content_hash(wgsl, entry, dispatch, contract)
        };
        let a = hash("fn main() {}\n", "main", "grid(n, 1, 1)", "{}");
        assert_eq!(a, hash("fn main() {}\r\n", "main", "grid(n, 1, 1)", "{}"));
        assert_ne!(a, hash("fn main()  {}\n", "main", "grid(n, 1, 1)", "{}"));
        assert_ne!(a, hash("fn main() {}\n", "other", "grid(n, 1, 1)", "{}"));
        assert_ne!(a, hash("fn main() {}\n", "main", "grid(n / 2, 1, 1)", "{}"));
        assert_ne!(
            a,
            hash("fn main() {}\n", "main", "grid(n, 1, 1)", "{\"t\":1}")
        );
        assert_eq!(a.len(), 16);
    }

    #[test]
    fn variant_id_covers_constants() {
        let a = variant_id("x", &[("WG", 64.0)], "d");
        assert_ne!(a, variant_id("x", &[("WG", 128.0)], "d"));
        assert!(a.starts_with('v') && a.len() == 11);
    }
}
