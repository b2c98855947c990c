//! Each fake behaves as its header says, run through the launcher as a runbook step would be,
//! and every failure switch makes it fail the way the real host would.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a failed unwrap is a failed test.

use std::io::Write;
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use opsbot_host_sim::TestHosts;
use tempfile::TempDir;

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn hosts(names: &[&str]) -> (TempDir, TestHosts) {
    let dir = tempfile::tempdir().unwrap();
    let hosts = TestHosts::install(dir.path(), names).unwrap();
    (dir, hosts)
}

fn run(hosts: &TestHosts, host: &str, argv: &[&str]) -> Out {
    run_with(hosts, host, argv, None)
}

fn run_with(hosts: &TestHosts, host: &str, argv: &[&str], stdin: Option<&str>) -> Out {
    let mut child = Command::new(hosts.launcher())
        .arg(host)
        .args(argv)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    let output = child.wait_with_output().unwrap();
    Out {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

fn unsupported(out: &Out, prog: &str) {
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr
            .starts_with(&format!("fake {prog}: unsupported arguments: ")),
        "{}",
        out.stderr
    );
}

#[test]
fn a_fresh_host_is_an_amd_hypervisor_without_nested_virtualization() {
    let (_dir, hosts) = hosts(&["compute-01", "ctl-01"]);
    assert!(hosts.launcher().ends_with("bin/testhost"));
    assert_eq!(hosts.hosts(), ["compute-01", "ctl-01"]);
    for host in ["compute-01", "ctl-01"] {
        assert_eq!(
            hosts
                .read(host, "/sys/module/kvm_amd/parameters/nested")
                .as_deref(),
            Some("N\n")
        );
        assert_eq!(
            hosts.read(host, "/sys/module/kvm_intel/parameters/nested"),
            None
        );
        assert_eq!(
            std::fs::read_dir(hosts.root(host).join("etc/modprobe.d"))
                .unwrap()
                .count(),
            0
        );
        let out = run(
            &hosts,
            host,
            &["cat", "/sys/module/kvm_amd/parameters/nested"],
        );
        assert_eq!((out.code, out.stdout.as_str()), (Some(0), "N\n"));
    }
    let out = run(&hosts, "compute-01", &["docker", "ps"]);
    assert_eq!(out.code, Some(0));
    let table: Vec<&str> = out.stdout.lines().collect();
    assert!(table[0].starts_with("CONTAINER ID"), "{}", out.stdout);
    for name in [
        "nova_compute",
        "nova_libvirt",
        "mistral_api",
        "mistral_engine",
        "nova_conductor",
        "nova_scheduler",
        "nova_api",
    ] {
        assert!(
            table
                .iter()
                .any(|row| row.ends_with(&format!(" {name}")) && row.contains(" Up ")),
            "{name} in {}",
            out.stdout
        );
    }
}

#[test]
fn the_launcher_answers_like_ssh_for_unknown_hosts_and_missing_programs() {
    let (_dir, hosts) = hosts(&["compute-01"]);
    let out = run(&hosts, "compute-09", &["true"]);
    assert_eq!(out.code, Some(255));
    assert_eq!(
        out.stderr,
        "ssh: Could not resolve hostname compute-09: Name or service not known\n"
    );
    assert!(hosts.log("compute-09").is_empty());

    for missing in [
        "rm",
        "bash",
        "virsh",
        "mistral-db-manage",
        "/bin/rm",
        "../bin/testhost",
    ] {
        let out = run(&hosts, "compute-01", &[missing, "x"]);
        assert_eq!(out.code, Some(127), "{missing}");
        let program = missing.trim_start_matches("/bin/");
        assert_eq!(
            out.stderr,
            format!("bash: line 1: {program}: command not found\n")
        );
    }
    // Through `timeout`, a program the host lacks is what coreutils reports.
    let out = run(&hosts, "compute-01", &["timeout", "5", "virsh", "list"]);
    assert_eq!(out.code, Some(127));
    assert!(
        out.stderr.contains("timeout: failed to run command"),
        "{}",
        out.stderr
    );

    // Passed-through programs run as they are, standard input included.
    let out = run_with(
        &hosts,
        "compute-01",
        &["grep", "-c", "b"],
        Some("a\nb\nbb\n"),
    );
    assert_eq!((out.code, out.stdout.as_str()), (Some(0), "2\n"));
    let out = run(&hosts, "compute-01", &["/usr/bin/echo", "hello"]);
    assert_eq!((out.code, out.stdout.as_str()), (Some(0), "hello\n"));
}

#[test]
fn the_log_has_every_command_in_order_and_what_it_changed() {
    let (_dir, hosts) = hosts(&["compute-01", "compute-02"]);
    run(&hosts, "compute-01", &["docker", "restart", "nova_compute"]);
    run(&hosts, "compute-02", &["echo", "a b"]);
    run(&hosts, "compute-01", &["nonesuch", "--flag"]);
    assert_eq!(
        hosts.log("compute-01"),
        [
            "docker restart nova_compute",
            "=> restarted nova_compute",
            "nonesuch --flag"
        ]
    );
    assert_eq!(hosts.log("compute-02"), ["echo a b"]);
    let journal = hosts.journal();
    let journal: Vec<(&str, &str)> = journal
        .iter()
        .map(|(h, l)| (h.as_str(), l.as_str()))
        .collect();
    assert_eq!(
        journal,
        [
            ("compute-01", "docker restart nova_compute"),
            ("compute-01", "=> restarted nova_compute"),
            ("compute-02", "echo a b"),
            ("compute-01", "nonesuch --flag"),
        ]
    );
}

#[test]
fn cat_reads_host_files_and_fails_like_cat() {
    let (_dir, hosts) = hosts(&["compute-01"]);
    let out = run(
        &hosts,
        "compute-01",
        &[
            "cat",
            "/etc/nothing",
            "/sys/module/kvm_amd/parameters/nested",
        ],
    );
    assert_eq!(out.code, Some(1));
    assert_eq!(out.stdout, "N\n");
    assert_eq!(out.stderr, "cat: /etc/nothing: No such file or directory\n");
    let out = run(&hosts, "compute-01", &["cat", "/etc"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (Some(1), "cat: /etc: Is a directory\n")
    );
    unsupported(&run(&hosts, "compute-01", &["cat", "-n", "/etc/x"]), "cat");
    unsupported(&run(&hosts, "compute-01", &["cat", "etc/x"]), "cat");
    unsupported(&run(&hosts, "compute-01", &["cat", "/etc/../../x"]), "cat");
    unsupported(&run(&hosts, "compute-01", &["cat", "/.sim/log"]), "cat");
    assert_eq!(hosts.read("compute-01", "/../compute-01/etc/x"), None);
}

#[test]
fn tee_writes_its_input_to_the_host_file_and_echoes_it() {
    let (_dir, hosts) = hosts(&["compute-01"]);
    let conf = "options kvm_amd nested=y\n";
    let argv = ["tee", "/etc/modprobe.d/kvm-nested.conf"];
    for _ in 0..2 {
        let out = run_with(&hosts, "compute-01", &argv, Some(conf));
        assert_eq!((out.code, out.stdout.as_str()), (Some(0), conf));
    }
    assert_eq!(
        hosts
            .read("compute-01", "/etc/modprobe.d/kvm-nested.conf")
            .as_deref(),
        Some(conf)
    );
    let out = run_with(
        &hosts,
        "compute-01",
        &["tee", "-a", "/etc/modprobe.d/kvm-nested.conf"],
        Some("# more\n"),
    );
    assert_eq!(out.code, Some(0));
    assert_eq!(
        hosts
            .read("compute-01", "/etc/modprobe.d/kvm-nested.conf")
            .unwrap(),
        format!("{conf}# more\n")
    );
    let log = hosts.log("compute-01");
    assert_eq!(log[0], "tee /etc/modprobe.d/kvm-nested.conf");
    assert_eq!(log[1], "=> wrote /etc/modprobe.d/kvm-nested.conf");
    assert_eq!(log[5], "=> appended to /etc/modprobe.d/kvm-nested.conf");

    // Like tee, the input is still copied when the file cannot be written.
    let out = run_with(
        &hosts,
        "compute-01",
        &["tee", "/sys/module/kvm_amd/parameters/nested"],
        Some("Y\n"),
    );
    assert_eq!(out.code, Some(1));
    assert_eq!(out.stdout, "Y\n");
    assert_eq!(
        out.stderr,
        "tee: /sys/module/kvm_amd/parameters/nested: Permission denied\n"
    );
    assert_eq!(
        hosts
            .read("compute-01", "/sys/module/kvm_amd/parameters/nested")
            .as_deref(),
        Some("N\n")
    );
    let out = run_with(
        &hosts,
        "compute-01",
        &["tee", "/etc/nowhere/x.conf"],
        Some("x"),
    );
    assert_eq!(out.code, Some(1));
    assert_eq!(
        out.stderr,
        "tee: /etc/nowhere/x.conf: No such file or directory\n"
    );
    unsupported(
        &run(&hosts, "compute-01", &["tee", "/etc/a", "/etc/b"]),
        "tee",
    );
}

#[test]
fn modprobe_reloads_the_module_with_the_nested_option() {
    let (_dir, hosts) = hosts(&["compute-01"]);
    let nested = |h: &TestHosts| h.read("compute-01", "/sys/module/kvm_amd/parameters/nested");

    // Loading a loaded module changes nothing, as with modprobe: options apply at load time.
    run_with(
        &hosts,
        "compute-01",
        &["tee", "/etc/modprobe.d/kvm-nested.conf"],
        Some("options kvm_amd nested=y\n"),
    );
    let out = run(&hosts, "compute-01", &["modprobe", "kvm_amd"]);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (Some(0), "", "")
    );
    assert_eq!(nested(&hosts).as_deref(), Some("N\n"));

    let out = run(&hosts, "compute-01", &["modprobe", "-r", "kvm_amd"]);
    assert_eq!((out.code, out.stderr.as_str()), (Some(0), ""));
    assert_eq!(nested(&hosts), None);
    let out = run(&hosts, "compute-01", &["modprobe", "-r", "kvm_amd"]);
    assert_eq!(out.code, Some(1));
    assert_eq!(
        out.stderr,
        "modprobe: FATAL: Module kvm_amd is not in kernel.\n"
    );

    let out = run(&hosts, "compute-01", &["modprobe", "kvm_amd"]);
    assert_eq!(out.code, Some(0));
    assert_eq!(nested(&hosts).as_deref(), Some("Y\n"));
    let out = run(
        &hosts,
        "compute-01",
        &["cat", "/sys/module/kvm_amd/parameters/nested"],
    );
    assert_eq!(out.stdout, "Y\n");

    // Without the option (or with nested=0) the module loads with nested off.
    std::fs::write(
        hosts
            .root("compute-01")
            .join("etc/modprobe.d/kvm-nested.conf"),
        "options kvm_amd nested=y\noptions kvm_amd nested=0\n",
    )
    .unwrap();
    run(&hosts, "compute-01", &["modprobe", "-r", "kvm-amd"]);
    run(&hosts, "compute-01", &["modprobe", "kvm-amd"]);
    assert_eq!(nested(&hosts).as_deref(), Some("N\n"));

    let log = hosts.log("compute-01");
    assert!(log.contains(&"=> unloaded kvm_amd".to_owned()), "{log:?}");
    assert!(
        log.contains(&"=> loaded kvm_amd (nested=Y)".to_owned()),
        "{log:?}"
    );

    let out = run(&hosts, "compute-01", &["modprobe", "kvm_intel"]);
    assert_eq!(out.code, Some(1));
    assert_eq!(
        out.stderr,
        "modprobe: ERROR: could not insert 'kvm_intel': Operation not supported\n"
    );
    let out = run(&hosts, "compute-01", &["modprobe", "vfio_x"]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr
            .starts_with("modprobe: FATAL: Module vfio_x not found in directory /lib/modules/"),
        "{}",
        out.stderr
    );
    let out = run(&hosts, "compute-01", &["modprobe", "-r", "kvm"]);
    assert_eq!(out.stderr, "modprobe: FATAL: Module kvm is in use.\n");
    unsupported(
        &run(&hosts, "compute-01", &["modprobe", "-a", "kvm_amd"]),
        "modprobe",
    );
    unsupported(&run(&hosts, "compute-01", &["modprobe"]), "modprobe");
}

#[test]
fn running_vms_keep_the_module_in_use_and_virsh_lists_them() {
    let (_dir, hosts) = hosts(&["compute-01"]);
    let virsh = ["docker", "exec", "nova_libvirt", "virsh", "list", "--name"];
    let out = run(&hosts, "compute-01", &virsh);
    assert_eq!((out.code, out.stdout.as_str()), (Some(0), "\n"));

    hosts.set_running_vms("compute-01", 2).unwrap();
    let out = run(&hosts, "compute-01", &virsh);
    assert_eq!(out.stdout, "instance-00000001\ninstance-00000002\n\n");
    let out = run(
        &hosts,
        "compute-01",
        &["docker", "exec", "nova_libvirt", "virsh", "list"],
    );
    assert!(
        out.stdout.contains(" 2    instance-00000002   running"),
        "{}",
        out.stdout
    );
    let out = run(&hosts, "compute-01", &["modprobe", "-r", "kvm_amd"]);
    assert_eq!(out.code, Some(1));
    assert_eq!(out.stderr, "modprobe: FATAL: Module kvm_amd is in use.\n");
    assert!(
        hosts
            .read("compute-01", "/sys/module/kvm_amd/parameters/nested")
            .is_some()
    );

    hosts.set_running_vms("compute-01", 0).unwrap();
    let out = run(&hosts, "compute-01", &["modprobe", "-r", "kvm_amd"]);
    assert_eq!(out.code, Some(0));
    unsupported(
        &run(
            &hosts,
            "compute-01",
            &["docker", "exec", "nova_libvirt", "virsh", "destroy", "x"],
        ),
        "virsh",
    );
    assert!(hosts.set_running_vms("compute-09", 1).is_err());
}

#[test]
fn docker_restarts_lists_and_execs_in_containers() {
    let (_dir, hosts) = hosts(&["compute-01"]);
    let out = run(
        &hosts,
        "compute-01",
        &["docker", "restart", "nova_compute", "nova_libvirt"],
    );
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (Some(0), "nova_compute\nnova_libvirt\n")
    );
    let out = run(
        &hosts,
        "compute-01",
        &["docker", "restart", "nova_nothing", "nova_api"],
    );
    assert_eq!(out.code, Some(1));
    assert_eq!(out.stdout, "nova_api\n");
    assert_eq!(
        out.stderr,
        "Error response from daemon: No such container: nova_nothing\n"
    );

    let wait = [
        "docker",
        "ps",
        "--filter",
        "name=^nova_compute$",
        "--filter",
        "status=running",
        "--quiet",
    ];
    let out = run(&hosts, "compute-01", &wait);
    assert_eq!(out.code, Some(0));
    let id = out.stdout.trim_end();
    assert!(
        id.len() == 12 && id.chars().all(|c| c.is_ascii_hexdigit()),
        "{}",
        out.stdout
    );
    // Another host's container has another id; a name filter is a regular expression.
    let out = run(
        &hosts,
        "compute-01",
        &["docker", "ps", "-q", "--filter", "name=^nova_"],
    );
    assert_eq!(out.stdout.lines().count(), 5, "{}", out.stdout);
    let out = run(
        &hosts,
        "compute-01",
        &["docker", "ps", "-q", "--filter", "name=^nova$"],
    );
    assert_eq!((out.code, out.stdout.as_str()), (Some(0), ""));
    let out = run(
        &hosts,
        "compute-01",
        &["docker", "ps", "-q", "-f", "status=exited"],
    );
    assert_eq!((out.code, out.stdout.as_str()), (Some(0), ""));

    let out = run(
        &hosts,
        "compute-01",
        &["docker", "exec", "nova_compute", "virsh", "list"],
    );
    assert_eq!(out.code, Some(126));
    assert!(
        out.stderr
            .contains("exec: \"virsh\": executable file not found in $PATH"),
        "{}",
        out.stderr
    );
    let out = run(
        &hosts,
        "compute-01",
        &["docker", "exec", "nova_nothing", "true"],
    );
    assert_eq!(out.code, Some(1));
    assert_eq!(
        out.stderr,
        "Error response from daemon: No such container: nova_nothing\n"
    );
    // Paths inside a container are the container's, /sys is the host kernel's.
    let out = run(
        &hosts,
        "compute-01",
        &[
            "docker",
            "exec",
            "mistral_api",
            "cat",
            "/etc/mistral/mistral.conf",
        ],
    );
    assert!(out.stdout.starts_with("[DEFAULT]"), "{}", out.stderr);
    let out = run(&hosts, "compute-01", &["cat", "/etc/mistral/mistral.conf"]);
    assert_eq!(out.code, Some(1));
    let out = run(
        &hosts,
        "compute-01",
        &[
            "docker",
            "exec",
            "-i",
            "mistral_api",
            "cat",
            "/sys/module/kvm_amd/parameters/nested",
        ],
    );
    assert_eq!(out.stdout, "N\n");

    unsupported(
        &run(&hosts, "compute-01", &["docker", "inspect", "nova_compute"]),
        "docker",
    );
    unsupported(
        &run(
            &hosts,
            "compute-01",
            &["docker", "ps", "--format", "{{.Names}}"],
        ),
        "docker",
    );
    unsupported(
        &run(
            &hosts,
            "compute-01",
            &["docker", "ps", "--filter", "health=healthy"],
        ),
        "docker",
    );
}

