//! Where the broker is and how to log in: a URL whose credentials never print.
//!
//! `--broker` takes `nats://[user:password@]host[:port]` (or `tls://…` to require TLS; several
//! servers of a cluster separated by commas). A user name without a password is a token, as in
//! NATS's own tools. Credentials missing from the URL come from the environment
//! ([`USER_ENV`]/[`PASSWORD_ENV`], or [`TOKEN_ENV`]); [`CA_ENV`] names a PEM file of root
//! certificates for TLS (and implies it).
//!
//! Invariant: a password or token lives only in a [`Secret`], which prints as `***`; a
//! [`BrokerAddress`] displays as its servers without user info, and [`BrokerAddress::redact`] scrubs
//! any text that might quote the secret (error messages of the client library) before it is shown
//! or written.

use super::BrokerError;
use std::fmt;
use std::path::PathBuf;

/// User name for the broker when the URL has none.
pub const USER_ENV: &str = "KERNELFOUNDRY_BROKER_USER";
/// Password for the broker when the URL has none.
pub const PASSWORD_ENV: &str = "KERNELFOUNDRY_BROKER_PASSWORD";
/// Token for the broker when the URL has no credentials.
pub const TOKEN_ENV: &str = "KERNELFOUNDRY_BROKER_TOKEN";
/// PEM file of root certificates that sign the broker's TLS certificate.
pub const CA_ENV: &str = "KERNELFOUNDRY_BROKER_CA";

/// A password or token: `Debug` shows `***`, there is no `Display` or `Serialize`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The secret itself, for the client library's login only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// How to log in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Auth {
    /// No credentials.
    None,
    /// User and password.
    UserPassword {
        /// The user.
        user: String,
        /// The password.
        password: Secret,
    },
    /// A token.
    Token(Secret),
}

/// The broker's servers and the login.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerAddress {
    /// `scheme://host:port` of each server, without user info.
    pub servers: Vec<String>,
    /// Whether TLS is required (`tls://` or a CA file).
    pub tls: bool,
    /// The login.
    pub auth: Auth,
    /// Root certificates for TLS.
    pub ca: Option<PathBuf>,
}

impl BrokerAddress {
    /// Parses `text` (see the module docs), taking what it lacks from `env`.
    pub fn parse(
        text: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<BrokerAddress, BrokerError> {
        let mut servers = Vec::new();
        let mut auth = Auth::None;
        let mut tls = false;
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let with_scheme = if part.contains("://") {
                part.to_owned()
            } else {
                format!("nats://{part}")
            };
            // The url crate's messages never quote the input, so they are safe to show.
            let url = url::Url::parse(&with_scheme).map_err(|e| {
                BrokerError::Address(format!(
                    "`{}` is not a broker URL ({e})",
                    strip_userinfo(part)
                ))
            })?;
            match url.scheme() {
                "nats" => {}
                "tls" => tls = true,
                other => {
                    return Err(BrokerError::Address(format!(
                        "unsupported scheme `{other}://` (use nats:// or tls://)"
                    )));
                }
            }
            let host = url.host_str().filter(|h| !h.is_empty()).ok_or_else(|| {
                BrokerError::Address(format!("`{}` names no host", strip_userinfo(part)))
            })?;
            if !url.path().trim_matches('/').is_empty() {
                return Err(BrokerError::Address(format!(
                    "`{}` has a path; a broker URL is scheme://[user:password@]host[:port]",
                    strip_userinfo(part)
                )));
            }
            let port = url.port().unwrap_or(4222);
            servers.push(format!("{}://{host}:{port}", url.scheme()));
            let user = percent_decode(url.username());
            let password = url.password().map(percent_decode);
            let here = match (user.is_empty(), password) {
                (true, None) => Auth::None,
                (false, None) => Auth::Token(Secret(user)),
                (_, Some(p)) => Auth::UserPassword {
                    user,
                    password: Secret(p),
                },
            };
            if here != Auth::None {
                if auth != Auth::None && auth != here {
                    return Err(BrokerError::Address(
                        "the servers of the broker URL carry different credentials".into(),
                    ));
                }
                auth = here;
            }
        }
        if servers.is_empty() {
            return Err(BrokerError::Address("the broker URL is empty".into()));
        }
        let nonempty = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        if auth == Auth::None {
            auth = match (
                nonempty(USER_ENV),
                nonempty(PASSWORD_ENV),
                nonempty(TOKEN_ENV),
            ) {
                (Some(user), Some(password), _) => Auth::UserPassword {
                    user,
                    password: Secret(password),
                },
                (_, _, Some(token)) => Auth::Token(Secret(token)),
                (Some(_), None, None) => {
                    return Err(BrokerError::Address(format!(
                        "{USER_ENV} is set but {PASSWORD_ENV} is not"
                    )));
                }
                _ => Auth::None,
            };
        }
        let ca = nonempty(CA_ENV).map(PathBuf::from);
        Ok(BrokerAddress {
            tls: tls || ca.is_some(),
            servers,
            auth,
            ca,
        })
    }

