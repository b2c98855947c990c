//! `opsbot check` as an operator runs it: one line per target, and the exit code says whether
//! everything can be used.

use crate::support::{config_file, output, spawn};
use opsbot_search_sim::SimConfig;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_prints_a_line_per_target_and_fails_when_one_fails() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let sim = opsbot_search_sim::spawn(
        SimConfig {
            days_of_indices: 2,
            ..SimConfig::default()
        },
        listener,
    )
    .await
    .unwrap();
    let (_held, closed) = crate::support::refusing_address();
    let cluster = |name: &str, url: &str| {
        format!(
            "[[clusters]]\nname = \"{name}\"\nurl = \"{url}\"\nnodes = [\"10.0.0.11\"]\n\
             [clusters.node_control]\nkind = \"manual\"\ncontainer = \"opensearch\"\n"
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let down = format!("http://{closed}");
    let body = format!(
        "{}{}",
        cluster("logs", &sim.base_url()),
        cluster("old", &down)
    );
    let config = config_file(dir.path(), &body).display().to_string();

    let out = output(spawn(&["check", "--config", &config], "")).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            format!(
                "ok    cluster `logs` at {}: Elasticsearch 7.10.2, health green",
                sim.base_url()
            ),
            format!(
                "FAIL  cluster `old` at {down}: GET / could not be reached at {down}: connection \
                 refused"
            ),
        ]
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("some targets cannot be used; see the FAIL lines above"),
        "{stderr}"
    );

    let healthy = config_file(dir.path(), &cluster("logs", &sim.base_url()));
    let out = output(spawn(
        &["check", "--config", &healthy.display().to_string()],
        "",
    ))
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `opsbot sim` as a secured Elasticsearch 8 to try `check` against: HTTPS with the given
/// certificate, basic auth with the password from the environment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulator_serves_https_and_requires_basic_auth_from_the_command_line() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (cert_file, key_file) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_file, cert.pem()).unwrap();
    std::fs::write(&key_file, key.serialize_pem()).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut sim = Command::new(env!("CARGO_BIN_EXE_opsbot"))
        .args(["sim", "--flavor", "es8", "--days", "2", "--user", "elastic"])
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .arg("--tls-cert")
        .arg(&cert_file)
        .arg("--tls-key")
        .arg(&key_file)
        .env("OPSBOT_SIM_PASSWORD", "changeme")
        .env("RUST_LOG", "info")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Serving once it says so.
    let stderr = sim.stderr.take().unwrap();
    let said = tokio::task::spawn_blocking(move || {
        BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
            .find(|line| line.contains("simulated cluster serving"))
    })
    .await
    .unwrap();
    assert!(said.unwrap().contains(&format!("https://127.0.0.1:{port}")));

    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(cert.pem().as_bytes()).unwrap())
        .build()
        .unwrap();
    let url = format!("https://127.0.0.1:{port}/");
    assert_eq!(client.get(&url).send().await.unwrap().status(), 401);
    let answered = client
        .get(&url)
        .basic_auth("elastic", Some("changeme"))
        .send()
        .await
        .unwrap();
    assert_eq!(answered.status(), 200);
    sim.kill().unwrap();
    sim.wait().unwrap();
}

/// `check` reads the runbooks as `opsbot run` does at its start: one it would refuse fails the
/// check, naming the file and the line, and the good ones are listed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_fails_on_a_runbook_that_run_would_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let books = dir.path().join("runbooks");
    std::fs::create_dir(&books).unwrap();
    let good = "name = \"hello\"\ndescription = \"Says hello\"\n\
                [[steps]]\nkind = \"confirm\"\nprompt = \"say hello\"\n";
    std::fs::write(books.join("hello.toml"), good).unwrap();
    let body = format!(
        "[runbooks]\ndir = \"{}\"\n[runbooks.inventory]\ncompute = [\"h\"]\n",
        books.display()
    );
    let config = config_file(dir.path(), &body).display().to_string();
    let out = output(spawn(&["check", "--config", &config], "")).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.trim_end(),
        format!("ok    runbooks {}: 1 loaded: hello", books.display())
    );
    assert!(out.status.success());

    let shell = "name = \"bad\"\ndescription = \"Runs a shell\"\n\
                 [[steps]]\nkind = \"run\"\ntitle = \"t\"\non = \"h\"\nargv = [\"sh\", \"-c\", \"true\"]\n";
    std::fs::write(books.join("bad.toml"), shell).unwrap();
    let out = output(spawn(&["check", "--config", &config], "")).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with(&format!(
            "FAIL  runbooks {}: {}",
            books.display(),
            books.join("bad.toml").display()
        )) && stdout.contains("opsbot never runs commands through a shell")
            && stdout.contains("opsbot run refuses to start with it"),
        "{stdout}"
    );
    assert!(!out.status.success());
}
