//! Interaction de-duplication: a repeated delivery is recognised, across a restart too.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

mod common;

#[test]
fn a_delivery_is_first_once_even_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::open(dir.path()).unwrap();
    assert!(store.first_delivery("interaction-1").unwrap());
    assert!(!store.first_delivery("interaction-1").unwrap());
    assert!(store.first_delivery("interaction-2").unwrap());
    drop(store);
    let store = common::open(dir.path()).unwrap();
    assert!(!store.first_delivery("interaction-1").unwrap());
    assert!(!store.first_delivery("interaction-2").unwrap());
}
