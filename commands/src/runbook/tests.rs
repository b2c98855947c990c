#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

use super::*;
use crate::parse::{Origin, parse_line};
use crate::plan::{
    Action, HostCommand, HostDestructive, HostSafe, HostStep, HostWait, OutputWait, Plan,
};
use crate::request::{ProcedureRequest, Request};

/// The file name every test runbook is read from.
const SOURCE: &str = "deploy/runbooks/t.toml";

/// Two groups; `compute` lists its hosts out of name order, so that a test can tell inventory
/// order from sorting.
fn inventory() -> Inventory {
    let hosts = |names: &[&str]| names.iter().map(|h| HostName::parse(h).unwrap()).collect();
    Inventory::new(BTreeMap::from([
        (
            GroupName::parse("compute").unwrap(),
            hosts(&["cmp-2", "cmp-1"]),
        ),
        (GroupName::parse("control").unwrap(), hosts(&["ctl-1"])),
    ]))
}

fn load(text: &str) -> Result<Runbook, LoadError> {
    Runbook::parse(SOURCE, text, &inventory())
}

fn loaded(text: &str) -> Runbook {
    load(text).unwrap_or_else(|e| panic!("the runbook should load: {e}"))
}

fn host(name: &str) -> HostName {
    HostName::parse(name).unwrap()
}

/// Checks that `text` is refused on `line` with a message containing `needs`, and that the
/// error reads `file:line: message`.
#[track_caller]
fn refused(text: &str, line: usize, needs: &str) {
    let err = load(text)
        .map(|r| r.name)
        .expect_err("the runbook should be refused");
    assert_eq!(err.file, SOURCE, "{err}");
    assert_eq!(err.line, line, "wrong line: {err}");
    assert!(
        err.message.contains(needs),
        "the message should contain {needs:?}: {err}"
    );
    assert_eq!(err.to_string(), format!("{SOURCE}:{line}: {}", err.message));
}

/// One `#[test]` per refused file, named after the case, so each fails on its own.
macro_rules! refusals {
    ($($case:ident: line $line:literal, $needs:literal, $text:expr;)*) => {
        $(
            #[test]
            fn $case() {
                super::refused($text, $line, $needs);
            }
        )*
    };
}

