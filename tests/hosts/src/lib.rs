//! Simulated Kolla hosts for runbook tests and the offline demo.
//!
//! In production a runbook step's argv runs as `ssh <host> <argv…>`. In tests it runs as
//! `<launcher> <host> <argv…>`, where the launcher is a local stand-in for "that host": it runs
//! fake commands that behave like the real ones on a Kolla compute or controller host, keep
//! each host's state in files, and fail the way the real ones fail when a test flips a switch.
//! Everything is bash (`set -euo pipefail`), written out by [`TestHosts::install`]; the crate
//! needs nothing but std and a Linux machine with bash and coreutils.
//!
//! # Layout of an install directory
//!
//! The crate's `scripts/` directory holds the scripts in the same layout (`bin/`, `lib/`,
//! `fakes/`, `stubs/`); each one's header says what it models.
//!
//! * `bin/testhost`: the launcher, `testhost <host> <program> [args…]` (see below).
//! * `lib/host-sim.sh`: what the launcher and the fakes share (path mapping, the log).
//! * `fakes/`: the host's fake programs; `fakes/container/`: those only found inside a
//!   container through `docker exec` (`virsh`, `mistral-db-manage`).
//! * `sys/`: links to the few harmless system programs hosts may run as they are: `timeout`,
//!   `sleep`, `grep`, `echo`, `true`, `false` (and `bash`, for the fakes' own `#!`). They see the
//!   real file system, so runbooks read host files with `cat`, not `grep <file>`.
//! * `hosts/<host>/`: the host's `/` ([`TestHosts::root`]): `etc/`, `sys/module/…`, and `.sim/`
//!   for what is not a file on a real host: `log`, `processes`, `running_vms`, `cpu_vendor`,
//!   `mistral_actions` (the workflow database), `containers/<name>/` (`id`, `image`, `state`,
//!   `started`, `programs`, `rootfs/`), `uninstalled/` and `bin/` (stubs for the switches).
//! * `journal`: every host's log in one, in the order things happened, `<host> <line>`.
//!
//! # The launcher
//!
//! `testhost <host> <program> [args…]` passes standard input through and first appends the
//! argv, joined by spaces, to the host's log. It answers as ssh and the remote shell would: an
//! unknown host exits 255 with `ssh: Could not resolve hostname <host>: Name or service not
//! known`, a program the host lacks (uninstalled, container-only, or not simulated) exits 127
//! with `bash: line 1: <program>: command not found`. Otherwise it execs the program with
//! `PATH` = the host's stubs, the fakes and `sys/` (nothing else of the machine is found by
//! name) and `HOST_ROOT` = the host's directory. Fakes that touch files map absolute paths
//! (`/etc/…`, `/sys/…`) into `HOST_ROOT`, or inside `docker exec` into the container's
//! `rootfs/` (but `/sys` and `/proc` stay the host kernel's).
//!
//! # The fakes
//!
//! Each one mimics the real program's output and exit codes for the arguments the shipped
//! runbooks use, and refuses anything else loudly: `fake <prog>: unsupported arguments: …`,
//! exit 2. The header of each script says exactly what it models:
//!
//! * `cat <path>…`, `tee [-a] <path>`: host files; `tee` copies its input like tee, and fails
//!   with `Permission denied` for `/sys` and `/proc`.
//! * `modprobe <mod>` / `modprobe -r <mod>` for `kvm`, `kvm_amd`, `kvm_intel`: loading sets
//!   `/sys/module/<mod>/parameters/nested` from `options <mod> nested=y` in
//!   `/etc/modprobe.d/*.conf` (`Y`, else `N`); unloading fails while VMs run.
//! * `docker restart|ps|exec`: the Kolla containers of [`CONTAINERS`].
//! * `pgrep [-o|-n] [-f] [-x] <pattern>` against the process table of [`PROCESSES`].
//! * `strace [-f] [-tt] -p <pid>`: an idle service's system calls on standard error until a
//!   signal ends it; meant to run under `timeout <secs>` (which then exits 124).
//! * `openstack --os-cloud <cloud> workflow action definition list -f value -c Name`: the
//!   workflow service's action names; needs `/etc/openstack/clouds.yaml` naming the cloud
//!   (Kolla's, from `kolla-ansible post-deploy`; installed with cloud `kolla-admin`).
//! * In containers: `virsh list [--name]` (nova_libvirt) lists the running VMs;
//!   `mistral-db-manage [--config-file <f>] populate` (mistral_api, mistral_engine) fills the
//!   action list.
//!
//! # Log lines
//!
//! [`TestHosts::log`] has one line per command the launcher ran (the argv joined by spaces),
//! and after it, for what the command changed, lines starting with `=> `: `=> wrote <path>`,
//! `=> loaded kvm_amd (nested=Y)`, `=> unloaded kvm_amd`, `=> restarted nova_compute`,
//! `=> populated 13 workflow actions`.

