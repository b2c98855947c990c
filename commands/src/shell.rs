//! The one rule on commands opsbot runs: an argv, never a shell. Node control templates and
//! runbook steps are both checked here, so a shell cannot sneak in through either.

/// Programs that would read an argument as a shell script. `env` is one too (`env sh -c`, `-S`).
const SHELLS: [&str; 10] = [
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "busybox", "env", "csh",
];

/// Words that only mean something to a shell: written into an argv they would be passed to the
/// program as they are, which is never what the author meant.
const SHELL_SYNTAX: [&str; 10] = ["|", "||", "&&", ";", "&", ">", ">>", "<", "2>&1", "$("];

/// Refuses an argv whose program is a shell, that hands a script to a shell later (`sudo sh -c`,
/// `docker exec c bash -c`), or that uses shell syntax as if a shell would read it.
pub fn check_argv(argv: &[String]) -> Result<(), String> {
    let Some(program) = argv.first() else {
        return Err("a command needs at least the program".to_owned());
    };
    if is_shell(program) {
        return Err(format!(
            "`{program}` is a shell; give the program and its arguments directly, opsbot never \
             runs commands through a shell"
        ));
    }
    for pair in argv.windows(2) {
        if let [word, next] = pair {
            if is_shell(word) && next.starts_with('-') && next.contains('c') {
                return Err(format!(
                    "`{word} {next}` runs a shell script; give the program and its arguments \
                     directly, opsbot never runs commands through a shell"
                ));
            }
        }
    }
    if let Some(word) = argv
        .iter()
        .find(|w| SHELL_SYNTAX.contains(&w.as_str()) || w.starts_with("$("))
    {
        return Err(format!(
            "`{word}` is shell syntax, and no shell reads this command: split it into steps, \
             or use the program's own options"
        ));
    }
    Ok(())
}

fn is_shell(word: &str) -> bool {
    let base = word.rsplit('/').next().unwrap_or(word);
    SHELLS.contains(&base)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn shells_and_shell_syntax_are_refused() {
        for bad in [
            &["sh", "-c", "x"][..],
            &["/bin/bash", "script"],
            &["env", "FOO=1", "x"],
            &["sudo", "sh", "-c", "modprobe x"],
            &["docker", "exec", "nova_compute", "bash", "-lc", "x"],
            &["cat", "/etc/hosts", "|", "grep", "x"],
            &["echo", "x", ">", "/etc/f"],
            &["echo", "$(id)"],
        ] {
            assert!(check_argv(&argv(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn plain_programs_pass() {
        for good in [
            &["modprobe", "-r", "kvm_amd"][..],
            &["docker", "restart", "nova_compute"],
            &["grep", "-c", "x", "/etc/hosts"],
            &["timeout", "30", "strace", "-f", "-p", "{pid}"],
        ] {
            assert!(check_argv(&argv(good)).is_ok(), "{good:?}");
        }
    }
}
