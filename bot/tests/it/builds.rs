//! The two builds of `opsbot`: the default build carries the demo and its simulators; the
//! production build (`--no-default-features`, what deploy/Containerfile builds) links no test
//! double, and each says which it is.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The workspace's crates under `tests/` (the test doubles) that the `opsbot` binary links with
/// these cargo arguments, read from the dependency graph cargo resolves for that build.
fn doubles_linked(features: &[&str]) -> BTreeSet<String> {
    let bot = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doubles = bot.parent().unwrap().join("tests");
    let output = Command::new(env!("CARGO"))
        .current_dir(bot)
        .args(["tree", "--locked", "--offline", "-p", "opsbot"])
        .args(["--edges", "normal,build", "--prefix", "none"])
        .args(["--format", "{p}"])
        .args(features)
        .output()
        .unwrap();
    let tree = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success() && !tree.is_empty(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    tree.lines()
        .filter(|line| line.contains(&*doubles.to_string_lossy()))
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_production_build_links_no_test_double() {
    assert_eq!(
        doubles_linked(&["--no-default-features"]),
        BTreeSet::new(),
        "opsbot built with --no-default-features links test doubles"
    );
}

#[test]
fn the_default_build_links_the_simulators_of_the_demo_and_nothing_else_under_tests() {
    let expected: BTreeSet<String> = [
        "opsbot-cloud-sim",
        "opsbot-host-sim",
        "opsbot-search-sim",
        "opsbot-tmp-postgres",
    ]
    .map(str::to_owned)
    .into();
    assert_eq!(doubles_linked(&[]), expected);
}

#[test]
fn the_version_says_which_build_it_is() {
    let output = Command::new(env!("CARGO_BIN_EXE_opsbot"))
        .arg("--version")
        .output()
        .unwrap();
    let version = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success());
    assert!(
        version.starts_with(concat!(
            "opsbot ",
            env!("CARGO_PKG_VERSION"),
            " (demo build"
        )),
        "{version}"
    );
}
