//! Content hashes: what makes a cache entry belong to a kernel.
//!
//! The hash covers the original WGSL text (line endings normalized), the entry point and the
//! baseline's dispatch rule, because a variant is only valid for the computation *and* the launch
//! geometry it was verified against. It does not cover the tune shapes or input distributions:
//! changing those does not make a verified variant wrong, only possibly less tuned.
//!
//! Invariant: hashing uses the text as the user wrote it, never naga's writer output (which renames
//! identifiers and is not a stable round trip).

use sha2::{Digest, Sha256};

/// 16 lower-case hex digits of a digest's first 8 bytes.
pub fn hex16(digest: &[u8]) -> String {
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The content hash of a kernel: 16 hex digits of a sha256.
pub fn content_hash(wgsl: &str, entry: &str, dispatch: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"kernelfoundry-kernel-v1\0");
    hasher.update(wgsl.replace("\r\n", "\n").as_bytes());
    hasher.update(b"\0");
    hasher.update(entry.as_bytes());
    hasher.update(b"\0");
    hasher.update(dispatch.as_bytes());
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
    fn content_hash_normalizes_line_endings_only() {
        let a = content_hash("fn main() {}\n", "main", "grid(n, 1, 1)");
        assert_eq!(a, content_hash("fn main() {}\r\n", "main", "grid(n, 1, 1)"));
        assert_ne!(a, content_hash("fn main()  {}\n", "main", "grid(n, 1, 1)"));
        assert_ne!(a, content_hash("fn main() {}\n", "other", "grid(n, 1, 1)"));
        assert_ne!(
            a,
            content_hash("fn main() {}\n", "main", "grid(n / 2, 1, 1)")
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
