//! Why a request got no answer, in an operator's words: the server's address and the cause
//! (refused, timeout, DNS, TLS with the certificate), found by walking the error's sources
//! through reqwest, hyper and rustls.

use std::error::Error as StdError;
use std::fmt;
use std::io;

use rustls::{AlertDescription, CertificateError};

use super::error::Fault;
use super::gate;
use super::http::RefusedCertificate;

/// A server opsbot could not get a whole answer from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreachable {
    /// `scheme://host:port`: never the path or query, which say nothing about reaching it.
    pub origin: String,
    pub cause: Cause,
}

/// Why a server could not be reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    Refused,
    /// The host name does not resolve.
    Dns,
    /// No connection within the connect timeout.
    ConnectTimeout,
    /// The TLS handshake failed; the text says why, naming the certificate where it is one.
    Tls(String),
    /// The connection broke before a complete answer.
    Closed,
}

impl fmt::Display for Unreachable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let origin = &self.origin;
        match &self.cause {
            Cause::Refused => write!(f, "could not be reached at {origin}: connection refused"),
            Cause::Dns => write!(
                f,
                "could not be reached at {origin}: the host name does not resolve (DNS)"
            ),
            Cause::ConnectTimeout => {
                write!(f, "could not be reached at {origin}: no connection in time")
            }
            Cause::Tls(why) => write!(f, "could not be reached at {origin}: TLS: {why}"),
            Cause::Closed => write!(
                f,
                "lost the connection to {origin} before a complete answer"
            ),
        }
    }
}

/// The fault of a request that got no complete answer.
pub(crate) fn fault(error: &reqwest::Error) -> Fault {
    if error.is_timeout() && !error.is_connect() {
        return Fault::Timeout;
    }
    if let Some(closed) = chain(error).find_map(|e| e.downcast_ref::<gate::Closed>()) {
        return Fault::NotActing(closed.0.clone());
    }
    let origin = error
        .url()
        .map_or_else(|| "?".to_owned(), |url| url.origin().ascii_serialization());
    // A TLS failure is one wherever it surfaces: with TLS 1.3 the server refuses a client
    // certificate only after the client's side of the handshake is done, so its alert arrives
    // on the first read and reqwest reports a failed request, not a failed connection.
    let cause = tls_cause(error).unwrap_or_else(|| {
        if error.is_connect() {
            connect_cause(error)
        } else {
            Cause::Closed
        }
    });
    Fault::Connect(Unreachable { origin, cause })
}