/// Every error the loader gives, one small file each. Line 1 of a file is the line that follows
/// `r#"`.
mod refused {
    refusals! {
        toml_syntax: line 2, "invalid basic string", r#"name = "t"
description = "d

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        wrong_type: line 3, "expected a boolean", r#"name = "t"
description = "d"
maintenance = "yes"

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        unknown_top_level_field: line 3, "unknown field `owner`", r#"name = "t"
description = "d"
owner = "ops"

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        unknown_step_field: line 6, "unknown field `command`", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
command = "uptime"
"#;

        missing_name: line 1, "missing field `name`", r#"description = "d"

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        missing_description: line 1, "missing field `description`", r#"name = "t"

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        blank_description: line 2, "`description` must be one line", r#"name = "t"
description = "   "

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        bad_runbook_name: line 1, "runbook name `Nested_Virt` has `N`", r#"name = "Nested_Virt"
description = "d"

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        bad_parameter_name: line 5, "parameter name `Module` has `M`", r#"name = "t"
description = "d"

[[params]]
name = "Module"
kind = "number"

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        parameter_called_name: line 5, "`name` is taken by /runbook run", r#"name = "t"
description = "d"

[[params]]
name = "name"
kind = "number"

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        parameter_called_at: line 5, "`at` is taken by /runbook run", r#"name = "t"
description = "d"

[[params]]
name = "at"
kind = "number"

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        unknown_parameter_kind: line 6, "unknown parameter kind `string`", r#"name = "t"
description = "d"

[[params]]
name = "module"
kind = "string"

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        pattern_on_a_choice: line 4, "`pattern` does not apply to kind = \"choice\"", r#"name = "t"
description = "d"

[[params]]
name = "module"
kind = "choice"
values = ["kvm_amd"]
pattern = "kvm_.*"

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        values_on_a_number: line 4, "`values` does not apply to kind = \"number\"", r#"name = "t"
description = "d"

[[params]]
name = "count"
kind = "number"
values = ["1"]

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        min_on_a_host: line 4, "`min` does not apply to kind = \"host\"", r#"name = "t"
description = "d"

[[params]]
name = "node"
kind = "host"
min = 1

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        group_on_a_pattern: line 4, "`group` does not apply to kind = \"pattern\"", r#"name = "t"
description = "d"

[[params]]
name = "ticket"
kind = "pattern"
pattern = "OPS-[0-9]+"
example = "OPS-1"
group = "compute"

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        choice_without_values: line 4, "of kind \"choice\" needs `values = [...]`", r#"name = "t"
description = "d"

[[params]]
name = "module"
kind = "choice"

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        empty_values: line 7, "`values` is empty", r#"name = "t"
description = "d"

[[params]]
name = "module"
kind = "choice"
values = []

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        choice_value_like_an_option: line 7, "`-f` starts with `-`", r#"name = "t"
description = "d"

[[params]]
name = "mode"
kind = "choice"
values = ["soft", "-f"]

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        choice_value_with_a_space: line 7, "values are single words", r#"name = "t"
description = "d"

[[params]]
name = "mode"
kind = "choice"
values = ["soft", "very hard"]

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        pattern_without_example: line 4, "needs `example`", r#"name = "t"
description = "d"

[[params]]
name = "ticket"
kind = "pattern"
pattern = "OPS-[0-9]+"

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        pattern_without_pattern: line 4, "needs `pattern = \"...\"`", r#"name = "t"
description = "d"

[[params]]
name = "ticket"
kind = "pattern"
example = "OPS-1"

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        example_not_matching: line 7, "the example `OPS-x` does not match the pattern", r#"name = "t"
description = "d"

[[params]]
name = "ticket"
kind = "pattern"
pattern = "OPS-[0-9]+"
example = "OPS-x"

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        bad_pattern_regex: line 7, "`pattern`:", r#"name = "t"
description = "d"

[[params]]
name = "ticket"
kind = "pattern"
pattern = "OPS-([0-9]+"
example = "OPS-1"

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        min_above_max: line 4, "min 10 is above max 1", r#"name = "t"
description = "d"

[[params]]
name = "count"
kind = "number"
min = 10
max = 1

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        duplicate_parameter: line 8, "parameter `count` is declared twice", r#"name = "t"
description = "d"

[[params]]
name = "count"
kind = "number"

[[params]]
name = "count"
kind = "choice"
values = ["1"]

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        host_parameter_with_default: line 7, "a host parameter has no default", r#"name = "t"
description = "d"

[[params]]
name = "node"
kind = "host"
default = "cmp-1"

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        default_not_a_choice: line 8, "`default`: `xen` is not one of kvm_amd, kvm_intel", r#"name = "t"
description = "d"

[[params]]
name = "module"
kind = "choice"
values = ["kvm_amd", "kvm_intel"]
default = "xen"

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        default_out_of_range: line 9, "`default`: `0` is not a whole number from 1 to 9", r#"name = "t"
description = "d"

[[params]]
name = "count"
kind = "number"
min = 1
max = 9
default = "0"

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        unknown_group: line 7, "group `storage` is not in the host inventory", r#"name = "t"
description = "d"

[[params]]
name = "node"
kind = "host"
group = "storage"

[[steps]]
kind = "confirm"
prompt = "p"
"#;

        no_steps: line 1, "a runbook needs at least one [[steps]]", r#"name = "t"
description = "d"

[[params]]
name = "count"
kind = "number"
"#;

        unknown_step_kind: line 5, "unknown step kind `shell`", r#"name = "t"
description = "d"

[[steps]]
kind = "shell"
"#;

        argv_on_a_confirm: line 8, "`argv` does not apply to a step of kind = \"confirm\"", r#"name = "t"
description = "d"

[[steps]]
kind = "confirm"
prompt = "p"

[[steps]]
kind = "confirm"
prompt = "p"
argv = ["uptime"]
"#;

        until_on_a_run: line 4, "`until` does not apply to a step of kind = \"run\"", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "ctl-1"
argv = ["uptime"]
until = "up"
"#;

        reason_on_a_confirm: line 4, "`reason` does not apply to a step of kind = \"confirm\"", r#"name = "t"
description = "d"

[[steps]]
kind = "confirm"
prompt = "p"
reason = "r"
"#;

        run_without_on: line 4, "the step needs `on`", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
argv = ["uptime"]
"#;

        wait_without_on: line 4, "the step needs `on`", r#"name = "t"
description = "d"

[[steps]]
kind = "wait"
argv = ["uptime"]
until = "up"
"#;

        run_without_argv: line 4, "the step needs `argv`", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "ctl-1"
"#;

        empty_argv: line 7, "`argv` needs the program", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "ctl-1"
argv = []
"#;

        shell_program: line 7, "`sh` is a shell", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "ctl-1"
argv = ["sh", "-c", "uptime"]
"#;

        shell_by_path: line 7, "`/bin/bash` is a shell", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "ctl-1"
argv = ["/bin/bash", "/root/fix.sh"]
"#;

        sudo_sh_c: line 7, "`sh -c` runs a shell script", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "ctl-1"
argv = ["sudo", "sh", "-c", "modprobe kvm_amd"]
"#;

        shell_pipe: line 7, "`|` is shell syntax", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "ctl-1"
argv = ["cat", "/etc/hosts", "|", "grep", "cmp"]
"#;

        command_substitution: line 7, "`$(id)` is shell syntax", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "ctl-1"
argv = ["echo", "$(id)"]
"#;

        program_as_placeholder: line 12, "the program itself cannot be a placeholder", r#"name = "t"
description = "d"

[[params]]
name = "tool"
kind = "choice"
values = ["virsh"]

[[steps]]
kind = "run"
on = "ctl-1"
argv = ["{tool}", "list"]
"#;

        unknown_placeholder: line 7, "{service} is not a parameter or a value an earlier step captures", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "ctl-1"
argv = ["systemctl", "restart", "{service}"]
"#;

        unknown_placeholder_in_each: line 7, "{service} is not a parameter, {host} or a value", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
each = "compute"
argv = ["systemctl", "restart", "{service}"]
"#;

        host_outside_each_without_parameter: line 5, "{host} is not a parameter", r#"name = "t"
description = "d"

[[steps]]
on = "{host}"
kind = "run"
argv = ["uptime"]
"#;

        unknown_placeholder_in_prompt: line 6, "{ticket} is not a parameter", r#"name = "t"
description = "d"

[[steps]]
kind = "confirm"
prompt = "close {ticket}"
"#;

        capture_used_in_on: line 12, "{node} is captured while the run goes", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "ctl-1"
argv = ["nova-manage", "cell_v2", "list_hosts"]
output = '(?P<node>cmp-[0-9]+)'

[[steps]]
kind = "run"
on = "{node}"
argv = ["uptime"]
"#;

        capture_used_before_it_is_captured: line 7, "{pid} is not a parameter", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "ctl-1"
argv = ["kill", "{pid}"]

[[steps]]
kind = "run"
on = "ctl-1"
argv = ["pgrep", "nova"]
output = '(?P<pid>[0-9]+)'
"#;

        unclosed_brace: line 7, "`{pid/status` in `/proc/{pid/status` is no placeholder", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "ctl-1"
argv = ["cat", "/proc/{pid/status"]
"#;

        stray_closing_brace: line 7, "`}` in `a}b` closes nothing", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "ctl-1"
argv = ["echo", "a}b"]
"#;

        wait_without_until: line 4, "a wait needs `until`", r#"name = "t"
description = "d"

[[steps]]
kind = "wait"
on = "ctl-1"
argv = ["uptime"]
"#;

        bad_until_regex: line 7, "`until` is no regular expression", r#"name = "t"
description = "d"

[[steps]]
kind = "wait"
on = "ctl-1"
until = "(up"
argv = ["uptime"]
"#;

        bad_output_regex: line 7, "`output` is no regular expression: error: unclosed character class", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "ctl-1"
output = "[a-z"
argv = ["uptime"]
"#;

        unreadable_timeout: line 7, "`timeout` = \"soon\"", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "ctl-1"
timeout = "soon"
argv = ["uptime"]
"#;

        timeout_above_a_day: line 7, "`timeout` must be from 1s to 24h", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "ctl-1"
timeout = "25h"
argv = ["uptime"]
"#;

        timeout_below_a_second: line 7, "`timeout` must be from 1s to 24h", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "ctl-1"
timeout = "500ms"
argv = ["uptime"]
"#;

        interval_above_timeout: line 10, "`interval` must be at least 1s and at most the timeout", r#"name = "t"
description = "d"

[[steps]]
kind = "wait"
on = "ctl-1"
argv = ["uptime"]
until = "up"
timeout = "1m"
interval = "2m"
"#;

        default_interval_above_timeout: line 4, "`interval` must be at least 1s and at most the timeout", r#"name = "t"
description = "d"

[[steps]]
kind = "wait"
on = "ctl-1"
argv = ["uptime"]
until = "up"
timeout = "2s"
"#;

        empty_exit_codes: line 7, "`exit_codes` is empty", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "ctl-1"
exit_codes = []
argv = ["uptime"]
"#;

        bad_capture_name: line 7, "captured `Pid` must be lower-case", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "ctl-1"
output = '(?P<Pid>[0-9]+)'
argv = ["pgrep", "nova"]
"#;

        capture_named_like_a_parameter: line 12, "captured `module` must be lower-case letters, digits and `_`, and not a parameter's name", r#"name = "t"
description = "d"

[[params]]
name = "module"
kind = "choice"
values = ["kvm_amd"]

[[steps]]
kind = "run"
on = "ctl-1"
output = '(?P<module>kvm_[a-z]+)'
argv = ["lsmod"]
"#;

        two_approvals: line 8, "at most one approval step", r#"name = "t"
description = "d"

[[steps]]
kind = "approval"
reason = "r"

[[steps]]
kind = "approval"
reason = "r"
"#;

        approval_in_each: line 4, "`each`", r#"name = "t"
description = "d"

[[steps]]
kind = "approval"
each = "compute"
reason = "r"
"#;

        approval_without_reason: line 4, "an approval step needs `reason`", r#"name = "t"
description = "d"

[[steps]]
kind = "approval"
"#;

        confirm_without_prompt: line 4, "a confirm step needs `prompt`", r#"name = "t"
description = "d"

[[steps]]
kind = "confirm"
"#;

        literal_on_outside_inventory: line 6, "host `db-1` is not in the host inventory", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "db-1"
argv = ["uptime"]
"#;

        literal_on_not_a_host_name: line 6, "host name `db 1` has ` `", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "db 1"
argv = ["uptime"]
"#;

        each_unknown_group: line 6, "group `storage` is not in the host inventory", r#"name = "t"
description = "d"

[[steps]]
kind = "run"
each = "storage"
argv = ["uptime"]
"#;

        each_with_a_host_parameter: line 8, "rename the parameter", r#"name = "t"
description = "d"

[[params]]
name = "host"
kind = "host"

[[steps]]
kind = "run"
each = "compute"
argv = ["uptime"]
"#;
    }
}