#[test]
fn pgrep_searches_the_process_table_and_stopped_processes_are_gone() {
    let (_dir, hosts) = hosts(&["compute-01"]);
    let out = run(&hosts, "compute-01", &["pgrep", "-o", "-f", "nova-compute"]);
    assert_eq!((out.code, out.stdout.as_str()), (Some(0), "2301\n"));
    let out = run(&hosts, "compute-01", &["pgrep", "-x", "mistral-server"]);
    assert_eq!(out.stdout, "2533\n2540\n");
    let out = run(&hosts, "compute-01", &["pgrep", "-nf", "mistral-server"]);
    assert_eq!(out.stdout, "2540\n");
    let out = run(&hosts, "compute-01", &["pgrep", "-f", "--server engine"]);
    unsupported(&out, "pgrep");
    let out = run(&hosts, "compute-01", &["pgrep", "-f", "server engine$"]);
    assert_eq!(out.stdout, "2540\n");
    // -x matches the whole name, without -f only the name.
    let out = run(&hosts, "compute-01", &["pgrep", "-x", "nova"]);
    assert_eq!((out.code, out.stdout.as_str()), (Some(1), ""));
    let out = run(&hosts, "compute-01", &["pgrep", "kolla"]);
    assert_eq!((out.code, out.stdout.as_str()), (Some(1), ""));
    let out = run(&hosts, "compute-01", &["pgrep", "-f", "("]);
    assert_eq!(out.code, Some(2));

    hosts.stop_process("compute-01", "nova-compute").unwrap();
    let out = run(&hosts, "compute-01", &["pgrep", "-o", "-f", "nova-compute"]);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (Some(1), "", "")
    );
    assert!(hosts.stop_process("compute-01", "nova-compute").is_err());
    unsupported(
        &run(&hosts, "compute-01", &["pgrep", "-l", "nova"]),
        "pgrep",
    );
}

