//! Where the LLM is and how to use it: the endpoint, the models and their weights and prices, the
//! sampling settings, the limits on time and concurrency, and the evolution constants.
//!
//! Layers, later ones winning: the defaults, `[workspace.metadata.kernelfoundry.llm]` of the
//! workspace manifest, `[package.metadata.kernelfoundry.llm]` of the package being tuned, the
//! environment (`KERNELFOUNDRY_LLM_URL`, `KERNELFOUNDRY_LLM_MODEL`, `KERNELFOUNDRY_LLM_API_KEY`
//! falling back to `OPENAI_API_KEY`), then the command line.
//!
//! Invariant: the API key comes only from the environment (a manifest is committed; a key in it is
//! refused), lives only in an [`ApiKey`] that prints as `***`, and is never serialized.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// The default endpoint: OpenAI's.
pub const DEFAULT_URL: &str = "https://api.openai.com/v1";

/// A secret that never prints: `Debug` shows `ApiKey(***)`, and there is no `Display` or
/// `Serialize`. [`ApiKey::expose`] is for the request header only.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// A key; `None` for an empty or blank value.
    pub fn new(value: impl Into<String>) -> Option<ApiKey> {
        let v = value.into();
        (!v.trim().is_empty()).then(|| ApiKey(v.trim().to_owned()))
    }

    /// The key itself, for the `Authorization` header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// `text` with every occurrence of `key` replaced by `[redacted]`. Applied to every error message,
/// log line and file the LLM code writes, as a second line of defence.
pub fn redact(text: &str, key: Option<&ApiKey>) -> String {
    match key {
        Some(k) if !k.0.is_empty() => text.replace(&k.0, "[redacted]"),
        _ => text.to_owned(),
    }
}

/// One model of the ensemble.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// The model name the endpoint knows.
    pub name: String,
    /// Relative share of the requests (default 1).
    #[serde(default = "one")]
    pub weight: f64,
    /// US dollars per million prompt tokens, for the cost in the summary.
    #[serde(default)]
    pub input_price: Option<f64>,
    /// US dollars per million completion tokens.
    #[serde(default)]
    pub output_price: Option<f64>,
}

fn one() -> f64 {
    1.0
}

/// The resolved configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct LlmConfig {
    /// Use the LLM in `tune` without `--llm`.
    pub enabled: bool,
    /// The endpoint's base URL (`…/v1`), or the full `…/chat/completions` URL.
    pub url: String,
    /// The ensemble; each request draws one model by weight.
    pub models: Vec<ModelSpec>,
    /// The model of meta-prompt calls (default: the first model).
    pub meta_model: Option<String>,
    /// From the environment only.
    pub api_key: Option<ApiKey>,
    /// Sampling temperature.
    pub temperature: f64,
    /// Most tokens of one answer.
    pub max_tokens: u32,
    /// Seconds one HTTP request may take (connection included).
    pub timeout_s: f64,
    /// Retries of a request after a 429, a 5xx, a timeout or a broken answer.
    pub retries: u32,
    /// First backoff in seconds, doubled per retry (a `Retry-After` header wins).
    pub backoff_s: f64,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// LLM children per generation (at most one per island; offline operators fill the rest).
    pub per_generation: usize,
    /// A meta-prompt call after every this many evaluated answers (0: never).
    pub meta_every: u32,
    /// Prompt genomes kept.
    pub population: usize,
    /// Probability that a generation's first request repairs the oldest failed answer.
    pub repair: f64,
    /// Probability that a request for a correct parent without overrides asks for a template.
    pub template: f64,
    /// Most parameter points swept per template.
    pub template_points: usize,
    /// Where answers are cached (default: `<target>/kernelfoundry/llm-cache`).
    pub cache_dir: Option<PathBuf>,
    /// Answer only from the cache; never send a request.
    pub replay_only: bool,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            enabled: false,
            url: DEFAULT_URL.to_owned(),
            models: Vec::new(),
            meta_model: None,
            api_key: None,
            temperature: 0.7,
            max_tokens: 4096,
            timeout_s: 120.0,
            retries: 4,
            backoff_s: 2.0,
            concurrency: 4,
            per_generation: 2,
            meta_every: 8,
            population: 8,
            repair: 0.5,
            template: 0.25,
            template_points: 8,
            cache_dir: None,
            replay_only: false,
        }
    }
}