#[test]
fn more_than_a_hundred_steps_are_refused_at_the_first_one_too_many() {
    let mut text = "name = \"t\"\ndescription = \"d\"\n".to_owned();
    for _ in 0..101 {
        text.push_str("\n[[steps]]\nkind = \"confirm\"\nprompt = \"p\"\n");
    }
    // Two header lines, then four lines per step: the 101st step starts on line 2 + 100*4 + 2.
    refused(&text, 404, "a runbook has at most 100 steps");
}

#[test]
fn example_on_a_choice_is_refused() {
    refused(
        r#"name = "t"
description = "d"

[[params]]
name = "module"
kind = "choice"
values = ["kvm_amd"]
example = "kvm_amd"

[[steps]]
kind = "confirm"
prompt = "p"
"#,
        4,
        "`example` does not apply to kind = \"choice\"",
    );
}

// ---------------------------------------------------------------------------------------------
// Across files.

fn named(name: &str, source: &str, params: &[&str]) -> Runbook {
    let mut text = format!("name = \"{name}\"\ndescription = \"d\"\n");
    for p in params {
        text.push_str(&format!(
            "\n[[params]]\nname = \"{p}\"\nkind = \"number\"\n"
        ));
    }
    text.push_str("\n[[steps]]\nkind = \"confirm\"\nprompt = \"p\"\n");
    Runbook::parse(source, &text, &inventory()).unwrap()
}

