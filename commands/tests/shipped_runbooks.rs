//! The runbooks shipped in `deploy/runbooks/` load, load together, and plan the steps their
//! comments promise: checks before the approval gate and destructive steps after it, restarts
//! host by host with the hypervisors before the controllers.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use opsbot_commands::name::{GroupName, HostName, ParamName};
use opsbot_commands::plan::{Action, HostCommand, HostDestructive, HostSafe, HostWait, Plan};
use opsbot_commands::runbook::{Inventory, Runbook, RunbookError, Runbooks};
use regex::Regex;

fn inventory() -> Inventory {
    let hosts = |names: &[&str]| -> Vec<HostName> {
        names.iter().map(|h| HostName::parse(h).unwrap()).collect()
    };
    Inventory::new(BTreeMap::from([
        (
            GroupName::parse("compute").unwrap(),
            hosts(&["compute-01", "compute-02"]),
        ),
        (GroupName::parse("control").unwrap(), hosts(&["ctl-01"])),
    ]))
}

fn runbooks_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy/runbooks")
}

/// Every `*.toml` of the directory, read at test time, by file name.
fn shipped() -> BTreeMap<String, Runbook> {
    let inventory = inventory();
    std::fs::read_dir(runbooks_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "toml"))
        .map(|path| {
            let file = path.file_name().unwrap().to_str().unwrap().to_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            let source = format!("deploy/runbooks/{file}");
            let runbook =
                Runbook::parse(&source, &text, &inventory).unwrap_or_else(|e| panic!("{e}"));
            (file, runbook)
        })
        .collect()
}

fn runbook(name: &str) -> Runbook {
    shipped()
        .into_values()
        .find(|r| r.name.as_str() == name)
        .unwrap()
}

fn plan(runbook: &Runbook, given: &[(&str, &str)]) -> Plan {
    let inventory = inventory();
    let request = runbook.request(given, &inventory).unwrap();
    runbook.plan(&request, &inventory).unwrap()
}

/// One line per planned step: `safe|destructive <host>: <argv>`, `wait <host>: <argv> until
/// /<regex>/`, or `gate`.
fn lines(plan: &Plan) -> Vec<String> {
    let command = |kind: &str, c: &HostCommand| {
        let argv: Vec<String> = c.argv.iter().map(ToString::to_string).collect();
        format!("{kind} {}: {}", c.host, argv.join(" "))
    };
    plan.host_steps()
        .iter()
        .map(|step| match step {
            Action::Safe(HostSafe::HostCommand(c)) => command("safe", c),
            Action::Destructive(HostDestructive::HostCommand(c)) => command("destructive", c),
            Action::Wait(HostWait::HostOutput(w)) => {
                let argv: Vec<String> = w.argv.iter().map(ToString::to_string).collect();
                format!("wait {}: {} until /{}/", w.host, argv.join(" "), w.until)
            }
            Action::Gate { .. } => "gate".to_owned(),
            other => panic!("a runbook planned {other:?}"),
        })
        .collect()
}

fn commands(plan: &Plan) -> Vec<&HostCommand> {
    plan.host_steps()
        .iter()
        .filter_map(|step| match step {
            Action::Safe(HostSafe::HostCommand(c))
            | Action::Destructive(HostDestructive::HostCommand(c)) => Some(c),
            _ => None,
        })
        .collect()
}

fn hosts(names: &[&str]) -> BTreeSet<HostName> {
    names.iter().map(|h| HostName::parse(h).unwrap()).collect()
}

#[test]
fn exactly_the_four_runbooks_are_shipped_and_load_together() {
    let shipped = shipped();
    let files: Vec<&str> = shipped.keys().map(String::as_str).collect();
    assert_eq!(
        files,
        [
            "compute-rpc-cap-restart.toml",
            "debug-silent-service.toml",
            "nested-virt.toml",
            "workflow-db-populate.toml",
        ]
    );
    for (file, runbook) in &shipped {
        // The file is named after the runbook, so operators find one from the other.
        assert_eq!(format!("{}.toml", runbook.name), *file);
        assert!(!runbook.description.is_empty(), "{file}");
        for param in &runbook.params {
            assert!(!param.help.is_empty(), "{file}: {} has no help", param.name);
        }
    }
    let runbooks = Runbooks::new(shipped.into_values().collect()).unwrap();
    let names: Vec<&str> = runbooks.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "compute-rpc-cap-restart",
            "debug-silent-service",
            "nested-virt",
            "workflow-db-populate",
        ]
    );
    let params: Vec<&str> = runbooks.param_names().iter().map(|p| p.as_str()).collect();
    assert_eq!(params, ["host", "module", "process", "seconds"]);
}

