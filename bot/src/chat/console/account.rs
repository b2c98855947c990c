//! Who is at the console, as the operating system says: the account behind a uid, from the
//! system's user database. A console speaks as that account's person and no one else.

use nix::unistd::{Uid, User};

/// Why a uid has no account name to map to a person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccountError {
    #[error("uid {uid} has no account in the system's user database")]
    NoAccount { uid: u32 },
    #[error("the system's user database cannot be read for uid {uid}: {error}")]
    Lookup { uid: u32, error: String },
}

/// The account name of `uid`.
pub fn account_of(uid: u32) -> Result<String, AccountError> {
    match User::from_uid(Uid::from_raw(uid)) {
        Ok(Some(user)) => Ok(user.name),
        Ok(None) => Err(AccountError::NoAccount { uid }),
        Err(error) => Err(AccountError::Lookup {
            uid,
            error: error.to_string(),
        }),
    }
}

/// The account that started this process (its real uid: who ran it, not what it may become).
pub fn running_account() -> Result<String, AccountError> {
    account_of(nix::unistd::getuid().as_raw())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uid_0_is_root_and_an_unused_uid_has_no_account() {
        assert_eq!(account_of(0).as_deref(), Ok("root"));
        assert_eq!(
            account_of(4_000_000_000),
            Err(AccountError::NoAccount { uid: 4_000_000_000 })
        );
        assert!(running_account().is_ok());
    }
}