/// The `[…metadata.kernelfoundry.llm]` table; every key optional.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Layer {
    enabled: Option<bool>,
    url: Option<String>,
    model: Option<String>,
    models: Option<Vec<ModelSpec>>,
    meta_model: Option<String>,
    api_key: Option<toml::Value>,
    temperature: Option<f64>,
    max_tokens: Option<u32>,
    timeout_s: Option<f64>,
    retries: Option<u32>,
    backoff_s: Option<f64>,
    concurrency: Option<usize>,
    per_generation: Option<usize>,
    meta_every: Option<u32>,
    population: Option<usize>,
    repair: Option<f64>,
    template: Option<f64>,
    template_points: Option<usize>,
    cache_dir: Option<PathBuf>,
    input_price: Option<f64>,
    output_price: Option<f64>,
}

/// Why the configuration could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A manifest could not be read or parsed.
    #[error("cannot read {path}: {message}")]
    Manifest {
        /// The manifest.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// A value is out of range or the table has an unknown key.
    #[error("{path}: [{table}] {message}")]
    Invalid {
        /// The manifest.
        path: String,
        /// `workspace.metadata.kernelfoundry.llm` or `package.metadata.kernelfoundry.llm`.
        table: String,
        /// What is wrong.
        message: String,
    },
    /// An environment variable is malformed.
    #[error("{var}: {message}")]
    Env {
        /// The variable.
        var: String,
        /// What is wrong.
        message: String,
    },
}