#[test]
fn strace_traces_until_timeout_ends_it() {
    let (_dir, hosts) = hosts(&["compute-01"]);
    let started = Instant::now();
    let out = run(
        &hosts,
        "compute-01",
        &["timeout", "1", "strace", "-f", "-tt", "-p", "2301"],
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(out.code, Some(124), "{}", out.stderr);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines[0], "strace: Process 2301 attached with 4 threads");
    assert_eq!(*lines.last().unwrap(), "strace: Process 2301 detached");
    let calls = &lines[1..lines.len() - 1];
    assert!(calls.len() >= 2, "{}", out.stderr);
    for call in calls {
        // `[pid  2301] 03:12:44.123456 epoll_wait(7, [], 1023, 1000) = 0`
        let (pid, rest) = call.split_once("] ").unwrap();
        assert!(pid.starts_with("[pid 230"), "{call}");
        let (time, syscall) = rest.split_once(' ').unwrap();
        assert_eq!(time.len(), "03:12:44.123456".len(), "{call}");
        assert!(syscall.contains('(') && syscall.contains(") = "), "{call}");
    }

    let out = run(
        &hosts,
        "compute-01",
        &["timeout", "5", "strace", "-f", "-tt", "-p", "4242"],
    );
    assert_eq!(out.code, Some(1));
    assert_eq!(
        out.stderr,
        "strace: attach: ptrace(PTRACE_SEIZE, 4242): No such process\n"
    );
    hosts.stop_process("compute-01", "nova-compute").unwrap();
    let out = run(&hosts, "compute-01", &["strace", "-p", "2301"]);
    assert_eq!(out.code, Some(1));
    unsupported(
        &run(
            &hosts,
            "compute-01",
            &["strace", "-p", "2301", "-e", "trace=read"],
        ),
        "strace",
    );
}

