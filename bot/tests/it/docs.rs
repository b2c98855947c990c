//! The operators' pages in `docs/` hold against the binary: every shell block runs as written
//! (but those the text says the tests cannot run: a release build, systemd, your clusters),
//! every `opsbot` command line in any block names subcommands and options the binary has, and
//! every TOML block is a runbook or a config fragment the binary accepts.
//!
//! A block runs in a sandbox of its page: a mount namespace where `/etc`, `/var` and `/run` are
//! copy-on-write overlays kept in a temporary directory, so `useradd`, `/etc/opsbot` and
//! `/var/lib/opsbot` are the page's own and the machine is left as it was. The blocks of a page
//! run in order, each seeing what the ones before it did; each page starts from the example
//! config at `/etc/opsbot/opsbot.toml`, where the deploying page leaves it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use opsbot::config::Config;
use opsbot_commands::name::{GroupName, HostName};
use opsbot_commands::runbook::{Inventory, Runbook};

/// What marks a block the tests do not run, in the paragraph right before it.
const NOT_RUN: &str = "*not run by the tests*";

/// The directories a page's blocks may change, each an overlay of the machine's.
const OVERLAID: [&str; 3] = ["etc", "var", "run"];

/// A fenced block of a page: its language and text, and whether the tests run it.
#[derive(Debug)]
struct Block {
    page: String,
    line: usize,
    lang: String,
    body: String,
    runs: bool,
}

fn docs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs")
}

/// Every fenced block of every page of `docs/`, in order.
fn blocks() -> Vec<Block> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(docs_dir())
        .expect("docs/")
        .map(|entry| entry.expect("a docs/ entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages.iter().flat_map(|page| page_blocks(page)).collect()
}

fn page_blocks(page: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(page).expect("a page of docs/");
    let name = page
        .file_name()
        .expect("a file")
        .to_string_lossy()
        .into_owned();
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(info) = lines[i].trim_start().strip_prefix("```") else {
            i += 1;
            continue;
        };
        let start = i;
        let end = (start + 1..lines.len())
            .find(|&j| lines[j].trim_start().starts_with("```"))
            .unwrap_or_else(|| panic!("{name}:{}: a block that never ends", start + 1));
        let mut before: Vec<&str> = paragraph(lines[..start].iter().rev().copied());
        before.reverse();
        let before = before.join(" ");
        found.push(Block {
            page: name.clone(),
            line: start + 1,
            lang: info.split_whitespace().next().unwrap_or("").to_owned(),
            body: lines[start + 1..end].join("\n"),
            runs: !before.contains(NOT_RUN),
        });
        i = end + 1;
    }
    found
}

/// The lines of the prose paragraph `lines` start at (after blank lines), up to its end: read
/// backwards from a block, the paragraph that introduces it, last line first.
fn paragraph<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    lines
        .skip_while(|line| line.trim().is_empty())
        .take_while(|line| !line.trim().is_empty() && !line.starts_with("```"))
        .collect()
}

/// A page's private `/etc`, `/var` and `/run`.
struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        for overlaid in OVERLAID {
            for part in ["upper", "work"] {
                std::fs::create_dir_all(dir.path().join(overlaid).join(part)).unwrap();
            }
        }
        std::fs::create_dir(dir.path().join("home")).unwrap();
        Self { dir }
    }

    /// Runs `script` with `bash -euo pipefail` inside the sandbox, `opsbot` first on `PATH`.
    fn run(&self, script: &str) -> Output {
        let root = self.dir.path().display();
        let mounts: Vec<String> = OVERLAID
            .iter()
            .map(|d| {
                format!(
                    "mount -t overlay overlay -o lowerdir=/{d},upperdir={root}/{d}/upper,\
                     workdir={root}/{d}/work /{d}"
                )
            })
            .collect();
        let bin = Path::new(env!("CARGO_BIN_EXE_opsbot")).parent().unwrap();
        let mut unshare = Command::new("unshare");
        unshare.args(["--mount", "--propagation", "private"]);
        if !nix::unistd::geteuid().is_root() {
            unshare.arg("--map-root-user");
        }
        unshare
            .args(["bash", "-c"])
            .arg(format!(
                "{} && cd \"$HOME\" && exec bash -euo pipefail -c \"$1\"",
                mounts.join(" && ")
            ))
            .args(["sandbox", script])
            .env_clear()
            .env(
                "PATH",
                format!("{}:/usr/sbin:/usr/bin:/sbin:/bin", bin.display()),
            )
            .env("HOME", self.dir.path().join("home"))
            .env("LANG", "C.UTF-8");
        unshare
            .output()
            .expect("`unshare` (util-linux) runs the docs' blocks in a mount namespace")
    }
}