#[test]
fn two_files_declaring_one_name_are_refused() {
    let err = Runbooks::new(vec![
        named("restart", "rb/a.toml", &[]),
        named("other", "rb/b.toml", &[]),
        named("restart", "rb/c.toml", &[]),
    ])
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "rb/c.toml:1: runbook `restart` is also declared by rb/a.toml"
    );
}

#[test]
fn more_than_24_parameter_names_together_are_refused() {
    let names: Vec<String> = (0..25).map(|i| format!("p{i:02}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    // 24 names in all fit, shared names count once.
    let fits = Runbooks::new(vec![
        named("a", "rb/a.toml", &names[..20]),
        named("b", "rb/b.toml", &names[4..24]),
    ])
    .unwrap();
    assert_eq!(fits.param_names().len(), MAX_PARAM_NAMES);
    let err = Runbooks::new(vec![
        named("a", "rb/a.toml", &names[..20]),
        named("b", "rb/b.toml", &names[5..25]),
    ])
    .unwrap_err();
    assert_eq!((err.file.as_str(), err.line), ("rb/b.toml", 1));
    assert!(
        err.message
            .contains("the runbooks use 25 parameter names together, at most 24"),
        "{err}"
    );
}

#[test]
fn runbooks_are_sorted_and_an_unknown_name_lists_the_known_ones() {
    let runbooks = Runbooks::new(vec![
        named("zeta", "rb/z.toml", &[]),
        named("alpha", "rb/a.toml", &[]),
    ])
    .unwrap();
    let names: Vec<&str> = runbooks.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["alpha", "zeta"]);
    assert_eq!(
        runbooks.get("beta").unwrap_err().to_string(),
        "there is no runbook `beta`; known: alpha, zeta"
    );
    assert!(
        Runbooks::default()
            .get("beta")
            .unwrap_err()
            .to_string()
            .contains("none is loaded")
    );
}

// ---------------------------------------------------------------------------------------------
// Requests and plans.

const NESTED_VIRT: &str = r#"name = "nested-virt"
description = "Turn nested virtualisation on for one hypervisor"
maintenance = true

[[params]]
name = "host"
kind = "host"
group = "compute"
help = "the hypervisor"

[[params]]
name = "module"
kind = "choice"
values = ["kvm_amd", "kvm_intel"]
default = "kvm_amd"

[[params]]
name = "ticket"
kind = "pattern"
pattern = "OPS-[0-9]+"
example = "OPS-1234"
default = "OPS-0"

[[params]]
name = "grace"
kind = "number"
min = 1
max = 60
default = "5"

[[steps]]
title = "Instances on the host"
kind = "run"
on = "{host}"
argv = ["virsh", "list", "--name"]
post_output = true

[[steps]]
kind = "approval"
reason = "the instances listed above lose their nested flag"

[[steps]]
kind = "run"
on = "{host}"
argv = ["modprobe", "-r", "{module}"]

[[steps]]
kind = "run"
on = "{host}"
argv = ["tee", "/etc/modprobe.d/{module}.conf"]
stdin = "options {module} nested=1"
idempotent = true

[[steps]]
kind = "wait"
on = "{host}"
argv = ["cat", "/sys/module/{module}/parameters/nested"]
until = "^(Y|1)$"
interval = "2s"
timeout = "1m"

[[steps]]
kind = "confirm"
prompt = "start a test instance on {host}, then close {ticket}"
"#;

fn nested_virt() -> Runbook {
    loaded(NESTED_VIRT)
}

fn request(runbook: &Runbook, given: &[(&str, &str)]) -> Result<RunbookRequest, RunbookError> {
    runbook.request(given, &inventory())
}

fn plan(runbook: &Runbook, given: &[(&str, &str)]) -> Plan {
    let request = request(runbook, given).unwrap();
    runbook.plan(&request, &inventory()).unwrap()
}

fn command(action: &HostStep) -> &HostCommand {
    match action {
        Action::Safe(HostSafe::HostCommand(c))
        | Action::Destructive(HostDestructive::HostCommand(c)) => c,
        other => panic!("not a host command: {other:?}"),
    }
}

fn wait(action: &HostStep) -> &OutputWait {
    match action {
        Action::Wait(HostWait::HostOutput(w)) => w,
        other => panic!("not a host wait: {other:?}"),
    }
}

fn words(words: &[Word]) -> Vec<String> {
    words.iter().map(ToString::to_string).collect()
}

/// A refused value: the parameter it was given for, and part of why.
#[track_caller]
fn bad_value(given: &[(&str, &str)], param_name: &str, why_has: &str) {
    match request(&nested_virt(), given) {
        Err(RunbookError::BadValue { param, why }) => {
            assert_eq!(param.as_str(), param_name, "{why}");
            assert!(why.contains(why_has), "{why:?} should contain {why_has:?}");
        }
        other => panic!("{given:?} should be refused for {param_name}: {other:?}"),
    }
}

#[test]
fn a_host_outside_the_inventory_or_its_group_is_refused() {
    bad_value(
        &[("host", "db-1")],
        "host",
        "`db-1` is not a host of group `compute`",
    );
    bad_value(
        &[("host", "ctl-1")],
        "host",
        "`ctl-1` is not a host of group `compute`",
    );
    bad_value(&[("host", "cmp_1.")], "host", "is not a host name");
}

#[test]
fn a_choice_must_be_listed() {
    bad_value(
        &[("host", "cmp-1"), ("module", "xen")],
        "module",
        "`xen` is not one of kvm_amd, kvm_intel",
    );
}

#[test]
fn a_pattern_must_match_whole() {
    bad_value(
        &[("host", "cmp-1"), ("ticket", "JIRA-1")],
        "ticket",
        "`JIRA-1` is not of the expected form, e.g. OPS-1234",
    );
    // Anchored: a match inside the value is not enough.
    bad_value(
        &[("host", "cmp-1"), ("ticket", "xOPS-1")],
        "ticket",
        "expected form",
    );
    bad_value(
        &[("host", "cmp-1"), ("ticket", "OPS-1x")],
        "ticket",
        "expected form",
    );
}

#[test]
fn a_number_must_be_in_range() {
    for value in ["0", "61", "1.5", "five"] {
        bad_value(
            &[("host", "cmp-1"), ("grace", value)],
            "grace",
            "is not a whole number from 1 to 60",
        );
    }
}

#[test]
fn a_number_is_plain_digits() {
    bad_value(
        &[("host", "cmp-1"), ("grace", "+5")],
        "grace",
        "is not a whole number",
    );
}

#[test]
fn every_value_is_one_plain_word() {
    let host = ("host", "cmp-1");
    bad_value(&[host, ("ticket", "-OPS-1")], "ticket", "starts with `-`");
    bad_value(&[host, ("grace", "-5")], "grace", "starts with `-`");
    bad_value(
        &[host, ("ticket", "OPS 1")],
        "ticket",
        "values are single words",
    );
    bad_value(&[host, ("ticket", "OPS-{1}")], "ticket", "without braces");
    bad_value(
        &[host, ("ticket", "OPS-1\n")],
        "ticket",
        "values are single words",
    );
    bad_value(&[host, ("ticket", "")], "ticket", "the value is empty");
    let long = format!("OPS-{}", "1".repeat(250));
    bad_value(
        &[host, ("ticket", &long)],
        "ticket",
        "longer than 253 characters",
    );
    // The host parameter is checked the same way before its kind.
    bad_value(&[("host", "-oProxyCommand=x")], "host", "starts with `-`");
}

#[test]
fn an_unknown_parameter_is_refused_with_the_usage() {
    let err = request(&nested_virt(), &[("host", "cmp-1"), ("hots", "cmp-2")]).unwrap_err();
    assert!(matches!(&err, RunbookError::UnknownParam { param, .. } if param == "hots"));
    assert_eq!(
        err.to_string(),
        "runbook `nested-virt` has no parameter `hots`; usage: /runbook run name:nested-virt \
         host:<a host of group compute> [module:<kvm_amd|kvm_intel>] [ticket:<e.g. OPS-1234>] \
         [grace:<1 to 60>]"
    );
}

#[test]
fn a_missing_required_parameter_is_refused_with_the_usage() {
    let err = request(&nested_virt(), &[("module", "kvm_intel")]).unwrap_err();
    assert!(matches!(&err, RunbookError::MissingParam { param, .. } if param.as_str() == "host"));
    assert!(
        err.to_string()
            .starts_with("runbook `nested-virt` needs `host:`; usage: /runbook run"),
        "{err}"
    );
}

#[test]
fn defaults_are_filled_in() {
    let request = request(&nested_virt(), &[("host", "cmp-1"), ("grace", "30")]).unwrap();
    let params: Vec<(&str, &str)> = request
        .params
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        params,
        [
            ("grace", "30"),
            ("host", "cmp-1"),
            ("module", "kvm_amd"),
            ("ticket", "OPS-0")
        ]
    );
    assert_eq!(request.runbook.as_str(), "nested-virt");
    assert!(request.maintenance);
}

