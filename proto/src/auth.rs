//! The shared token every RPC carries, and the rule for where a coordinator may listen.
//!
//! Both sides read the token from `--token-file FILE` or, failing that, the environment variable
//! [`TOKEN_ENV`]. Workers send it as `authorization: Bearer <token>`; the coordinator compares it
//! in constant time and answers UNAUTHENTICATED otherwise. A coordinator may listen beyond
//! loopback only with a token.

use std::net::SocketAddr;
use std::path::Path;
use tonic::metadata::MetadataValue;
use tonic::{Request, Status};

/// Environment variable holding the token when no token file is given.
pub const TOKEN_ENV: &str = "CUBEFARM_TOKEN";

/// A token that cannot be used, or a listener that may not open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("the token is empty")]
    Empty,
    #[error("the token must be printable ASCII without spaces")]
    NotPrintable,
    #[error("cannot read token file {path}: {why}")]
    Unreadable { path: String, why: String },
    /// A bad token, with where it came from (a file or the environment variable).
    #[error("{from}: {error}")]
    From { from: String, error: Box<AuthError> },
    #[error(
        "refusing to listen on {0} without a token: give --token-file FILE or set {TOKEN_ENV} \
         (on both the coordinator and the workers), or listen on 127.0.0.1"
    )]
    OpenListener(SocketAddr),
}

/// A shared secret. Its `Debug` does not print it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// A token from text: surrounding whitespace is dropped; it must be non-empty printable
    /// ASCII, so it fits an HTTP header.
    pub fn new(text: &str) -> Result<Token, AuthError> {
        let t = text.trim();
        if t.is_empty() {
            return Err(AuthError::Empty);
        }
        if !t.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(AuthError::NotPrintable);
        }
        Ok(Token(t.to_string()))
    }

    /// Constant-time comparison with a presented value (time depends only on the lengths).
    pub fn matches(&self, presented: &[u8]) -> bool {
        let ours = self.0.as_bytes();
        if ours.len() != presented.len() {
            return false;
        }
        ours.iter().zip(presented).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
    }

    fn header(&self) -> MetadataValue<tonic::metadata::Ascii> {
        format!("Bearer {}", self.0).parse().expect("printable ASCII is a valid header value")
    }
}

/// The token from `file`, else from [`TOKEN_ENV`], else none.
pub fn load_token(file: Option<&Path>) -> Result<Option<Token>, AuthError> {
    let from = |from: String| move |error| AuthError::From { from, error: Box::new(error) };
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| AuthError::Unreadable { path: path.display().to_string(), why: e.to_string() })?;
        return Token::new(&text).map(Some).map_err(from(path.display().to_string()));
    }
    match std::env::var(TOKEN_ENV) {
        Ok(text) => Token::new(&text).map(Some).map_err(from(TOKEN_ENV.to_string())),
        Err(_) => Ok(None),
    }
}

/// Refuses to listen on a non-loopback address without a token.
pub fn check_listen(addr: SocketAddr, token: Option<&Token>) -> Result<(), AuthError> {
    if !addr.ip().is_loopback() && token.is_none() {
        return Err(AuthError::OpenListener(addr));
    }
    Ok(())
}

/// Server side: checks every request's token (when the coordinator has one).
pub fn check_request<T>(token: Option<&Token>, request: Request<T>) -> Result<Request<T>, Status> {
    let Some(token) = token else { return Ok(request) };
    let presented = request
        .metadata()
        .get("authorization")
        .and_then(|v| v.as_bytes().strip_prefix(b"Bearer "))
        .unwrap_or_default();
    if token.matches(presented) {
        Ok(request)
    } else {
        Err(Status::unauthenticated(
            "missing or wrong token (check --token-file or CUBEFARM_TOKEN on both sides)",
        ))
    }
}

/// Client side: adds the token to a request.
pub fn add_token<T>(token: Option<&Token>, mut request: Request<T>) -> Result<Request<T>, Status> {
    if let Some(token) = token {
        request.metadata_mut().insert("authorization", token.header());
    }
    Ok(request)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_exactly() {
        let t = Token::new(" s3cret\n").unwrap();
        assert!(t.matches(b"s3cret"));
        assert!(!t.matches(b"s3creT"));
        assert!(!t.matches(b"s3cre"));
        assert!(!t.matches(b""));
        assert!(Token::new("  ").is_err());
        assert!(Token::new("two words").is_err());
        assert_eq!(format!("{t:?}"), "Token(..)");
    }

    #[test]
    fn requests_need_the_right_token() {
        let t = Token::new("abc").unwrap();
        let ok = add_token(Some(&t), Request::new(())).unwrap();
        assert!(check_request(Some(&t), ok).is_ok());
        let wrong = add_token(Some(&Token::new("abd").unwrap()), Request::new(())).unwrap();
        let err = check_request(Some(&t), wrong).unwrap_err();
        assert_eq!(err.code(), tonic::Code::Unauthenticated);
        let none = Request::new(());
        assert_eq!(check_request(Some(&t), none).unwrap_err().code(), tonic::Code::Unauthenticated);
        assert!(check_request(None, Request::new(())).is_ok());
    }

    #[test]
    fn only_loopback_without_a_token() {
        let t = Token::new("abc").unwrap();
        assert!(check_listen("127.0.0.1:7878".parse().unwrap(), None).is_ok());
        assert!(check_listen("[::1]:7878".parse().unwrap(), None).is_ok());
        let err = check_listen("0.0.0.0:7878".parse().unwrap(), None).unwrap_err().to_string();
        assert!(err.contains("without a token"), "{err}");
        assert!(check_listen("0.0.0.0:7878".parse().unwrap(), Some(&t)).is_ok());
    }

    #[test]
    fn token_file_errors_name_the_file() {
        let err = load_token(Some(Path::new("/nonexistent/token"))).unwrap_err().to_string();
        assert!(err.contains("/nonexistent/token"), "{err}");
    }
}
