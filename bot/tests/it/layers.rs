//! The layers of `bot/src` (its `lib.rs` says what each holds): a module imports only from the
//! layers below its own. Read from the source as text, as a reviewer would: every
//! `crate::<module>` outside a test module.

use std::collections::BTreeSet;
use std::path::Path;

/// Bottom first; the modules of one layer do not import each other.
const LAYERS: &[&[&str]] = &[
    &["clock", "logging", "tenure"],
    &["process"],
    &["config"],
    &["metrics"],
    &["backend", "store_writes", "audit_export"],
    &["lease", "store_upkeep", "node_control"],
    &["host_access", "host_control"],
    &["refusal"],
    &["clouds", "runbooks"],
    &["clusters"],
    &["targets"],
    &["progress"],
    &["engine"],
    &["service", "scheduler"],
    &["chat"],
    &["serve", "check", "store_cli", "demo"],
    &["cli"],
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// The top-level module a file of `src` belongs to (`engine` for `src/engine/step.rs`).
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next().unwrap().as_os_str();
    first.to_string_lossy().trim_end_matches(".rs").to_owned()
}

/// The code of a file without its tests: files named `tests.rs`, and what follows
/// `#[cfg(test)]` (a test module closes each file that has one).
fn code(file: &Path) -> Option<String> {
    if file.file_name()? == "tests.rs" || file.components().any(|c| c.as_os_str() == "tests") {
        return None;
    }
    let text = std::fs::read_to_string(file).unwrap();
    Some(match text.find("#[cfg(test)]\nmod ") {
        Some(tests) => text[..tests].to_owned(),
        None => text,
    })
}

/// The modules `code` names as `crate::<module>`, alone or in a `use crate::{...}` group.
fn imports(code: &str) -> BTreeSet<String> {
    let word = regex::Regex::new(r"crate::(\w+)").unwrap();
    let group = regex::Regex::new(r"crate::\{([^}]*)\}").unwrap();
    let mut named: BTreeSet<String> = word.captures_iter(code).map(|c| c[1].to_owned()).collect();
    for list in group.captures_iter(code) {
        named.extend(list[1].split(',').filter_map(|item| {
            let head = item.trim().split("::").next()?;
            (!head.is_empty()).then(|| head.to_owned())
        }));
    }
    named
}

fn files(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn every_module_imports_only_from_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let mut wrong = Vec::new();
    for file in &all {
        let module = module_of(&src, file);
        if module == "lib" || module == "main" {
            continue;
        }
        let Some(mine) = layer(&module) else {
            wrong.push(format!(
                "{module} is in no layer: add it to LAYERS and lib.rs"
            ));
            continue;
        };
        let Some(code) = code(file) else { continue };
        for imported in imports(&code) {
            match layer(&imported) {
                Some(theirs) if theirs < mine || imported == module => {}
                Some(_) => wrong.push(format!("{} imports {imported}", file.display())),
                // `crate::` followed by an item of the crate root, not a module
                None => {}
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn an_import_from_above_is_seen() {
    let engine_in_config =
        "use crate::engine::{Engine, Start};\nuse crate::{clock, chat::console};";
    assert_eq!(
        imports(engine_in_config),
        ["chat", "clock", "engine"].map(str::to_owned).into()
    );
    assert!(layer("engine") > layer("config"));
}