#[test]
fn the_request_lists_exactly_the_hosts_its_steps_run_on() {
    let request = request(&nested_virt(), &[("host", "cmp-1")]).unwrap();
    assert_eq!(request.hosts, BTreeSet::from([host("cmp-1")]));
}

#[test]
fn parameters_are_filled_into_the_plan() {
    let plan = plan(
        &nested_virt(),
        &[("host", "cmp-2"), ("module", "kvm_intel")],
    );
    let remove = command(&plan.host_steps()[2]);
    assert_eq!(remove.host, host("cmp-2"));
    assert_eq!(words(&remove.argv), ["modprobe", "-r", "kvm_intel"]);
    let tee = command(&plan.host_steps()[3]);
    assert_eq!(words(&tee.argv), ["tee", "/etc/modprobe.d/kvm_intel.conf"]);
    assert_eq!(
        tee.stdin.as_ref().map(ToString::to_string).as_deref(),
        Some("options kvm_intel nested=1")
    );
    assert!(tee.idempotent);
    let Action::Safe(HostSafe::Confirm { prompt }) = &plan.host_steps()[5] else {
        panic!("{:?}", plan.host_steps()[5]);
    };
    assert_eq!(
        prompt.to_string(),
        "start a test instance on cmp-2, then close OPS-0"
    );
    assert_eq!(
        plan.request(),
        &ProcedureRequest::Runbook(
            request(
                &nested_virt(),
                &[("host", "cmp-2"), ("module", "kvm_intel")]
            )
            .unwrap()
        )
    );
    assert_eq!(
        plan.notes(),
        ["runbook `nested-virt`: Turn nested virtualisation on for one hypervisor"]
    );
}