fn must_succeed(what: &str, output: &Output) {
    assert!(
        output.status.success(),
        "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
}

#[test]
fn every_shell_block_of_docs_runs_as_written() {
    let blocks = blocks();
    let shell: Vec<&Block> = blocks.iter().filter(|b| b.lang == "sh").collect();
    let (mut ran, mut failed) = (0, Vec::new());
    for page in shell.iter().map(|b| &b.page).collect::<BTreeSet<_>>() {
        let sandbox = Sandbox::new();
        let prelude = "install -d /etc/opsbot && opsbot example-config > /etc/opsbot/opsbot.toml";
        must_succeed(&format!("{page}'s prelude"), &sandbox.run(prelude));
        for block in shell.iter().filter(|b| &b.page == page && b.runs) {
            let output = sandbox.run(&block.body);
            ran += 1;
            if !output.status.success() {
                failed.push(format!(
                    "{}:{} failed ({}):\n{}\n--- stdout\n{}--- stderr\n{}",
                    block.page,
                    block.line,
                    output.status,
                    block.body,
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr),
                ));
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    // The pages' own blocks, not a parser that found none.
    assert!(ran >= 5, "only {ran} shell blocks ran");
}

/// The subcommands and `--options` of each `opsbot` command line in the docs' shell blocks,
/// run or not, are the binary's: `opsbot <subcommands> --help` exists and names each option.
#[test]
fn every_opsbot_command_in_docs_names_real_subcommands_and_options() {
    let mut checked = 0;
    for block in blocks().iter().filter(|b| b.lang == "sh") {
        for line in block.body.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            // `opsbot` as the command, not as an argument (`sudo -u opsbot`, `cargo -p opsbot`).
            let Some(at) = (0..words.len()).find(|&i| {
                words[i] == "opsbot" && (i == 0 || ["&&", "||", "|", ";"].contains(&words[i - 1]))
            }) else {
                continue;
            };
            let path: Vec<&str> = words[at + 1..]
                .iter()
                .copied()
                .take_while(|w| {
                    w.starts_with(|c: char| c.is_ascii_lowercase())
                        && w.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                })
                .collect();
            let help = Command::new(env!("CARGO_BIN_EXE_opsbot"))
                .args(&path)
                .arg("--help")
                .output()
                .unwrap();
            let what = format!("{}:{}: `opsbot {}`", block.page, block.line, path.join(" "));
            must_succeed(&what, &help);
            let help = String::from_utf8_lossy(&help.stdout);
            for option in words[at + 1..].iter().filter(|w| w.starts_with("--")) {
                let option = option.split('=').next().unwrap_or(option);
                assert!(help.contains(option), "{what} has no option {option}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 15, "only {checked} opsbot command lines found");
}

/// Each TOML block is a runbook the runbook loader accepts (it has a `name`), an excerpt of a
/// runbook's steps (the complete example around it is checked), or a fragment of the config
/// that, in place of the example config's tables of the same names, the binary accepts.
#[test]
fn every_toml_block_of_docs_is_accepted() {
    let example = Command::new(env!("CARGO_BIN_EXE_opsbot"))
        .arg("example-config")
        .output()
        .unwrap();
    must_succeed("opsbot example-config", &example);
    let example: toml::Table = toml::from_str(&String::from_utf8_lossy(&example.stdout)).unwrap();
    let (mut runbooks, mut configs) = (0, 0);
    for block in blocks().into_iter().filter(|b| b.lang == "toml") {
        let what = format!("{}:{}", block.page, block.line);
        let table: toml::Table =
            toml::from_str(&block.body).unwrap_or_else(|e| panic!("{what} is not TOML: {e}"));
        if table.contains_key("name") {
            Runbook::parse(&what, &block.body, &inventory()).unwrap_or_else(|e| panic!("{e}"));
            runbooks += 1;
        } else if !table.contains_key("steps") {
            let mut config = example.clone();
            config.extend(table);
            let text = toml::to_string(&config).unwrap();
            Config::parse(&text)
                .and_then(|config| config.validate())
                .unwrap_or_else(|e| panic!("{what}: {e:#}"));
            configs += 1;
        }
    }
    assert!(
        runbooks >= 1 && configs >= 4,
        "{runbooks} runbooks, {configs} config fragments"
    );
}

/// The inventory of the docs' own `[runbooks.inventory]` example.
fn inventory() -> Inventory {
    let group = |name: &str, hosts: &[&str]| {
        let hosts = hosts.iter().map(|h| HostName::parse(h).unwrap()).collect();
        (GroupName::parse(name).unwrap(), hosts)
    };
    Inventory::new(BTreeMap::from([
        group("compute", &["cmp-01", "cmp-02", "cmp-03"]),
        group("control", &["ctl-01"]),
    ]))
}