impl LlmConfig {
    /// Reads the layers: `workspace_manifest`'s workspace table, `package_manifest`'s package
    /// table (when given), then the environment through `env`.
    pub fn load(
        workspace_manifest: Option<&Path>,
        package_manifest: Option<&Path>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<LlmConfig, ConfigError> {
        let mut config = LlmConfig::default();
        if let Some(path) = workspace_manifest {
            config.apply_manifest(path, "workspace")?;
        }
        if let Some(path) = package_manifest {
            config.apply_manifest(path, "package")?;
        }
        config.apply_env(env)?;
        Ok(config)
    }

    fn apply_manifest(&mut self, path: &Path, top: &str) -> Result<(), ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                return Err(ConfigError::Manifest {
                    path: path.display().to_string(),
                    message: e.to_string(),
                });
            }
        };
        let table: toml::Table =
            text.parse()
                .map_err(|e: toml::de::Error| ConfigError::Manifest {
                    path: path.display().to_string(),
                    message: e.message().to_owned(),
                })?;
        let Some(llm) = table
            .get(top)
            .and_then(|t| t.get("metadata"))
            .and_then(|t| t.get("kernelfoundry"))
            .and_then(|t| t.get("llm"))
        else {
            return Ok(());
        };
        let name = format!("{top}.metadata.kernelfoundry.llm");
        self.apply_layer_value(llm.clone(), &path.display().to_string(), &name)
    }

    /// Applies one table's values (exposed for tests of the precedence).
    fn apply_layer_value(
        &mut self,
        value: toml::Value,
        path: &str,
        table: &str,
    ) -> Result<(), ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            path: path.to_owned(),
            table: table.to_owned(),
            message,
        };
        let layer: Layer = value
            .try_into()
            .map_err(|e: toml::de::Error| invalid(e.message().to_owned()))?;
        if layer.api_key.is_some() {
            return Err(invalid(
                "`api_key` is not read from a manifest (manifests are committed); set KERNELFOUNDRY_LLM_API_KEY or OPENAI_API_KEY in the environment".into(),
            ));
        }
        if layer.model.is_some() && layer.models.is_some() {
            return Err(invalid("give `model` or `models`, not both".into()));
        }
        macro_rules! set {
            ($($f:ident),*) => { $( if let Some(v) = layer.$f { self.$f = v; } )* };
        }
        set!(
            enabled,
            url,
            temperature,
            max_tokens,
            timeout_s,
            retries,
            backoff_s,
            concurrency,
            per_generation,
            meta_every,
            population,
            repair,
            template,
            template_points
        );
        if let Some(m) = layer.meta_model {
            self.meta_model = Some(m);
        }
        if let Some(d) = layer.cache_dir {
            self.cache_dir = Some(d);
        }
        if let Some(name) = layer.model {
            self.models = vec![ModelSpec {
                name,
                weight: 1.0,
                input_price: layer.input_price,
                output_price: layer.output_price,
            }];
        } else if let Some(models) = layer.models {
            self.models = models;
        } else if layer.input_price.is_some() || layer.output_price.is_some() {
            for m in &mut self.models {
                m.input_price = layer.input_price.or(m.input_price);
                m.output_price = layer.output_price.or(m.output_price);
            }
        }
        self.check().map_err(invalid)
    }

    fn apply_env(&mut self, env: &dyn Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        if let Some(url) = env("KERNELFOUNDRY_LLM_URL").filter(|v| !v.trim().is_empty()) {
            self.url = url.trim().to_owned();
        }
        if let Some(models) = env("KERNELFOUNDRY_LLM_MODEL").filter(|v| !v.trim().is_empty()) {
            self.models =
                parse_models(&models, &self.models).map_err(|message| ConfigError::Env {
                    var: "KERNELFOUNDRY_LLM_MODEL".into(),
                    message,
                })?;
        }
        self.api_key = env("KERNELFOUNDRY_LLM_API_KEY")
            .and_then(ApiKey::new)
            .or_else(|| env("OPENAI_API_KEY").and_then(ApiKey::new));
        Ok(())
    }

    /// Range checks; `Err` says what is wrong.
    pub fn check(&self) -> Result<(), String> {
        if !(0.0..=2.0).contains(&self.temperature) {
            return Err(format!("temperature {} is not in 0–2", self.temperature));
        }
        if self.max_tokens == 0 {
            return Err("max_tokens must be positive".into());
        }
        if self.timeout_s.is_nan() || self.timeout_s <= 0.0 {
            return Err("timeout_s must be positive".into());
        }
        if self.backoff_s.is_nan() || self.backoff_s < 0.0 {
            return Err("backoff_s must not be negative".into());
        }
        if self.concurrency == 0 {
            return Err("concurrency must be at least 1".into());
        }
        if self.per_generation == 0 {
            return Err("per_generation must be at least 1".into());
        }
        if self.population == 0 {
            return Err("population must be at least 1".into());
        }
        for (name, p) in [("repair", self.repair), ("template", self.template)] {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("{name} {p} is not a probability"));
            }
        }
        for m in &self.models {
            if m.name.trim().is_empty() {
                return Err("a model has an empty name".into());
            }
            if !m.weight.is_finite() || m.weight <= 0.0 {
                return Err(format!(
                    "model {} has weight {}, not positive",
                    m.name, m.weight
                ));
            }
        }
        Ok(())
    }

    /// The model of meta-prompt calls.
    pub fn meta_model(&self) -> Option<&str> {
        self.meta_model
            .as_deref()
            .or_else(|| self.models.first().map(|m| m.name.as_str()))
    }

    /// The price of `model`, if configured.
    pub fn model(&self, name: &str) -> Option<&ModelSpec> {
        self.models.iter().find(|m| m.name == name)
    }
}