#[test]
fn steps_without_settings_take_the_defaults() {
    let plan = plan(&nested_virt(), &[("host", "cmp-1")]);
    let list = command(&plan.host_steps()[0]);
    assert_eq!(list.timeout_secs, 120);
    assert_eq!(list.exit_codes, [0]);
    assert!(!list.idempotent);
    assert!(list.post_output);
    assert_eq!(list.output, None);
    assert_eq!(list.stdin, None);
    assert_eq!(list.title.as_deref(), Some("Instances on the host"));
    let remove = command(&plan.host_steps()[2]);
    assert!(!remove.post_output);
    assert_eq!(remove.title, None);
    let nested = wait(&plan.host_steps()[4]);
    assert_eq!((nested.interval_secs, nested.timeout_secs), (2, 60));
    assert_eq!(nested.until, "^(Y|1)$");

    let bare = loaded(
        r#"name = "t"
description = "d"

[[steps]]
kind = "wait"
on = "ctl-1"
argv = ["uptime"]
until = "up"
"#,
    );
    let plan = bare
        .plan(&bare.request(&[], &inventory()).unwrap(), &inventory())
        .unwrap();
    let up = wait(&plan.host_steps()[0]);
    assert_eq!((up.interval_secs, up.timeout_secs), (5, 600));
}

#[test]
fn steps_after_the_gate_are_destructive_and_approval_stops_there() {
    let plan = plan(&nested_virt(), &[("host", "cmp-1")]);
    assert!(matches!(
        plan.host_steps()[0],
        Action::Safe(HostSafe::HostCommand(_))
    ));
    assert!(
        matches!(&plan.host_steps()[1], Action::Gate { reason } if reason.contains("nested flag"))
    );
    assert!(matches!(
        plan.host_steps()[2],
        Action::Destructive(HostDestructive::HostCommand(_))
    ));
    assert!(matches!(
        plan.host_steps()[3],
        Action::Destructive(HostDestructive::HostCommand(_))
    ));
    assert!(matches!(
        plan.host_steps()[4],
        Action::Wait(HostWait::HostOutput(_))
    ));
    assert!(matches!(
        plan.host_steps()[5],
        Action::Safe(HostSafe::Confirm { .. })
    ));
    assert_eq!(plan.host_steps().len(), 6);
    assert_eq!(plan.approval_at(), Some(1));
    assert!(plan.needs_approval());
    assert!(nested_virt().needs_approval());
}

#[test]
fn without_a_gate_nothing_is_destructive_and_nothing_needs_approval() {
    let runbook = loaded(
        r#"name = "t"
description = "d"

[[steps]]
kind = "run"
on = "ctl-1"
argv = ["uptime"]
"#,
    );
    let plan = runbook
        .plan(&runbook.request(&[], &inventory()).unwrap(), &inventory())
        .unwrap();
    assert!(matches!(
        plan.host_steps()[0],
        Action::Safe(HostSafe::HostCommand(_))
    ));
    assert_eq!(plan.approval_at(), None);
    assert!(!plan.needs_approval());
    assert!(!runbook.needs_approval());
}

const RESTART_COMPUTE: &str = r#"name = "restart-compute"
description = "Restart the compute service on every hypervisor, one at a time"

[[steps]]
title = "Restart"
kind = "run"
each = "compute"
argv = ["docker", "restart", "nova_compute"]

[[steps]]
kind = "wait"
each = "compute"
on = "{host}"
argv = ["docker", "inspect", "-f", "{{{{.State.Health.Status}}}}", "nova_compute"]
until = "^healthy$"

[[steps]]
kind = "run"
on = "ctl-1"
argv = ["openstack", "compute", "service", "list", "--service", "nova-compute"]
post_output = true

[[steps]]
kind = "confirm"
each = "compute"
prompt = "check the instances on {host}"
"#;