use std::fs;
use std::io;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Component, Path, PathBuf};

/// The launcher and the shared library, installed as `bin/testhost` and `lib/host-sim.sh`.
const LAUNCHER: &str = include_str!("../scripts/bin/testhost");
const LIB: &str = include_str!("../scripts/lib/host-sim.sh");

/// The host's fakes, installed under `fakes/`.
const FAKES: [(&str, &str); 7] = [
    ("cat", include_str!("../scripts/fakes/cat")),
    ("tee", include_str!("../scripts/fakes/tee")),
    ("modprobe", include_str!("../scripts/fakes/modprobe")),
    ("docker", include_str!("../scripts/fakes/docker")),
    ("pgrep", include_str!("../scripts/fakes/pgrep")),
    ("strace", include_str!("../scripts/fakes/strace")),
    ("openstack", include_str!("../scripts/fakes/openstack")),
];

/// Fakes found only inside a container, installed under `fakes/container/`.
const CONTAINER_FAKES: [(&str, &str); 2] = [
    ("virsh", include_str!("../scripts/fakes/container/virsh")),
    (
        "mistral-db-manage",
        include_str!("../scripts/fakes/container/mistral-db-manage"),
    ),
];

/// What an uninstalled program answers when another program (`timeout`) starts it.
const MISSING_STUB: &str = include_str!("../scripts/stubs/missing");
/// What a hanging program does: sleep until a signal.
const HANG_STUB: &str = include_str!("../scripts/stubs/hang");

/// System programs hosts run as they are: harmless, and needing no simulated state. `bash` is
/// here for the fakes' `#!/usr/bin/env bash` only; the launcher does not run it.
const PASSTHROUGH: [&str; 7] = ["bash", "timeout", "sleep", "grep", "echo", "true", "false"];

/// Programs every container has besides its own ones.
const CONTAINER_BASICS: &str = "cat tee grep echo true false sleep timeout";

/// The Kolla containers every host starts with, running: `(name, image, own programs)`. Tests
/// name them in `docker` commands; the runbooks restart and wait for them.
pub const CONTAINERS: [(&str, &str, &str); 7] = [
    (
        "nova_compute",
        "quay.io/openstack.kolla/nova-compute:2024.1-ubuntu-jammy",
        "",
    ),
    (
        "nova_libvirt",
        "quay.io/openstack.kolla/nova-libvirt:2024.1-ubuntu-jammy",
        "virsh",
    ),
    (
        "nova_conductor",
        "quay.io/openstack.kolla/nova-conductor:2024.1-ubuntu-jammy",
        "",
    ),
    (
        "nova_scheduler",
        "quay.io/openstack.kolla/nova-scheduler:2024.1-ubuntu-jammy",
        "",
    ),
    (
        "nova_api",
        "quay.io/openstack.kolla/nova-api:2024.1-ubuntu-jammy",
        "",
    ),
    (
        "mistral_api",
        "quay.io/openstack.kolla/mistral-api:2024.1-ubuntu-jammy",
        "mistral-db-manage",
    ),
    (
        "mistral_engine",
        "quay.io/openstack.kolla/mistral-engine:2024.1-ubuntu-jammy",
        "mistral-db-manage",
    ),
];

