//! Adapter identity and the adapter key that names a cache entry.
//!
//! A tuned variant is only known to be fastest on the GPU + driver it was measured on. The key is
//! a sha256 over exactly the fields that identify that combination (vendor id, device id, name,
//! backend, driver, driver info); the readable fields are stored beside it in every cache entry so a
//! human can tell which machine an entry came from.
//!
//! Invariant: the key depends only on [`AdapterIdentity`]'s hashed fields, never on wgpu's `Debug`
//! output, so it is stable across wgpu versions that keep reporting the same driver.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;

/// What wgpu reports about an adapter, reduced to owned, serializable fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdapterIdentity {
    /// Adapter name, e.g. `NVIDIA H200` or `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub name: String,
    /// PCI vendor id (or the backend's equivalent).
    pub vendor: u32,
    /// PCI device id (or the backend's equivalent).
    pub device: u32,
    /// Backend, lower case as wgpu spells it: `vulkan`, `metal`, `dx12`, `gl`, `webgpu`.
    pub backend: String,
    /// Device type as wgpu names it: `DiscreteGpu`, `IntegratedGpu`, `Cpu`, ….
    pub device_type: String,
    /// Driver name, e.g. `NVIDIA` or `llvmpipe`.
    pub driver: String,
    /// Driver version text, e.g. `Mesa 22.3.6 (LLVM 15.0.6)`.
    pub driver_info: String,
}

/// The short content address of an [`AdapterIdentity`]: 16 lower-case hex digits of a sha256.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AdapterKey(String);

impl AdapterKey {
    /// Wraps a key read from a file name or a cache entry. Returns `None` unless it is 16 hex digits.
    pub fn parse(text: &str) -> Option<AdapterKey> {
        (text.len() == 16 && text.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| AdapterKey(text.to_ascii_lowercase()))
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AdapterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AdapterIdentity {
    /// The adapter key: sha256 over vendor, device, name, backend, driver and driver info.
    pub fn key(&self) -> AdapterKey {
        adapter_key(
            self.vendor,
            self.device,
            &self.name,
            &self.backend,
            &self.driver,
            &self.driver_info,
        )
    }

    /// One line for humans: `NVIDIA H200 (vulkan, DiscreteGpu, NVIDIA 580.65)`.
    pub fn describe(&self) -> String {
        format!(
            "{} ({}, {}, {} {})",
            self.name, self.backend, self.device_type, self.driver, self.driver_info
        )
    }
}

/// The adapter key from its parts; see [`AdapterIdentity::key`].
pub fn adapter_key(
    vendor: u32,
    device: u32,
    name: &str,
    backend: &str,
    driver: &str,
    driver_info: &str,
) -> AdapterKey {
    let mut hasher = Sha256::new();
    hasher.update(b"kernelfoundry-adapter-v1\0");
    for field in [
        &format!("{vendor:#x}"),
        &format!("{device:#x}"),
        name,
        backend,
        driver,
        driver_info,
    ] {
        hasher.update(field.as_bytes());
        hasher.update([0u8]);
    }
    AdapterKey(crate::hash::hex16(&hasher.finalize()))
}

#[cfg(feature = "wgpu")]
impl From<&wgpu::AdapterInfo> for AdapterIdentity {
    fn from(info: &wgpu::AdapterInfo) -> Self {
        AdapterIdentity {
            name: info.name.clone(),
            vendor: info.vendor,
            device: info.device,
            backend: info.backend.to_str().to_owned(),
            device_type: format!("{:?}", info.device_type),
            driver: info.driver.clone(),
            driver_info: info.driver_info.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lavapipe() -> AdapterIdentity {
        AdapterIdentity {
            name: "llvmpipe (LLVM 15.0.6, 256 bits)".into(),
            vendor: 0x10005,
            device: 0,
            backend: "vulkan".into(),
            device_type: "Cpu".into(),
            driver: "llvmpipe".into(),
            driver_info: "Mesa 22.3.6 (LLVM 15.0.6)".into(),
        }
    }

    #[test]
    fn key_is_stable_and_sensitive_to_the_driver() {
        let a = lavapipe();
        let key = a.key();
        assert_eq!(key.as_str().len(), 16);
        assert_eq!(AdapterKey::parse(key.as_str()), Some(key.clone()));
        let mut b = a.clone();
        b.device_type = "Other".into();
        assert_eq!(b.key(), key, "device type is not part of the key");
        b.driver_info = "Mesa 23.0".into();
        assert_ne!(b.key(), key, "a driver update is another key");
        // Field boundaries matter: moving text between fields changes the key.
        let mut c = a.clone();
        c.name.push_str("llvmpipe");
        c.driver.clear();
        assert_ne!(c.key(), key);
    }

    #[test]
    fn parse_rejects_non_keys() {
        assert!(AdapterKey::parse("xyz").is_none());
        assert!(AdapterKey::parse("0123456789abcdeg").is_none());
        assert!(AdapterKey::parse("0123456789ABCDEF").is_some());
    }
}
