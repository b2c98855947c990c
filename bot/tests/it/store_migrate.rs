//! `opsbot store migrate`, the real binary: a bot's sled store copied to PostgreSQL and back,
//! each copy verified and reading as the source does; the mistakes it refuses.

use std::path::Path;
use std::process::Output;

use opsbot_search_sim::SimConfig;
use opsbot_state::{Entry, PgConfig, Store};

use crate::support::{output, scene, spawn};

/// Runs `opsbot ARGS` to its end.
async fn opsbot(args: &[&str]) -> Output {
    output(spawn(args, "")).await
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// Everything `store` holds.
fn export(store: &Store) -> Vec<Entry> {
    store.export().collect::<Result<_, _>>().unwrap()
}

/// The config of the bot that used `sled_config`'s store, with its `[store]` moved to a fresh
/// schema of the test PostgreSQL.
fn postgres_config(sled_config: &Path, dir: &Path) -> (std::path::PathBuf, PgConfig) {
    let server = opsbot_tmp_postgres::shared().expect("the test PostgreSQL starts");
    let schema = format!("t_{}", uuid::Uuid::new_v4().simple());
    let sled_store = format!("path = \"{}\"", dir.join("store").display());
    let with_sled = std::fs::read_to_string(sled_config).unwrap();
    assert!(with_sled.contains(&sled_store), "{with_sled}");
    let url = server.url("postgres");
    let on_postgres = with_sled.replace(
        &sled_store,
        &format!("kind = \"postgres\"\nurl = \"{url}\"\nschema = \"{schema}\""),
    );
    let path = dir.join("opsbot-pg.toml");
    std::fs::write(&path, on_postgres).unwrap();
    let mut pg = PgConfig::new(url);
    pg.schema = schema;
    (path, pg)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bots_store_goes_to_postgres_and_back_verified() {
    let scene = scene(
        SimConfig {
            speed: 200.0,
            days_of_indices: 10,
            ..SimConfig::default()
        },
        "kind = \"manual\"\ncontainer = \"opensearch\"",
    )
    .await;
    let dir = scene.dir.path();
    let sled_config = scene.config.display().to_string();
    // A history made by the bot itself: a run requested at the console, left waiting for
    // an operator (unfinished, holding its cluster's lock).
    let console = output(spawn(
        &["console", "--config", &sled_config],
        "/cluster stop cluster:logs\n",
    ))
    .await;
    assert!(console.status.success(), "{}", text(&console.stderr));
    let (pg_config, pg) = postgres_config(&scene.config, dir);
    let pg_config = pg_config.display().to_string();
    let sled_path = dir.join("store").display().to_string();

    let to_pg = opsbot(&[
        "store", "migrate", "--config", &pg_config, "--from", "sled", "--path", &sled_path, "--to",
        "postgres",
    ])
    .await;
    assert!(to_pg.status.success(), "{}", text(&to_pg.stderr));
    let said = text(&to_pg.stdout);
    assert!(
        said.contains("runs: 1 (1 unfinished, holding 1 locks)"),
        "{said}"
    );
    assert!(
        said.contains("verified: every record read back equal"),
        "{said}"
    );
    assert!(said.contains("next run: r-2"), "{said}");

    let back_path = dir.join("back").display().to_string();
    let to_sled = opsbot(&[
        "store", "migrate", "--config", &pg_config, "--from", "postgres", "--to", "sled", "--path",
        &back_path,
    ])
    .await;
    assert!(to_sled.status.success(), "{}", text(&to_sled.stderr));
    assert_eq!(text(&to_sled.stdout).lines().nth(1), said.lines().nth(1));
    assert!(text(&to_sled.stdout).contains("verified: every record read back equal"));

    let source = crate::support::open_store(&dir.join("store"));
    let on_pg = Store::open_postgres(&pg).unwrap();
    let back = crate::support::open_store(&dir.join("back"));
    let expected = export(&source);
    assert!(
        expected
            .iter()
            .any(|entry| matches!(entry, Entry::Audit { .. }))
    );
    assert!(export(&on_pg) == expected, "PostgreSQL holds what sled did");
    assert!(
        export(&back) == expected,
        "the sled copy holds what the source did"
    );
    assert_eq!(on_pg.runs().unwrap(), source.runs().unwrap());
    assert_eq!(back.audit().unwrap(), source.audit().unwrap());

    // Refused: a PostgreSQL store that holds records already (untouched), a sled store in use,
    // the same backend twice, a source directory that is not there, a destination that is.
    drop((source, back));
    let again = opsbot(&[
        "store", "migrate", "--config", &pg_config, "--from", "sled", "--path", &sled_path, "--to",
        "postgres",
    ])
    .await;
    assert!(!again.status.success());
    assert!(
        text(&again.stderr).contains("is not empty"),
        "{}",
        text(&again.stderr)
    );
    assert!(
        export(&on_pg) == expected,
        "the refused destination is untouched"
    );
    // A bot holding the PostgreSQL store's lease would write on beside the copy.
    let lease = on_pg
        .acquire_lease("bot-a", std::time::Duration::from_secs(60))
        .unwrap();
    let active = opsbot(&[
        "store",
        "migrate",
        "--config",
        &pg_config,
        "--from",
        "postgres",
        "--to",
        "sled",
        "--path",
        &dir.join("while-active").display().to_string(),
    ])
    .await;
    assert!(
        text(&active.stderr).contains("a bot is active on"),
        "{}",
        text(&active.stderr)
    );
    assert!(!dir.join("while-active").exists());
    assert!(on_pg.release_lease("bot-a", lease.unwrap()).unwrap());
    let source = crate::support::open_store(&dir.join("store"));
    let in_use = opsbot(&[
        "store", "migrate", "--config", &pg_config, "--from", "sled", "--path", &sled_path, "--to",
        "postgres",
    ])
    .await;
    assert!(
        text(&in_use.stderr).contains("in use"),
        "{}",
        text(&in_use.stderr)
    );
    drop(source);
    for (args, says) in [
        (
            ["sled", "sled", &sled_path],
            "--from and --to are both sled",
        ),
        (["sled", "postgres", "/nonexistent/store"], "does not exist"),
        (["postgres", "sled", &sled_path], "already exists"),
    ] {
        let refused = opsbot(&[
            "store", "migrate", "--config", &pg_config, "--from", args[0], "--to", args[1],
            "--path", args[2],
        ])
        .await;
        assert!(!refused.status.success());
        assert!(
            text(&refused.stderr).contains(says),
            "{}",
            text(&refused.stderr)
        );
    }
    let wrong_value = opsbot(&[
        "store", "migrate", "--config", &pg_config, "--from", "mysql", "--to", "sled", "--path",
        &back_path,
    ])
    .await;
    assert!(text(&wrong_value.stderr).contains("possible values: sled, postgres"));
    let sled_configured = opsbot(&[
        "store",
        "migrate",
        "--config",
        &sled_config,
        "--from",
        "sled",
        "--to",
        "postgres",
        "--path",
        &sled_path,
    ])
    .await;
    assert!(
        text(&sled_configured.stderr).contains("is a sled store"),
        "{}",
        text(&sled_configured.stderr)
    );
}