/// The process table every host starts with, oldest first: `(pid, name, full command line)`.
/// `pgrep` and `strace -p` see these, so tests can name the pids.
pub const PROCESSES: [(u32, &str, &str); 10] = [
    (1, "systemd", "/sbin/init"),
    (
        1187,
        "dockerd",
        "/usr/bin/dockerd -H fd:// --containerd=/run/containerd/containerd.sock",
    ),
    (2214, "libvirtd", "/usr/sbin/libvirtd --listen"),
    (
        2301,
        "nova-compute",
        "/var/lib/kolla/venv/bin/python3 /var/lib/kolla/venv/bin/nova-compute",
    ),
    (
        2388,
        "nova-conductor",
        "/var/lib/kolla/venv/bin/python3 /var/lib/kolla/venv/bin/nova-conductor",
    ),
    (
        2402,
        "nova-scheduler",
        "/var/lib/kolla/venv/bin/python3 /var/lib/kolla/venv/bin/nova-scheduler",
    ),
    (
        2417,
        "nova-api",
        "/var/lib/kolla/venv/bin/python3 /var/lib/kolla/venv/bin/nova-api",
    ),
    (
        2533,
        "mistral-server",
        "/var/lib/kolla/venv/bin/python3 /var/lib/kolla/venv/bin/mistral-server \
         --config-file /etc/mistral/mistral.conf --server api",
    ),
    (
        2540,
        "mistral-server",
        "/var/lib/kolla/venv/bin/python3 /var/lib/kolla/venv/bin/mistral-server \
         --config-file /etc/mistral/mistral.conf --server engine",
    ),
    (
        2611,
        "sshd",
        "sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups",
    ),
];

/// The cloud Kolla's `clouds.yaml` names, which the workflow runbook passes to `openstack`.
pub const CLOUD: &str = "kolla-admin";

/// Kolla's `clouds.yaml` as `kolla-ansible post-deploy` writes it (secrets made up), installed
/// on every host as `/etc/openstack/clouds.yaml`.
const CLOUDS_YAML: &str = "clouds:
  kolla-admin:
    auth:
      auth_url: http://10.0.0.10:5000
      username: admin
      password: not-a-real-password
      project_name: admin
      domain_name: Default
    region_name: RegionOne
  kolla-admin-internal:
    auth:
      auth_url: http://10.0.0.10:5000
      username: admin
      password: not-a-real-password
      project_name: admin
      domain_name: Default
    interface: internal
    region_name: RegionOne
";

/// Mistral's configuration in its containers; `mistral-db-manage` only checks that it exists.
const MISTRAL_CONF: &str = "[DEFAULT]
transport_url = rabbit://openstack:not-a-real-password@10.0.0.11:5672//

[database]
connection = mysql+pymysql://mistral:not-a-real-password@10.0.0.10:3306/mistral
";

/// A set of simulated hosts installed in a directory: the launcher to run commands on them,
/// switches that make their commands fail, and readers of their state for assertions.
#[derive(Debug, Clone)]
pub struct TestHosts {
    dir: PathBuf,
    hosts: Vec<String>,
}

impl TestHosts {
    /// Installs the launcher, the fakes and `hosts` into `dir` (best a fresh temporary
    /// directory; what is there is overwritten). Every host starts as a Kolla hypervisor and
    /// controller in one: an AMD CPU with `kvm_amd` loaded and `nested` = `N`, an empty
    /// `/etc/modprobe.d/`, no VM running, the processes of [`PROCESSES`], the containers of
    /// [`CONTAINERS`] running, Kolla's `clouds.yaml`, and an empty workflow action list.
    ///
    /// Fails on a host name that is no plain name (letters, digits, `.`, `_`, `-`), and when
    /// `bash`, `timeout` and the other programs of `sys/` are not on this machine's `PATH`.
    pub fn install(dir: &Path, hosts: &[&str]) -> io::Result<TestHosts> {
        for host in hosts {
            check_word("host", host)?;
        }
        write_script(&dir.join("bin/testhost"), LAUNCHER)?;
        write_file(&dir.join("lib/host-sim.sh"), LIB)?;
        for (name, text) in FAKES {
            write_script(&dir.join("fakes").join(name), text)?;
        }
        for (name, text) in CONTAINER_FAKES {
            write_script(&dir.join("fakes/container").join(name), text)?;
        }
        let sys = dir.join("sys");
        fs::create_dir_all(&sys)?;
        for program in PASSTHROUGH {
            let link = sys.join(program);
            if fs::symlink_metadata(&link).is_ok() {
                fs::remove_file(&link)?;
            }
            symlink(system_program(program)?, link)?;
        }
        write_file(&dir.join("journal"), "")?;
        let test_hosts = TestHosts {
            dir: dir.to_owned(),
            hosts: hosts.iter().map(|h| (*h).to_owned()).collect(),
        };
        for host in hosts {
            test_hosts.install_host(host)?;
        }
        Ok(test_hosts)
    }