#[test]
fn each_blocks_are_unrolled_host_by_host_in_inventory_order() {
    let runbook = loaded(RESTART_COMPUTE);
    let plan = plan(&runbook, &[]);
    let steps: Vec<String> = plan
        .host_steps()
        .iter()
        .map(|step| match step {
            Action::Safe(HostSafe::HostCommand(c)) => {
                format!("run {} {}", c.host, c.argv[1])
            }
            Action::Wait(HostWait::HostOutput(w)) => format!("wait {}", w.host),
            Action::Safe(HostSafe::Confirm { prompt }) => format!("ask: {prompt}"),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        steps,
        [
            "run cmp-2 restart",
            "wait cmp-2",
            "run cmp-1 restart",
            "wait cmp-1",
            "run ctl-1 compute",
            "ask: check the instances on cmp-2",
            "ask: check the instances on cmp-1",
        ]
    );
    // `{{` and `}}` are literal braces: four in the file, two in the argv.
    assert_eq!(
        words(&wait(&plan.host_steps()[1]).argv)[3],
        "{{.State.Health.Status}}"
    );
    assert_eq!(
        command(&plan.host_steps()[0]).title.as_deref(),
        Some("Restart")
    );
    let request = request(&runbook, &[]).unwrap();
    assert_eq!(
        request.hosts,
        BTreeSet::from([host("cmp-1"), host("cmp-2"), host("ctl-1")])
    );
    assert!(!request.maintenance);
}

#[test]
fn captured_values_keep_their_place_in_the_plan() {
    let runbook = loaded(
        r#"name = "trace-compute"
description = "Trace the compute service for 30 seconds"

[[params]]
name = "host"
kind = "host"

[[steps]]
kind = "run"
on = "{host}"
argv = ["pgrep", "-o", "nova-compute"]
output = '^(?P<pid>[0-9]+)$'

[[steps]]
kind = "run"
on = "{host}"
argv = ["timeout", "30", "strace", "-f", "-p", "{pid}", "-o", "/tmp/{host}-{pid}.trace"]
exit_codes = [0, 124]
timeout = "1m"
"#,
    );
    let plan = plan(&runbook, &[("host", "ctl-1")]);
    let pgrep = command(&plan.host_steps()[0]);
    assert_eq!(pgrep.output.as_deref(), Some("^(?P<pid>[0-9]+)$"));
    let strace = command(&plan.host_steps()[1]);
    assert_eq!(
        words(&strace.argv),
        [
            "timeout",
            "30",
            "strace",
            "-f",
            "-p",
            "{pid}",
            "-o",
            "/tmp/ctl-1-{pid}.trace"
        ]
    );
    assert_eq!(
        (strace.exit_codes.as_slice(), strace.timeout_secs),
        (&[0, 124][..], 60)
    );
    let captured = BTreeMap::from([("pid".to_owned(), "4242".to_owned())]);
    let filled: Vec<String> = strace
        .argv
        .iter()
        .map(|w| w.fill(&captured).unwrap())
        .collect();
    assert_eq!(filled[5], "4242");
    assert_eq!(filled[7], "/tmp/ctl-1-4242.trace");
    assert_eq!(strace.argv[5].fill(&BTreeMap::new()), Err("pid".to_owned()));
    // The outline keeps every placeholder as written.
    assert_eq!(
        runbook.outline()[1],
        "on {host}, run `timeout 30 strace -f -p {pid} -o /tmp/{host}-{pid}.trace`"
    );
}

#[test]
fn the_canonical_text_parses_back_to_the_same_request() {
    let runbook = nested_virt();
    let request = request(&runbook, &[("module", "kvm_intel"), ("host", "cmp-1")]).unwrap();
    let line = request.to_string();
    assert_eq!(
        line,
        "/runbook run name:nested-virt grace:5 host:cmp-1 module:kvm_intel ticket:OPS-0"
    );
    let Ok(Request::RunbookRun { name, params, .. }) = parse_line(&line, Origin::Console) else {
        panic!("{line} should parse as /runbook run");
    };
    assert_eq!(name, "nested-virt");
    let expected: Vec<(String, String)> = request
        .params
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    assert_eq!(params, expected);
    let given: Vec<(&str, &str)> = params
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(runbook.request(&given, &inventory()).unwrap(), request);
}

#[test]
fn a_value_with_a_quote_survives_the_canonical_text() {
    let runbook = loaded(
        r#"name = "t"
description = "d"

[[params]]
name = "label"
kind = "pattern"
pattern = '[a-z"]+'
example = "ab"

[[steps]]
kind = "confirm"
prompt = "label {label}"
"#,
    );
    let request = runbook.request(&[("label", "a\"b")], &inventory());
    let Ok(request) = request else {
        // Refusing such a value is a fix too.
        return;
    };
    let line = request.to_string();
    let Ok(Request::RunbookRun { params, .. }) = parse_line(&line, Origin::Console) else {
        panic!("{line} should parse as /runbook run");
    };
    assert_eq!(params, [("label".to_owned(), "a\"b".to_owned())]);
}

#[test]
fn the_digest_changes_with_a_value() {
    let runbook = nested_virt();
    let amd = plan(&runbook, &[("host", "cmp-1"), ("module", "kvm_amd")]);
    let again = plan(&runbook, &[("host", "cmp-1")]);
    let intel = plan(&runbook, &[("host", "cmp-1"), ("module", "kvm_intel")]);
    let unused = plan(&runbook, &[("host", "cmp-1"), ("grace", "6")]);
    assert_eq!(amd.digest(), again.digest());
    assert_ne!(amd.digest(), intel.digest());
    // A value no step uses is still part of the request, and so of the digest.
    assert_ne!(amd.digest(), unused.digest());
}

#[test]
fn a_placeholder_that_is_no_inventory_host_is_refused_when_planned() {
    let runbook = loaded(
        r#"name = "t"
description = "d"

[[params]]
name = "node"
kind = "pattern"
pattern = "[a-z0-9-]+"
example = "cmp-1"

[[steps]]
kind = "run"
on = "{node}"
argv = ["uptime"]
"#,
    );
    assert_eq!(
        request(&runbook, &[("node", "db-1")]),
        Err(RunbookError::NotAHost {
            runbook: RunbookName::parse("t").unwrap(),
            value: "db-1".to_owned(),
        })
    );
    assert_eq!(
        request(&runbook, &[("node", "cmp-1")]).unwrap().hosts,
        BTreeSet::from([host("cmp-1")])
    );
}

// ---------------------------------------------------------------------------------------------
// Chat.

#[test]
fn show_has_the_usage_the_parameters_and_the_steps() {
    let text = crate::render::runbook_show(&nested_virt());
    for line in [
        "`nested-virt`: Turn nested virtualisation on for one hypervisor",
        "usage: /runbook run name:nested-virt host:<a host of group compute> \
         [module:<kvm_amd|kvm_intel>] [ticket:<e.g. OPS-1234>] [grace:<1 to 60>]",
        "parameters:",
        "  host: a host of group compute. the hypervisor",
        "  module: kvm_amd|kvm_intel (default kvm_amd)",
        "  ticket: e.g. OPS-1234 (default OPS-0)",
        "  grace: 1 to 60 (default 5)",
        "steps:",
        "  1. Instances on the host: on {host}, run `virsh list --name`",
        "  2. a second operator approves here: the instances listed above lose their nested flag",
        "  3. on {host}, run `modprobe -r {module}`",
        "  4. on {host}, run `tee /etc/modprobe.d/{module}.conf` (repeatable)",
        "  5. on {host}, wait until `cat /sys/module/{module}/parameters/nested` prints /^(Y|1)$/",
        "  6. ask an operator: start a test instance on {host}, then close {ticket}",
        "from deploy/runbooks/t.toml",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing line {line:?} in:\n{text}"
        );
    }
    let each = crate::render::runbook_show(&loaded(RESTART_COMPUTE));
    assert!(
        each.contains(
            "  1. [each host of compute] Restart: on {host}, run `docker restart nova_compute`"
        ),
        "{each}"
    );
    assert!(
        each.contains("`docker inspect -f {{.State.Health.Status}} nova_compute`"),
        "{each}"
    );
}