#[test]
fn every_command_and_wait_has_a_title() {
    let samples: [(&str, &[(&str, &str)]); 4] = [
        ("nested-virt", &[("host", "compute-01")]),
        ("workflow-db-populate", &[("host", "ctl-01")]),
        (
            "debug-silent-service",
            &[("host", "compute-01"), ("process", "nova-compute")],
        ),
        ("compute-rpc-cap-restart", &[]),
    ];
    for (name, given) in samples {
        let plan = plan(&runbook(name), given);
        for step in plan.host_steps() {
            let title = match step {
                Action::Safe(HostSafe::HostCommand(c))
                | Action::Destructive(HostDestructive::HostCommand(c)) => &c.title,
                Action::Wait(HostWait::HostOutput(w)) => &w.title,
                Action::Gate { reason } => {
                    assert!(!reason.is_empty());
                    continue;
                }
                other => panic!("{name} planned {other:?}"),
            };
            assert!(
                title.as_ref().is_some_and(|t| !t.is_empty()),
                "{name}: {step:?}"
            );
        }
    }
}

#[test]
fn nested_virt_checks_before_the_gate_and_reloads_the_module_after_it() {
    let runbook = runbook("nested-virt");
    assert!(runbook.maintenance);
    assert!(runbook.needs_approval());
    let inventory = inventory();
    let request = runbook
        .request(&[("host", "compute-01")], &inventory)
        .unwrap();
    assert_eq!(
        request.params[&ParamName::parse("module").unwrap()],
        "kvm_amd"
    );
    assert_eq!(request.hosts, hosts(&["compute-01"]));
    let plan = runbook.plan(&request, &inventory).unwrap();
    assert_eq!(
        lines(&plan),
        [
            "safe compute-01: tee /etc/modprobe.d/kvm-nested.conf",
            "safe compute-01: docker exec nova_libvirt virsh list --name",
            "gate",
            "destructive compute-01: modprobe -r kvm_amd",
            "destructive compute-01: modprobe kvm_amd",
            "wait compute-01: cat /sys/module/kvm_amd/parameters/nested until /^(Y|1)$/",
            "destructive compute-01: docker restart nova_compute",
            "wait compute-01: docker ps --filter name=^nova_compute$ --filter status=running \
             --quiet until /^[0-9a-f]{12}$/",
        ]
    );
    // The approval comes after the checks and before the module is unloaded.
    let gate = plan.approval_at().unwrap();
    let unload = lines(&plan)
        .iter()
        .position(|l| l.ends_with("modprobe -r kvm_amd"))
        .unwrap();
    assert!(gate < unload);
    assert_eq!(gate, 2);
    for (i, step) in plan.host_steps().iter().enumerate() {
        match step {
            Action::Safe(_) => assert!(i < gate),
            Action::Destructive(_) => assert!(i > gate),
            Action::Wait(_) | Action::Gate { .. } => {}
        }
    }

    let cmds = commands(&plan);
    let tee = cmds[0];
    assert_eq!(
        tee.stdin.as_ref().map(ToString::to_string).as_deref(),
        Some("options kvm_amd nested=y\n")
    );
    assert!(tee.idempotent);
    // The VM check passes only on virsh's output for no VM (an empty line).
    let no_vm = Regex::new(cmds[1].output.as_deref().unwrap()).unwrap();
    assert!(no_vm.is_match("") && !no_vm.is_match("instance-00000001\n"));
    // Unloading twice fails, so it is not repeated after a restart of opsbot.
    assert!(!cmds[2].idempotent);
    assert!(cmds[3].idempotent && cmds[4].idempotent);

    let intel = plan_lines(&runbook, &[("host", "compute-02"), ("module", "kvm_intel")]);
    assert_eq!(intel[3], "destructive compute-02: modprobe -r kvm_intel");
    assert_eq!(
        intel[5],
        "wait compute-02: cat /sys/module/kvm_intel/parameters/nested until /^(Y|1)$/"
    );

    // Only hypervisors, only the two modules.
    for given in [
        &[("host", "ctl-01")][..],
        &[("host", "compute-01"), ("module", "kvm_arm")],
    ] {
        assert!(matches!(
            runbook.request(given, &inventory),
            Err(RunbookError::BadValue { .. })
        ));
    }
}

fn plan_lines(runbook: &Runbook, given: &[(&str, &str)]) -> Vec<String> {
    lines(&plan(runbook, given))
}

#[test]
fn workflow_db_populate_stops_unless_the_action_list_is_empty() {
    let runbook = runbook("workflow-db-populate");
    assert!(!runbook.needs_approval());
    let plan = plan(&runbook, &[("host", "ctl-01")]);
    let list = "openstack --os-cloud kolla-admin workflow action definition list -f value -c Name";
    assert_eq!(
        lines(&plan),
        [
            format!("safe ctl-01: {list}"),
            "safe ctl-01: docker exec mistral_api mistral-db-manage --config-file \
             /etc/mistral/mistral.conf populate"
                .to_owned(),
            format!("safe ctl-01: {list}"),
        ]
    );
    let cmds = commands(&plan);
    let empty = Regex::new(cmds[0].output.as_deref().unwrap()).unwrap();
    assert!(empty.is_match(""));
    assert!(!empty.is_match("std.echo"));
    assert!(!empty.is_match("std.async_noop\nstd.echo"));
    let populated = Regex::new(cmds[2].output.as_deref().unwrap()).unwrap();
    assert!(populated.is_match("std.async_noop\nstd.echo\nstd.noop"));
    assert!(!populated.is_match(""));
    assert!(cmds.iter().all(|c| c.idempotent));

    let inventory = inventory();
    assert!(matches!(
        runbook.request(&[("host", "compute-01")], &inventory),
        Err(RunbookError::BadValue { .. })
    ));
}