    /// `text` with the password or token replaced by `***`.
    pub fn redact(&self, text: &str) -> String {
        let secret = match &self.auth {
            Auth::None => return text.to_owned(),
            Auth::UserPassword { password, .. } => password,
            Auth::Token(t) => t,
        };
        if secret.0.is_empty() {
            return text.to_owned();
        }
        let mut out = text.replace(&secret.0, "***");
        // The client library may quote a URL with the secret percent-encoded.
        let encoded: String = url::form_urlencoded::byte_serialize(secret.0.as_bytes()).collect();
        if encoded != secret.0 {
            out = out.replace(&encoded, "***");
        }
        out
    }
}

impl fmt::Display for BrokerAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.servers.join(","))
    }
}

/// `part` without anything before an `@` after the scheme, for error messages.
fn strip_userinfo(part: &str) -> String {
    let (scheme, rest) = part.split_once("://").unwrap_or(("", part));
    let host = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
    if scheme.is_empty() {
        host.to_owned()
    } else {
        format!("{scheme}://{host}")
    }
}

/// Decodes `%XX` escapes (user info in a URL is percent-encoded).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(v) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, vars: &[(&str, &str)]) -> Result<BrokerAddress, BrokerError> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        BrokerAddress::parse(text, &|name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn credentials_in_the_url_never_print() {
        let a = parse("nats://kf:s3cr%40t@broker.example:4333", &[]).unwrap();
        assert_eq!(a.servers, ["nats://broker.example:4333"]);
        assert_eq!(
            a.auth,
            Auth::UserPassword {
                user: "kf".into(),
                password: Secret("s3cr@t".into())
            }
        );
        for shown in [a.to_string(), format!("{a:?}")] {
            assert!(!shown.contains("s3cr"), "{shown}");
        }
        assert_eq!(
            a.redact("login as kf:s3cr@t failed (s3cr%40t)"),
            "login as kf:*** failed (***)"
        );
    }

    #[test]
    fn a_user_alone_is_a_token_and_the_port_defaults() {
        let a = parse("tok123@10.0.0.5", &[]).unwrap();
        assert_eq!(a.servers, ["nats://10.0.0.5:4222"]);
        assert_eq!(a.auth, Auth::Token(Secret("tok123".into())));
        assert!(!a.tls);
    }

    #[test]
    fn the_environment_fills_in_missing_credentials() {
        let a = parse(
            "nats://h:1",
            &[(USER_ENV, "u"), (PASSWORD_ENV, "p4ss"), (CA_ENV, "/ca.pem")],
        )
        .unwrap();
        assert_eq!(
            a.auth,
            Auth::UserPassword {
                user: "u".into(),
                password: Secret("p4ss".into())
            }
        );
        assert!(a.tls, "a CA file implies TLS");
        let url_wins = parse("nats://a:b@h:1", &[(USER_ENV, "u"), (PASSWORD_ENV, "p")]).unwrap();
        assert_eq!(
            url_wins.auth,
            Auth::UserPassword {
                user: "a".into(),
                password: Secret("b".into())
            }
        );
        assert!(parse("nats://h:1", &[(USER_ENV, "u")]).is_err());
        let token = parse("nats://h:1", &[(TOKEN_ENV, "t")]).unwrap();
        assert_eq!(token.auth, Auth::Token(Secret("t".into())));
    }

    #[test]
    fn clusters_tls_and_bad_urls() {
        let a = parse("tls://u:p@a:1, tls://u:p@b:2", &[]).unwrap();
        assert_eq!(a.servers, ["tls://a:1", "tls://b:2"]);
        assert!(a.tls);
        assert_eq!(a.to_string(), "tls://a:1,tls://b:2");
        for bad in [
            "http://h:1",
            "",
            "nats://h:1/x",
            "nats://u:p@a:1,nats://v:q@b:2",
        ] {
            let e = parse(bad, &[]).unwrap_err().to_string();
            assert!(!e.contains(":p@") && !e.contains(":q@"), "{e}");
        }
        let e = parse("nats://user:hunter2@:1", &[])
            .unwrap_err()
            .to_string();
        assert!(!e.contains("hunter2"), "{e}");
    }
}