#[test]
fn list_has_every_runbook_and_says_which_need_approval() {
    let runbooks = Runbooks::new(vec![loaded(RESTART_COMPUTE), nested_virt()]).unwrap();
    let text = crate::render::runbook_list(&runbooks);
    assert_eq!(
        text,
        "`nested-virt`: Turn nested virtualisation on for one hypervisor (needs approval)\n\
         `restart-compute`: Restart the compute service on every hypervisor, one at a time\n\
         /runbook show name:<runbook> for its parameters and steps"
    );
    assert!(crate::render::runbook_list(&Runbooks::default()).contains("no runbooks are loaded"));
}

// ---------------------------------------------------------------------------------------------
// docs/runbooks.md: its examples load, and the texts it quotes are the ones opsbot writes.

const DOC: &str = include_str!("../../../docs/runbooks.md");

/// The inventory of the document's `[runbooks]` example.
fn doc_inventory() -> Inventory {
    let hosts = |names: &[&str]| names.iter().map(|h| HostName::parse(h).unwrap()).collect();
    Inventory::new(BTreeMap::from([
        (
            GroupName::parse("compute").unwrap(),
            hosts(&["cmp-01", "cmp-02", "cmp-03"]),
        ),
        (GroupName::parse("control").unwrap(), hosts(&["ctl-01"])),
    ]))
}

/// The ```toml blocks of the document.
fn doc_toml_blocks() -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in DOC.lines() {
        match (&mut current, line) {
            (None, "```toml") => current = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), line) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

fn doc_example() -> Runbook {
    let text = doc_toml_blocks()
        .into_iter()
        .find(|b| b.starts_with("name = \"nested-virt\""))
        .expect("the complete example");
    Runbook::parse(
        "/etc/opsbot/runbooks/nested-virt.toml",
        &text,
        &doc_inventory(),
    )
    .unwrap_or_else(|e| panic!("the document's example should load: {e}"))
}

#[test]
fn the_documented_examples_load() {
    let blocks = doc_toml_blocks();
    let mut checked = 0;
    for block in &blocks {
        let text = if block.starts_with("name = ") {
            block.clone()
        } else if block.starts_with("[[steps]]") {
            // A fragment: steps only. Outside an `each` block, `{host}` is a parameter.
            let host = if block.contains("each = ") {
                ""
            } else {
                "[[params]]\nname = \"host\"\nkind = \"host\"\n\n"
            };
            format!("name = \"doc\"\ndescription = \"d\"\n\n{host}{block}")
        } else {
            continue;
        };
        if let Err(e) = Runbook::parse("docs/runbooks.md", &text, &doc_inventory()) {
            panic!("a documented runbook does not load: {e}\n{text}");
        }
        checked += 1;
    }
    assert_eq!(checked, 3, "the complete example, captures, the each block");
}

#[test]
fn the_documented_texts_are_what_opsbot_writes() {
    let runbook = doc_example();
    assert!(DOC.contains(&format!("```text\n{}\n```", runbook.usage())));
    let request = runbook
        .request(&[("host", "cmp-02")], &doc_inventory())
        .unwrap();
    assert!(DOC.contains(&format!("`{request}`")), "{request}");
    let bad = runbook
        .request(&[("host", "cmp-02"), ("module", "xen")], &doc_inventory())
        .unwrap_err();
    assert!(DOC.contains(&format!("``{bad}``")), "{bad}");
    // The load error the document shows: its example with `sudo sh -c` in the fourth step.
    let text = doc_toml_blocks()
        .into_iter()
        .find(|b| b.starts_with("name = \"nested-virt\""))
        .unwrap();
    let broken = text.replace(
        r#"argv = ["modprobe", "-r", "{module}"]"#,
        r#"argv = ["sudo", "sh", "-c", "modprobe -r {module}"]"#,
    );
    assert_ne!(broken, text);
    let err = Runbook::parse(
        "/etc/opsbot/runbooks/nested-virt.toml",
        &broken,
        &doc_inventory(),
    )
    .unwrap_err();
    assert!(
        DOC.contains(&format!("```text\n{err}\n```")),
        "the document should show: {err}"
    );
    // The plan: the gate stops the run after the listing, and the rest needs the approval.
    let plan = runbook.plan(&request, &doc_inventory()).unwrap();
    assert_eq!(plan.approval_at(), Some(1));
    assert_eq!(request.hosts, BTreeSet::from([host("cmp-02")]));
    assert!(request.maintenance);
}
