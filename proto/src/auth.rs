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
    pub fn new(text: &str) -> Result<Token, String> {
        let t = text.trim();
        if t.is_empty() {
            return Err("the token is empty".into());
        }
        if !t.bytes().all(|b| b.is_ascii_graphic()) {
            return Err("the token must be printable ASCII without spaces".into());
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
pub fn load_token(file: Option<&Path>) -> Result<Option<Token>, String> {
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read token file {}: {e}", path.display()))?;
        return Token::new(&text).map(Some).map_err(|e| format!("{}: {e}", path.display()));
    }
    match std::env::var(TOKEN_ENV) {
        Ok(text) => Token::new(&text).map(Some).map_err(|e| format!("{TOKEN_ENV}: {e}")),
        Err(_) => Ok(None),
    }
}

/// Refuses to listen on a non-loopback address without a token.
pub fn check_listen(addr: SocketAddr, token: Option<&Token>) -> Result<(), String> {
    if !addr.ip().is_loopback() && token.is_none() {
        return Err(format!(
            "refusing to listen on {addr} without a token: give --token-file FILE or set {TOKEN_ENV} \
             (on both the coordinator and the workers), or listen on 127.0.0.1"
        ));
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
        let err = check_listen("0.0.0.0:7878".parse().unwrap(), None).unwrap_err();
        assert!(err.contains("without a token"), "{err}");
        assert!(check_listen("0.0.0.0:7878".parse().unwrap(), Some(&t)).is_ok());
    }

    #[test]
    fn token_file_errors_name_the_file() {
        let err = load_token(Some(Path::new("/nonexistent/token"))).unwrap_err();
        assert!(err.contains("/nonexistent/token"), "{err}");
    }
}