#[test]
fn debug_silent_service_traces_the_pid_it_found() {
    let runbook = runbook("debug-silent-service");
    let plan = plan(
        &runbook,
        &[("host", "ctl-01"), ("process", "nova-conductor")],
    );
    assert_eq!(
        lines(&plan),
        [
            "safe ctl-01: pgrep -o -f nova-conductor",
            // {pid} is what the first step captures, filled in when the run gets there.
            "safe ctl-01: timeout 30 strace -f -tt -p {pid}",
        ]
    );
    let cmds = commands(&plan);
    let pid = Regex::new(cmds[0].output.as_deref().unwrap()).unwrap();
    assert_eq!(&pid.captures("2301").unwrap()["pid"], "2301");
    assert!(!pid.is_match(""));
    assert!(cmds[0].idempotent);
    let trace = cmds[1];
    assert_eq!(trace.exit_codes, [0, 124]);
    assert!(trace.post_output);
    // The step outlasts the longest trace.
    assert!(trace.timeout_secs > 300 && trace.timeout_secs <= 360);
    let captured = BTreeMap::from([("pid".to_owned(), "2301".to_owned())]);
    let argv: Vec<String> = trace
        .argv
        .iter()
        .map(|w| w.fill(&captured).unwrap())
        .collect();
    assert_eq!(argv, ["timeout", "30", "strace", "-f", "-tt", "-p", "2301"]);

    let longest = plan_lines(
        &runbook,
        &[
            ("host", "compute-02"),
            ("process", "mistral-server"),
            ("seconds", "300"),
        ],
    );
    assert_eq!(
        longest[1],
        "safe compute-02: timeout 300 strace -f -tt -p {pid}"
    );

    let inventory = inventory();
    for (param, value) in [
        ("seconds", "4"),
        ("seconds", "301"),
        ("process", "-f"),
        ("process", "nova.*"),
        ("process", "Nova"),
        ("host", "compute-09"),
    ] {
        let mut given = vec![("host", "compute-01"), ("process", "nova-compute")];
        given.retain(|(name, _)| *name != param);
        given.push((param, value));
        assert!(
            runbook.request(&given, &inventory).is_err(),
            "{param}:{value} was accepted"
        );
    }
}

#[test]
fn rpc_cap_restart_goes_host_by_host_hypervisors_first() {
    let runbook = runbook("compute-rpc-cap-restart");
    assert!(runbook.params.is_empty());
    assert!(!runbook.needs_approval());
    let inventory = inventory();
    let request = runbook.request(&[], &inventory).unwrap();
    assert_eq!(
        request.hosts,
        hosts(&["compute-01", "compute-02", "ctl-01"])
    );
    let plan = runbook.plan(&request, &inventory).unwrap();
    let running = |host: &str, container: &str| {
        format!(
            "wait {host}: docker ps --filter name=^{container}$ --filter status=running --quiet \
             until /^[0-9a-f]{{12}}$/"
        )
    };
    assert_eq!(
        lines(&plan),
        [
            "safe compute-01: docker restart nova_compute".to_owned(),
            running("compute-01", "nova_compute"),
            "safe compute-02: docker restart nova_compute".to_owned(),
            running("compute-02", "nova_compute"),
            "safe ctl-01: docker restart nova_conductor nova_scheduler nova_api".to_owned(),
            running("ctl-01", "nova_conductor"),
            running("ctl-01", "nova_scheduler"),
            running("ctl-01", "nova_api"),
        ]
    );
    // Each host's restart is waited for before the next host's, and every hypervisor comes
    // before any controller.
    let step_hosts: Vec<String> = plan
        .host_steps()
        .iter()
        .map(|step| match step {
            Action::Safe(HostSafe::HostCommand(c)) => c.host.to_string(),
            Action::Wait(HostWait::HostOutput(w)) => w.host.to_string(),
            other => panic!("{other:?}"),
        })
        .collect();
    let last_compute = step_hosts.iter().rposition(|h| h.starts_with("compute-"));
    let first_control = step_hosts.iter().position(|h| h == "ctl-01");
    assert!(last_compute < first_control);
    let mut seen: Vec<&str> = step_hosts.iter().map(String::as_str).collect();
    seen.dedup();
    assert_eq!(seen, ["compute-01", "compute-02", "ctl-01"]);
    assert!(commands(&plan).iter().all(|c| c.idempotent));
}
