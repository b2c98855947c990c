//! Argv templates from the config, and the values put into them: checked at load, so that what
//! runs on a host is always the program and the words the operator wrote.

use serde::Deserialize;

/// An argv template such as `["ssh", "{host}", "docker", "stop", "{container}"]`, checked at load:
/// a known program position, known placeholders only, and no shell (`opsbot_commands::shell`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Vec<String>")]
pub struct CommandTemplate(Vec<String>);

const PLACEHOLDERS: [&str; 3] = ["{host}", "{node}", "{container}"];

impl TryFrom<Vec<String>> for CommandTemplate {
    type Error = String;

    fn try_from(argv: Vec<String>) -> Result<Self, Self::Error> {
        opsbot_commands::shell::check_argv(&argv)?;
        let Some(program) = argv.first() else {
            return Err("a command template needs at least the program".into());
        };
        if program.contains('{') {
            return Err("the program itself cannot be a placeholder".into());
        }
        for arg in &argv {
            let mut rest = arg.as_str();
            while let Some(start) = rest.find('{') {
                let end = rest[start..].find('}').map(|e| start + e + 1);
                let Some(end) = end else {
                    return Err(format!("`{arg}` has an unclosed `{{`"));
                };
                let placeholder = &rest[start..end];
                if !PLACEHOLDERS.contains(&placeholder) {
                    return Err(format!(
                        "unknown placeholder {placeholder} in `{arg}`; known: {}",
                        PLACEHOLDERS.join(", ")
                    ));
                }
                rest = &rest[end..];
            }
        }
        Ok(Self(argv))
    }
}

impl CommandTemplate {
    /// The program, for rules that depend on it (ssh quoting).
    pub(crate) fn program(&self) -> &str {
        self.0.first().map_or("", String::as_str)
    }

    /// True when some word has `placeholder` (`"{host}"`).
    pub(crate) fn uses(&self, placeholder: &str) -> bool {
        self.0.iter().any(|w| w.contains(placeholder))
    }

    /// The argv for one target; `{node}` is a search node's IP, or the host itself.
    pub(crate) fn render(&self, host: &str, node: &str, container: &str) -> Vec<String> {
        self.0
            .iter()
            .map(|arg| {
                arg.replace("{host}", host)
                    .replace("{node}", node)
                    .replace("{container}", container)
            })
            .collect()
    }
}

/// A value put into an argv: plain host and container names only, never an option (`-o...`
/// would be read by ssh as one) and never anything a shell or ssh would interpret.
pub fn check_value(what: &str, value: &str) -> anyhow::Result<()> {
    let ok = !value.is_empty()
        && value.len() <= 253
        && !value.starts_with('-')
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '@' | ':'));
    if ok {
        Ok(())
    } else {
        anyhow::bail!(
            "{what} `{value}` must be a plain name (letters, digits, `.`, `-`, `_`, `@`, `:`) not starting with `-`"
        )
    }
}

/// Templates written in a test, checked as the config's are.
#[cfg(test)]
impl CommandTemplate {
    pub(crate) fn of(argv: &[&str]) -> Result<Self, String> {
        Self::try_from(argv.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }
}

#[cfg(test)]
mod tests;
