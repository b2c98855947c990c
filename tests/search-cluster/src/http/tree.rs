//! Settings as ES prints them: nested objects split at the dots of the keys, or flat keys with
//! `flat_settings=true` (`Settings.toXContent`).

use std::collections::BTreeMap;

use serde::Serialize;

/// A settings value tree: ES nests dotted keys into objects unless `flat_settings=true`.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum Tree {
    Leaf(String),
    Branch(BTreeMap<String, Tree>),
}

fn insert(branch: &mut BTreeMap<String, Tree>, key: &str, value: &str) {
    match key.split_once('.') {
        Some((head, rest)) => {
            let child = branch
                .entry(head.to_owned())
                .or_insert_with(|| Tree::Branch(BTreeMap::new()));
            match child {
                Tree::Branch(children) => insert(children, rest, value),
                // `a` and `a.b` both set: keep the deeper key flat rather than lose it.
                Tree::Leaf(_) => {
                    branch.insert(key.to_owned(), Tree::Leaf(value.to_owned()));
                }
            }
        }
        None => {
            branch.insert(key.to_owned(), Tree::Leaf(value.to_owned()));
        }
    }
}

pub(crate) fn render_settings(settings: &BTreeMap<String, String>, flat: bool) -> Tree {
    let mut root = BTreeMap::new();
    for (key, value) in settings {
        if flat {
            root.insert(key.clone(), Tree::Leaf(value.clone()));
        } else {
            insert(&mut root, key, value);
        }
    }
    Tree::Branch(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_nest_by_dots() {
        let settings = BTreeMap::from([(
            "cluster.routing.allocation.enable".to_owned(),
            "none".to_owned(),
        )]);
        let nested = serde_json::to_value(render_settings(&settings, false)).unwrap();
        assert_eq!(
            nested,
            serde_json::json!({"cluster": {"routing": {"allocation": {"enable": "none"}}}})
        );
        let flat = serde_json::to_value(render_settings(&settings, true)).unwrap();
        assert_eq!(
            flat,
            serde_json::json!({"cluster.routing.allocation.enable": "none"})
        );
    }
}
