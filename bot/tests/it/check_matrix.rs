//! `opsbot check` on Matrix, against the real Synapse: one `matrix` line that says what works
//! and, when something does not, exactly what to fix; it joins nothing and posts nothing.

use opsbot_tests::matrix::scene::MatrixWorld;

use crate::support::{output, spawn};

/// `opsbot check` with `[matrix]` as the world's bot serving `rooms` (its password replaced by
/// `password` when given): its `matrix` line, and whether the check passed.
async fn check(world: &MatrixWorld, rooms: &[&str], password: Option<&str>) -> (String, bool) {
    let dir = tempfile::tempdir().unwrap();
    let matrix = world.config(dir.path());
    let password_file = matrix.password_file.unwrap();
    if let Some(password) = password {
        std::fs::write(&password_file, password).unwrap();
    }
    let books = dir.path().join("runbooks");
    std::fs::create_dir_all(&books).unwrap();
    let config = dir.path().join("opsbot.toml");
    let text = format!(
        r#"[store]
path = "{store}"

[matrix]
homeserver = "{homeserver}"
user = "{user}"
password_file = "{password}"
rooms = {rooms:?}
announce_room = "{announce}"

[[people]]
name = "alice"
roles = ["operator"]
matrix_user = "{alice}"

# Something to act on, which the config requires, with no line of its own to fail.
[runbooks]
dir = "{books}"
[runbooks.inventory]
compute = ["compute-01"]
"#,
        store = dir.path().join("store").display(),
        homeserver = matrix.homeserver,
        user = matrix.user,
        password = password_file.display(),
        announce = world.announce_room,
        alice = world.alice.user_id(),
        books = books.display(),
    );
    std::fs::write(&config, text).unwrap();
    let out = output(spawn(
        &["check", "--config", &config.display().to_string()],
        "",
    ))
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line: Vec<&str> = stdout
        .lines()
        .filter(|l| l.get(6..).is_some_and(|l| l.starts_with("matrix: ")))
        .collect();
    assert_eq!(
        line.len(),
        1,
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (line[0].to_owned(), out.status.success())
}

/// The bot's joined rooms, as the homeserver lists them.
async fn joined(world: &MatrixWorld) -> Vec<String> {
    let bot = &world.bot;
    let rooms = bot
        .call(
            opsbot_tests::matrix::On429::WaitOut,
            reqwest::Method::GET,
            &["joined_rooms"],
            &[],
            None,
        )
        .await
        .unwrap();
    serde_json::from_value(rooms["joined_rooms"].clone()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_line_says_what_the_bot_may_do_in_each_room_and_joins_nothing() {
    let world = MatrixWorld::new(false).await;
    let (line, ok) = check(&world, &[&world.room], None).await;
    // Invited, not joined: the check says so and leaves the invitation for the bot.
    assert!(!ok, "{line}");
    assert!(
        line.contains(&format!("homeserver {}", world.synapse.base_url())),
        "{line}"
    );
    let not_in = format!("the bot is not in room {}: invite it there", world.room);
    assert!(line.contains(&not_in), "{line}");
    assert_eq!(
        joined(&world).await,
        Vec::<String>::new(),
        "the check joined a room"
    );

    world.bot.join(&world.room).await;
    world.bot.join(&world.announce_room).await;
    let (line, ok) = check(&world, &[&world.room], None).await;
    assert!(ok, "{line}");
    assert!(line.starts_with("ok    matrix: "), "{line}");
    assert!(line.contains("#ops joined, can post"), "{line}");
    assert!(
        line.contains("#maintenance (announcements) joined, can post"),
        "{line}"
    );

    world.alice.set_events_default(&world.room, 50).await;
    let (line, ok) = check(&world, &[&world.room], None).await;
    assert!(!ok, "{line}");
    assert!(line.contains("power level in room #ops"), "{line}");
    assert!(line.contains("too low to post"), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_password_and_an_encrypted_room_each_say_what_to_do() {
    let world = MatrixWorld::new(true).await;
    let (line, ok) = check(&world, &[&world.announce_room], Some("not-the-password")).await;
    assert!(!ok, "{line}");
    assert!(line.contains("M_FORBIDDEN"), "{line}");
    assert!(
        line.contains("check [matrix] user and its access token or password"),
        "{line}"
    );
    assert!(!line.contains("not-the-password"), "{line}");

    world.bot.join(&world.room).await;
    let (line, ok) = check(&world, &[&world.room], None).await;
    assert!(!ok, "{line}");
    assert!(
        line.contains("is encrypted, and opsbot reads only unencrypted rooms"),
        "{line}"
    );
}