#[test]
fn an_uninstalled_program_is_not_found_wherever_it_is_started() {
    let (_dir, hosts) = hosts(&["compute-01"]);
    hosts.uninstall("compute-01", "strace").unwrap();
    let out = run(&hosts, "compute-01", &["strace", "-p", "2301"]);
    assert_eq!(out.code, Some(127));
    assert_eq!(out.stderr, "bash: line 1: strace: command not found\n");
    let out = run(
        &hosts,
        "compute-01",
        &["timeout", "30", "strace", "-f", "-tt", "-p", "2301"],
    );
    assert_eq!(out.code, Some(127));
    assert_eq!(
        out.stderr,
        "timeout: failed to run command 'strace': No such file or directory\n"
    );
    hosts.uninstall("compute-01", "mistral-db-manage").unwrap();
    let out = run(
        &hosts,
        "compute-01",
        &[
            "docker",
            "exec",
            "mistral_api",
            "mistral-db-manage",
            "populate",
        ],
    );
    assert_eq!(out.code, Some(126));
    // Other hosts keep it.
    assert!(hosts.uninstall("compute-09", "strace").is_err());
    assert!(hosts.uninstall("compute-01", "../bin/x").is_err());
}

#[test]
fn a_hanging_program_answers_nothing_until_it_is_killed() {
    let (_dir, hosts) = hosts(&["compute-01"]);
    hosts.hang("compute-01", "modprobe").unwrap();
    let mut child = Command::new(hosts.launcher())
        .args(["compute-01", "modprobe", "-r", "kvm_amd"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    sleep(Duration::from_millis(800));
    assert!(child.try_wait().unwrap().is_none(), "modprobe ended");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        hosts
            .read("compute-01", "/sys/module/kvm_amd/parameters/nested")
            .is_some()
    );

    // Under timeout, a hanging strace is ended like a working one.
    hosts.hang("compute-01", "strace").unwrap();
    let out = run(
        &hosts,
        "compute-01",
        &["timeout", "1", "strace", "-p", "2301"],
    );
    assert_eq!((out.code, out.stderr.as_str()), (Some(124), ""));
}

#[test]
fn the_cpu_vendor_decides_which_kvm_module_is_loaded() {
    let (_dir, hosts) = hosts(&["compute-01"]);
    hosts.set_cpu_vendor("compute-01", "intel").unwrap();
    assert_eq!(
        hosts.read("compute-01", "/sys/module/kvm_amd/parameters/nested"),
        None
    );
    assert_eq!(
        hosts
            .read("compute-01", "/sys/module/kvm_intel/parameters/nested")
            .as_deref(),
        Some("N\n")
    );
    let out = run(&hosts, "compute-01", &["modprobe", "kvm_amd"]);
    assert_eq!(out.code, Some(1));
    assert_eq!(
        out.stderr,
        "modprobe: ERROR: could not insert 'kvm_amd': Operation not supported\n"
    );
    run_with(
        &hosts,
        "compute-01",
        &["tee", "/etc/modprobe.d/kvm-nested.conf"],
        Some("options kvm_intel nested=y\n"),
    );
    assert_eq!(
        run(&hosts, "compute-01", &["modprobe", "-r", "kvm_intel"]).code,
        Some(0)
    );
    assert_eq!(
        run(&hosts, "compute-01", &["modprobe", "kvm_intel"]).code,
        Some(0)
    );
    assert_eq!(
        hosts
            .read("compute-01", "/sys/module/kvm_intel/parameters/nested")
            .as_deref(),
        Some("Y\n")
    );
    let err = hosts.set_cpu_vendor("compute-01", "arm").unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
}

#[test]
fn mistral_db_manage_populates_the_empty_action_list() {
    let (_dir, hosts) = hosts(&["ctl-01"]);
    let list = [
        "openstack",
        "--os-cloud",
        "kolla-admin",
        "workflow",
        "action",
        "definition",
        "list",
        "-f",
        "value",
        "-c",
        "Name",
    ];
    let out = run(&hosts, "ctl-01", &list);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (Some(0), "", "")
    );

    let populate = [
        "docker",
        "exec",
        "mistral_api",
        "mistral-db-manage",
        "--config-file",
        "/etc/mistral/mistral.conf",
        "populate",
    ];
    let out = run(&hosts, "ctl-01", &populate);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let out = run(&hosts, "ctl-01", &list);
    assert_eq!(out.code, Some(0));
    let names: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(names.len(), 13, "{}", out.stdout);
    assert!(names.contains(&"std.noop") && names.contains(&"std.echo"));
    assert!(
        hosts
            .log("ctl-01")
            .contains(&"=> populated 13 workflow actions".to_owned())
    );
    // Again: the same actions.
    assert_eq!(run(&hosts, "ctl-01", &populate).code, Some(0));
    assert_eq!(run(&hosts, "ctl-01", &list).stdout.lines().count(), 13);

    // Not on the host itself, and not without its configuration file.
    let out = run(&hosts, "ctl-01", &populate[3..]);
    assert_eq!(out.code, Some(127));
    std::fs::remove_file(
        hosts
            .container_root("ctl-01", "mistral_engine")
            .join("etc/mistral/mistral.conf"),
    )
    .unwrap();
    let mut engine = populate;
    engine[2] = "mistral_engine";
    let out = run(&hosts, "ctl-01", &engine);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr.ends_with(
            "oslo_config.cfg.ConfigFilesNotFoundError: Failed to find some config files: \
             /etc/mistral/mistral.conf\n"
        ),
        "{}",
        out.stderr
    );
    unsupported(
        &run(
            &hosts,
            "ctl-01",
            &[
                "docker",
                "exec",
                "mistral_api",
                "mistral-db-manage",
                "upgrade",
                "head",
            ],
        ),
        "mistral-db-manage",
    );

    // The client needs a cloud that clouds.yaml names.
    let no_cloud: Vec<&str> = [list[0]]
        .into_iter()
        .chain(list[3..].iter().copied())
        .collect();
    let out = run(&hosts, "ctl-01", &no_cloud);
    assert_eq!(out.code, Some(1));
    assert_eq!(
        out.stderr,
        "Missing value auth-url required for auth plugin password\n"
    );
    let mut other = list;
    other[2] = "prod";
    let out = run(&hosts, "ctl-01", &other);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (Some(1), "Cloud prod was not found.\n")
    );
    std::fs::remove_file(hosts.root("ctl-01").join("etc/openstack/clouds.yaml")).unwrap();
    let out = run(&hosts, "ctl-01", &list);
    assert_eq!(out.code, Some(1));
    unsupported(
        &run(&hosts, "ctl-01", &["openstack", "server", "list"]),
        "openstack",
    );
}