    fn install_host(&self, host: &str) -> io::Result<()> {
        let root = self.root(host);
        if root.exists() {
            fs::remove_dir_all(&root)?;
        }
        fs::create_dir_all(root.join("etc/modprobe.d"))?;
        fs::create_dir_all(root.join("sys/module/kvm/parameters"))?;
        write_file(&root.join("sys/module/kvm_amd/parameters/nested"), "N\n")?;
        write_file(&root.join("etc/openstack/clouds.yaml"), CLOUDS_YAML)?;
        let state = root.join(".sim");
        fs::create_dir_all(state.join("bin"))?;
        fs::create_dir_all(state.join("uninstalled"))?;
        write_file(&state.join("log"), "")?;
        write_file(&state.join("running_vms"), "0\n")?;
        write_file(&state.join("cpu_vendor"), "amd\n")?;
        write_file(&state.join("mistral_actions"), "")?;
        let processes: String = PROCESSES
            .iter()
            .map(|(pid, name, cmdline)| format!("{pid} {name} {cmdline}\n"))
            .collect();
        write_file(&state.join("processes"), &processes)?;
        for (name, image, own) in CONTAINERS {
            let container = state.join("containers").join(name);
            write_file(
                &container.join("id"),
                &format!("{}\n", container_id(host, name)),
            )?;
            write_file(&container.join("image"), &format!("{image}\n"))?;
            write_file(&container.join("state"), "running\n")?;
            // Up since the install; `docker ps` shows how long.
            write_file(&container.join("started"), &format!("{}\n", unix_now()))?;
            write_file(
                &container.join("programs"),
                &format!("{CONTAINER_BASICS} {own}\n"),
            )?;
            fs::create_dir_all(container.join("rootfs/etc"))?;
            if name.starts_with("mistral_") {
                write_file(
                    &container.join("rootfs/etc/mistral/mistral.conf"),
                    MISTRAL_CONF,
                )?;
            }
        }
        Ok(())
    }

    /// The launcher: run `<launcher> <host> <program> [args…]` where production runs
    /// `ssh <host> <program> [args…]` (e.g. as the runbook host-access prefix).
    pub fn launcher(&self) -> PathBuf {
        self.dir.join("bin/testhost")
    }

    /// The directory standing for `host`'s `/`, to set up or inspect files the readers do not
    /// cover. The host need not exist.
    pub fn root(&self, host: &str) -> PathBuf {
        self.dir.join("hosts").join(host)
    }

    /// The directory standing for `/` inside `container` on `host` (what `docker exec` sees),
    /// e.g. to remove `/etc/mistral/mistral.conf` from `mistral_api`.
    pub fn container_root(&self, host: &str, container: &str) -> PathBuf {
        self.root(host)
            .join(".sim/containers")
            .join(container)
            .join("rootfs")
    }

    /// The hosts installed, in the order given.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// Runs `n` VMs on `host`: `modprobe -r` of its KVM module then fails with
    /// `modprobe: FATAL: Module kvm_amd is in use.` (exit 1), and `virsh list` lists them.
    pub fn set_running_vms(&self, host: &str, n: u32) -> io::Result<()> {
        write_file(&self.state(host)?.join("running_vms"), &format!("{n}\n"))
    }

    /// Removes `program` from `host`: the launcher answers like ssh for a missing remote
    /// command (`bash: line 1: <program>: command not found`, exit 127), `docker exec` like the
    /// OCI runtime (exit 126), and `timeout <secs> <program>` like coreutils (exit 127).
    pub fn uninstall(&self, host: &str, program: &str) -> io::Result<()> {
        check_word("program", program)?;
        let state = self.state(host)?;
        write_file(&state.join("uninstalled").join(program), "")?;
        write_script(&state.join("bin").join(program), MISSING_STUB)
    }

    /// Makes `program` hang on `host`: it sleeps until a signal ends it, wherever it is started
    /// (directly, under `timeout`, in a container), to test timeouts.
    pub fn hang(&self, host: &str, program: &str) -> io::Result<()> {
        check_word("program", program)?;
        write_script(&self.state(host)?.join("bin").join(program), HANG_STUB)
    }

