//! Issued Keystone tokens: who holds each, and until when it is valid.

use std::collections::HashMap;
use std::time::Duration;

use time::{OffsetDateTime, PrimitiveDateTime};
use uuid::Uuid;

/// One issued token.
#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub issued_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
    pub audit_id: String,
}

/// Every token still known; revoking forgets them all.
#[derive(Debug)]
pub(crate) struct Tokens {
    lifetime: Duration,
    live: HashMap<String, Token>,
}

impl Tokens {
    pub(crate) fn new(lifetime: Duration) -> Self {
        Tokens {
            lifetime,
            live: HashMap::new(),
        }
    }

    /// Issues a fernet-looking opaque token. Services only check that a token is valid, not
    /// whose it is, so the token does not record its holder.
    pub(crate) fn issue(&mut self) -> (String, Token) {
        let issued_at = crate::timestamps::now_seconds();
        // A lifetime beyond what dates can hold simply never ends.
        let expires_at = time::Duration::try_from(self.lifetime)
            .ok()
            .and_then(|lifetime| issued_at.checked_add(lifetime))
            .unwrap_or(PrimitiveDateTime::MAX.assume_utc());
        let secret = format!(
            "gAAAAAB{}{}",
            Uuid::new_v4().simple(),
            Uuid::new_v4().simple()
        );
        let token = Token {
            issued_at,
            expires_at,
            audit_id: Uuid::new_v4().simple().to_string()[..22].to_owned(),
        };
        self.live.insert(secret.clone(), token.clone());
        (secret, token)
    }

    /// The token, if it was issued, not revoked and not expired.
    pub(crate) fn valid(&self, secret: &str) -> Option<&Token> {
        let now = OffsetDateTime::now_utc();
        self.live.get(secret).filter(|token| now < token.expires_at)
    }

    pub(crate) fn revoke_all(&mut self) {
        self.live.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_expire_and_revoke() {
        let mut tokens = Tokens::new(Duration::from_secs(3600));
        let (secret, token) = tokens.issue();
        assert_eq!(token.expires_at - token.issued_at, time::Duration::hours(1));
        assert!(tokens.valid(&secret).is_some());
        assert!(tokens.valid("gAAAAABforged").is_none());
        tokens.revoke_all();
        assert!(tokens.valid(&secret).is_none());
        let mut expired = Tokens::new(Duration::ZERO);
        let (secret, _) = expired.issue();
        assert!(expired.valid(&secret).is_none());
        let mut forever = Tokens::new(Duration::MAX);
        let (secret, _) = forever.issue();
        assert!(forever.valid(&secret).is_some());
    }
}