/// The commands of the shipped runbooks (`deploy/runbooks/*.toml`, copied here by hand: this
/// crate reads no TOML), in their order, give the outputs the runbooks check for.
#[test]
fn the_shipped_runbooks_commands_work_on_the_fakes() {
    let (_dir, hosts) = hosts(&["compute-01", "ctl-01"]);
    let is_id = |out: &Out| {
        let id = out.stdout.trim_end();
        id.len() == 12 && id.chars().all(|c| c.is_ascii_hexdigit())
    };

    // nested-virt
    let virsh = ["docker", "exec", "nova_libvirt", "virsh", "list", "--name"];
    let out = run_with(
        &hosts,
        "compute-01",
        &["tee", "/etc/modprobe.d/kvm-nested.conf"],
        Some("options kvm_amd nested=y\n"),
    );
    assert_eq!(out.code, Some(0));
    let out = run(&hosts, "compute-01", &virsh);
    assert!(out.code == Some(0) && out.stdout.trim().is_empty());
    for argv in [&["modprobe", "-r", "kvm_amd"][..], &["modprobe", "kvm_amd"]] {
        assert_eq!(run(&hosts, "compute-01", argv).code, Some(0));
    }
    let nested = ["cat", "/sys/module/kvm_amd/parameters/nested"];
    assert_eq!(run(&hosts, "compute-01", &nested).stdout, "Y\n");
    let restart = ["docker", "restart", "nova_compute"];
    assert_eq!(run(&hosts, "compute-01", &restart).code, Some(0));
    let running = [
        "docker",
        "ps",
        "--filter",
        "name=^nova_compute$",
        "--filter",
        "status=running",
        "--quiet",
    ];
    assert!(is_id(&run(&hosts, "compute-01", &running)));
    assert_eq!(
        hosts.log("compute-01"),
        [
            "tee /etc/modprobe.d/kvm-nested.conf",
            "=> wrote /etc/modprobe.d/kvm-nested.conf",
            "docker exec nova_libvirt virsh list --name",
            "modprobe -r kvm_amd",
            "=> unloaded kvm_amd",
            "modprobe kvm_amd",
            "=> loaded kvm_amd (nested=Y)",
            "cat /sys/module/kvm_amd/parameters/nested",
            "docker restart nova_compute",
            "=> restarted nova_compute",
            "docker ps --filter name=^nova_compute$ --filter status=running --quiet",
        ]
    );
    // With a VM running, the check before the approval is what stops the run.
    hosts.set_running_vms("compute-01", 1).unwrap();
    assert_eq!(
        run(&hosts, "compute-01", &virsh).stdout,
        "instance-00000001\n\n"
    );

    // workflow-db-populate
    let list = [
        "openstack",
        "--os-cloud",
        "kolla-admin",
        "workflow",
        "action",
        "definition",
        "list",
        "-f",
        "value",
        "-c",
        "Name",
    ];
    let out = run(&hosts, "ctl-01", &list);
    assert!(out.code == Some(0) && out.stdout.trim().is_empty());
    let populate = [
        "docker",
        "exec",
        "mistral_api",
        "mistral-db-manage",
        "--config-file",
        "/etc/mistral/mistral.conf",
        "populate",
    ];
    assert_eq!(run(&hosts, "ctl-01", &populate).code, Some(0));
    let out = run(&hosts, "ctl-01", &list);
    assert!(out.stdout.lines().any(|l| l.starts_with("std.")));

    // debug-silent-service
    let out = run(&hosts, "ctl-01", &["pgrep", "-o", "-f", "nova-conductor"]);
    assert_eq!(out.stdout, "2388\n");
    let out = run(
        &hosts,
        "ctl-01",
        &["timeout", "1", "strace", "-f", "-tt", "-p", "2388"],
    );
    assert_eq!(out.code, Some(124));

    // compute-rpc-cap-restart, on the controller
    let out = run(
        &hosts,
        "ctl-01",
        &[
            "docker",
            "restart",
            "nova_conductor",
            "nova_scheduler",
            "nova_api",
        ],
    );
    assert_eq!(out.stdout, "nova_conductor\nnova_scheduler\nnova_api\n");
    for container in ["nova_conductor", "nova_scheduler", "nova_api"] {
        let name = format!("name=^{container}$");
        let out = run(
            &hosts,
            "ctl-01",
            &[
                "docker",
                "ps",
                "--filter",
                &name,
                "--filter",
                "status=running",
                "--quiet",
            ],
        );
        assert!(is_id(&out), "{container}: {}", out.stdout);
    }
}