    /// Ends every process named `name` on `host` (as in [`PROCESSES`]): `pgrep` then finds
    /// nothing (no output, exit 1) and `strace -p` of its pid answers `No such process`. Fails
    /// with `NotFound` when no such process runs, to catch a misspelt name.
    pub fn stop_process(&self, host: &str, name: &str) -> io::Result<()> {
        let path = self.state(host)?.join("processes");
        let table = fs::read_to_string(&path)?;
        let kept: String = table
            .lines()
            .filter(|line| line.split(' ').nth(1) != Some(name))
            .map(|line| format!("{line}\n"))
            .collect();
        if kept.len() == table.len() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no process named `{name}` runs on {host}"),
            ));
        }
        write_file(&path, &kept)
    }

    /// Gives `host` an `"intel"` or `"amd"` CPU: the other vendor's KVM module is unloaded and
    /// this one's is loaded with `nested` = `N`, and `modprobe` of the other one fails with
    /// `Operation not supported`. Fails with `InvalidInput` for any other vendor.
    pub fn set_cpu_vendor(&self, host: &str, vendor: &str) -> io::Result<()> {
        let (module, other) = match vendor {
            "amd" => ("kvm_amd", "kvm_intel"),
            "intel" => ("kvm_intel", "kvm_amd"),
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("CPU vendor `{vendor}`: use \"intel\" or \"amd\""),
                ));
            }
        };
        let state = self.state(host)?;
        write_file(&state.join("cpu_vendor"), &format!("{vendor}\n"))?;
        let modules = self.root(host).join("sys/module");
        let other = modules.join(other);
        if other.exists() {
            fs::remove_dir_all(other)?;
        }
        fs::create_dir_all(modules.join("kvm/parameters"))?;
        write_file(&modules.join(module).join("parameters/nested"), "N\n")
    }

    /// The text of the file at absolute `path` of `host` (`/sys/module/kvm_amd/parameters/nested`,
    /// `/etc/modprobe.d/kvm-nested.conf`), or `None` when there is none (or the path leaves the
    /// host with `..`).
    pub fn read(&self, host: &str, path: &str) -> Option<String> {
        let relative = Path::new(path.trim_start_matches('/'));
        if relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_)))
        {
            return None;
        }
        fs::read_to_string(self.root(host).join(relative)).ok()
    }

    /// What ran on `host`, in order: one line per command the launcher ran (its argv joined by
    /// spaces), each followed by `=> …` lines for what it changed. Empty for an unknown host.
    pub fn log(&self, host: &str) -> Vec<String> {
        fs::read_to_string(self.root(host).join(".sim/log"))
            .map(|text| text.lines().map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// Every host's log lines in the order they happened, as `(host, line)`: to assert the
    /// order across hosts (restarts host by host, computes before controllers).
    pub fn journal(&self) -> Vec<(String, String)> {
        fs::read_to_string(self.dir.join("journal"))
            .map(|text| {
                text.lines()
                    .filter_map(|line| line.split_once(' '))
                    .map(|(host, rest)| (host.to_owned(), rest.to_owned()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The bookkeeping directory of an installed host.
    fn state(&self, host: &str) -> io::Result<PathBuf> {
        if !self.hosts.iter().any(|h| h == host) {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "`{host}` is not one of the installed hosts {:?}",
                    self.hosts
                ),
            ));
        }
        Ok(self.root(host).join(".sim"))
    }
}

/// Host and program names become file names: plain words only.
fn check_word(what: &str, word: &str) -> io::Result<()> {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+');
    if word.is_empty() || word.starts_with(['.', '-']) || !word.chars().all(plain) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what} `{word}` is not a plain name (letters, digits, `.`, `_`, `-`)"),
        ));
    }
    Ok(())
}

fn write_file(path: &Path, text: &str) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    fs::write(path, text)
}

/// Writes an executable script (mode 0755).
fn write_script(path: &Path, text: &str) -> io::Result<()> {
    write_file(path, text)?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
}

/// Where `program` is on this machine's `PATH`.
fn system_program(program: &str) -> io::Result<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| {
            fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("the simulated hosts need `{program}`, which is not on PATH"),
            )
        })
}

/// A container id as docker shows it (64 hex digits), the same for a host and name every time.
fn container_id(host: &str, name: &str) -> String {
    (0..4u8)
        .map(|salt| {
            // FNV-1a over host, name and a salt: stable and std-only.
            let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
            for byte in host.bytes().chain([b'/']).chain(name.bytes()).chain([salt]) {
                hash ^= u64::from(byte);
                hash = hash.wrapping_mul(0x0100_0000_01b3);
            }
            format!("{hash:016x}")
        })
        .collect()
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