/// `a`, `a,b` or `a=3,b=1` (weights after `=`); prices of models already configured are kept.
fn parse_models(text: &str, known: &[ModelSpec]) -> Result<Vec<ModelSpec>, String> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, weight) = match part.rsplit_once('=') {
            Some((n, w)) => (
                n.trim(),
                w.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|w| *w > 0.0 && w.is_finite())
                    .ok_or_else(|| format!("`{w}` is not a positive weight in `{part}`"))?,
            ),
            None => (part, 1.0),
        };
        let prices = known.iter().find(|m| m.name == name);
        out.push(ModelSpec {
            name: name.to_owned(),
            weight,
            input_price: prices.and_then(|m| m.input_price),
            output_price: prices.and_then(|m| m.output_price),
        });
    }
    if out.is_empty() {
        return Err("no model named".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn later_layers_win_and_the_key_comes_from_the_environment() {
        let t = tempfile::tempdir().unwrap();
        let ws = manifest(
            t.path(),
            "ws.toml",
            r#"
[workspace]
[workspace.metadata.kernelfoundry.llm]
url = "http://ws.example/v1"
model = "ws-model"
temperature = 0.2
concurrency = 3
"#,
        );
        let pkg = manifest(
            t.path(),
            "pkg.toml",
            r#"
[package]
name = "p"
[package.metadata.kernelfoundry.llm]
temperature = 0.9
models = [{ name = "a", weight = 3.0, input_price = 1.0, output_price = 4.0 }, { name = "b" }]
"#,
        );
        let c = LlmConfig::load(Some(&ws), Some(&pkg), &env_of(&[])).unwrap();
        assert_eq!(c.url, "http://ws.example/v1");
        assert_eq!(c.temperature, 0.9, "the package overrides the workspace");
        assert_eq!(c.concurrency, 3, "unset keys keep the workspace's value");
        assert_eq!(c.models.len(), 2);
        assert_eq!(c.models[0].weight, 3.0);
        assert_eq!(c.models[1].weight, 1.0);
        assert_eq!(c.api_key, None);

        let env = env_of(&[
            ("KERNELFOUNDRY_LLM_URL", "http://env.example/v1"),
            ("KERNELFOUNDRY_LLM_MODEL", "a=2, c"),
            ("OPENAI_API_KEY", "sk-fallback"),
        ]);
        let c = LlmConfig::load(Some(&ws), Some(&pkg), &env).unwrap();
        assert_eq!(
            c.url, "http://env.example/v1",
            "the environment overrides manifests"
        );
        assert_eq!(
            c.models
                .iter()
                .map(|m| (m.name.as_str(), m.weight))
                .collect::<Vec<_>>(),
            vec![("a", 2.0), ("c", 1.0)]
        );
        assert_eq!(c.models[0].input_price, Some(1.0), "known prices are kept");
        assert_eq!(c.api_key.as_ref().map(ApiKey::expose), Some("sk-fallback"));

        let env = env_of(&[
            ("KERNELFOUNDRY_LLM_API_KEY", "sk-own"),
            ("OPENAI_API_KEY", "sk-fallback"),
        ]);
        let c = LlmConfig::load(Some(&ws), None, &env).unwrap();
        assert_eq!(c.api_key.as_ref().map(ApiKey::expose), Some("sk-own"));
        assert_eq!(c.models[0].name, "ws-model");
    }

    #[test]
    fn a_key_in_a_manifest_is_refused_without_echoing_it() {
        let t = tempfile::tempdir().unwrap();
        let ws = manifest(
            t.path(),
            "ws.toml",
            "[workspace.metadata.kernelfoundry.llm]\napi_key = \"sk-secret-in-git\"\n",
        );
        let e = LlmConfig::load(Some(&ws), None, &env_of(&[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("KERNELFOUNDRY_LLM_API_KEY"), "{e}");
        assert!(!e.contains("sk-secret-in-git"), "{e}");
    }

    #[test]
    fn bad_values_and_unknown_keys_are_errors() {
        let t = tempfile::tempdir().unwrap();
        for (text, says) in [
            ("temperature = 3.0", "temperature"),
            ("concurrency = 0", "concurrency"),
            ("modle = \"x\"", "unknown field"),
            ("model = \"a\"\nmodels = [{ name = \"b\" }]", "not both"),
            ("models = [{ name = \"b\", weight = 0.0 }]", "weight"),
        ] {
            let ws = manifest(
                t.path(),
                "ws.toml",
                &format!("[workspace.metadata.kernelfoundry.llm]\n{text}\n"),
            );
            let e = LlmConfig::load(Some(&ws), None, &env_of(&[]))
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
        let e = LlmConfig::load(None, None, &env_of(&[("KERNELFOUNDRY_LLM_MODEL", "a=-1")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("KERNELFOUNDRY_LLM_MODEL"), "{e}");
    }

    #[test]
    fn the_key_never_prints() {
        let key = ApiKey::new("sk-abcdef").unwrap();
        assert_eq!(format!("{key:?}"), "ApiKey(***)");
        let config = LlmConfig {
            api_key: Some(key.clone()),
            ..LlmConfig::default()
        };
        assert!(!format!("{config:?}").contains("sk-abcdef"));
        assert_eq!(
            redact("Bearer sk-abcdef failed", Some(&key)),
            "Bearer [redacted] failed"
        );
        assert_eq!(ApiKey::new("  "), None);
    }
}
