//! What `deploy/` ships agrees with itself.

use crate::support::deployed::{deploy_file, settings, unit_environment};

/// The image and the unit run the same binary the same way: the malloc settings the unit
/// explains are what the memory figures of docs/PERFORMANCE.md were measured with.
#[test]
fn the_container_image_sets_the_environment_the_unit_sets() {
    let unit = unit_environment().unwrap();
    assert!(
        unit.iter().any(|(name, _)| name == "GLIBC_TUNABLES"),
        "{unit:?}"
    );
    let containerfile = std::fs::read_to_string(deploy_file("Containerfile")).unwrap();
    assert_eq!(settings(&containerfile, "ENV "), unit);
}