/// The error and everything under it. An io::Error hides what it wraps from `source()`
/// (hyper-rustls wraps rustls's error in two), so the walk looks inside.
fn chain(error: &reqwest::Error) -> impl Iterator<Item = &(dyn StdError + 'static)> {
    let top: &(dyn StdError + 'static) = error;
    std::iter::successors(Some(top), |&current| {
        match current
            .downcast_ref::<io::Error>()
            .and_then(io::Error::get_ref)
        {
            Some(inner) => Some(inner as &(dyn StdError + 'static)),
            None => current.source(),
        }
    })
}

/// The TLS failure under `error`, if that is what it is.
fn tls_cause(error: &reqwest::Error) -> Option<Cause> {
    chain(error)
        .find_map(|current| current.downcast_ref::<rustls::Error>())
        .map(|tls| Cause::Tls(tls_text(tls)))
}

/// The cause of a failed connection (TLS aside), from the first source that tells.
fn connect_cause(error: &reqwest::Error) -> Cause {
    let told = chain(error).find_map(|current| {
        if current.to_string() == "dns error" {
            return Some(Cause::Dns);
        }
        match current.downcast_ref::<io::Error>()?.kind() {
            io::ErrorKind::ConnectionRefused => Some(Cause::Refused),
            io::ErrorKind::TimedOut => Some(Cause::ConnectTimeout),
            _ => None,
        }
    });
    match told {
        Some(cause) => cause,
        None if error.is_timeout() => Cause::ConnectTimeout,
        None => Cause::Closed,
    }
}

/// A TLS failure and what to do about it.
fn tls_text(error: &rustls::Error) -> String {
    match error {
        rustls::Error::InvalidCertificate(CertificateError::Other(other)) => {
            match other.0.downcast_ref::<RefusedCertificate>() {
                Some(named) => format!(
                    "the server's certificate `{}` (issued by `{}`) {}",
                    named.subject,
                    named.issuer,
                    certificate_text(&named.cause)
                ),
                None => format!("the server's certificate is refused: {other}"),
            }
        }
        rustls::Error::InvalidCertificate(cause) => {
            format!("the server's certificate {}", certificate_text(cause))
        }
        rustls::Error::AlertReceived(
            alert @ (AlertDescription::CertificateRequired
            | AlertDescription::BadCertificate
            | AlertDescription::UnknownCA),
        ) => format!("the server ended the handshake ({alert:?}): {WANTS_CLIENT_CERT}"),
        // In TLS 1.2 a server also says this when it shares no cipher suite with opsbot.
        rustls::Error::AlertReceived(alert @ AlertDescription::HandshakeFailure) => format!(
            "the server ended the handshake ({alert:?}): possibly {WANTS_CLIENT_CERT}, or it \
             accepts none of opsbot's TLS versions and ciphers"
        ),
        rustls::Error::InvalidMessage(_) => format!(
            "the handshake failed ({error}): is the server speaking TLS on that port? \
             (http:// instead of https://?)"
        ),
        other => format!("the handshake failed: {other}"),
    }
}

/// What a server refusing the handshake over the client's certificate wants.
const WANTS_CLIENT_CERT: &str = "it wants a client certificate it trusts (client_cert, client_key)";

fn certificate_text(cause: &CertificateError) -> String {
    match cause {
        CertificateError::UnknownIssuer => "is not signed by a CA opsbot trusts; set ca_file to \
                                            the CA that issued it"
            .to_owned(),
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
            "is not valid for the host name in the URL; use a name the certificate lists".to_owned()
        }
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
            "has expired".to_owned()
        }
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            "is not valid yet (check the clocks)".to_owned()
        }
        other => format!("is refused ({other})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unreachable(cause: Cause) -> Fault {
        Fault::Connect(Unreachable {
            origin: "https://10.0.0.10:9200".into(),
            cause,
        })
    }

    #[test]
    fn a_certificate_is_not_tried_again_but_a_refused_connection_is() {
        assert!(!unreachable(Cause::Tls("expired".into())).is_transient());
        for cause in [
            Cause::Refused,
            Cause::Dns,
            Cause::ConnectTimeout,
            Cause::Closed,
        ] {
            assert!(unreachable(cause).is_transient());
        }
    }

    #[test]
    fn certificate_problems_say_what_to_do() {
        let named = RefusedCertificate {
            subject: "CN=logs-vip".into(),
            issuer: "CN=Kolla CA".into(),
            cause: CertificateError::Expired,
        };
        let error = rustls::Error::InvalidCertificate(CertificateError::Other(rustls::OtherError(
            std::sync::Arc::new(named),
        )));
        assert_eq!(
            tls_text(&error),
            "the server's certificate `CN=logs-vip` (issued by `CN=Kolla CA`) has expired"
        );
        let wrong_name = rustls::Error::InvalidCertificate(CertificateError::NotValidForName);
        assert!(tls_text(&wrong_name).ends_with("use a name the certificate lists"));
        let asked = rustls::Error::AlertReceived(AlertDescription::CertificateRequired);
        assert!(
            tls_text(&asked)
                .ends_with(": it wants a client certificate it trusts (client_cert, client_key)")
        );
        // TLS 1.2 servers also end with this when no cipher suite is shared.
        let ended = rustls::Error::AlertReceived(AlertDescription::HandshakeFailure);
        assert!(
            tls_text(&ended).contains("possibly it wants a client certificate"),
            "{}",
            tls_text(&ended)
        );
    }
}
