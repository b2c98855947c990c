//! Command registration: the bounds, types and choices of options, and how many commands a
//! guild may have, each breach a 400 (50035) at the offending field.

use std::time::Duration;

use opsbot_fake_discord::FakeConfig;
use serde_json::{Value, json};
use serenity::all::{CommandOptionType, CreateCommand, CreateCommandOption, GuildId};

use crate::harness::{on, refusal, start, within};

/// One chat-input command with one option.
fn with_option(option: Value) -> Value {
    json!([{"name": "probe", "description": "d", "options": [option]}])
}

fn option(kind: u8, extra: Value) -> Value {
    let mut o = json!({"name": "o", "description": "d", "type": kind});
    if let (Some(o), Value::Object(extra)) = (o.as_object_mut(), extra) {
        o.extend(extra);
    }
    o
}

fn choices(n: usize, value: impl Fn(usize) -> Value) -> Value {
    (0..n)
        .map(|i| json!({"name": format!("c{i}"), "value": value(i)}))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn option_bounds_types_and_choices_are_checked() {
    within(Duration::from_secs(60), async {
        let bot = start(FakeConfig::default(), on(|_, _| async {})).await;
        let (fake, http) = (&bot.fake, &bot.http);
        let guild = GuildId::new(fake.config().guild_id);
        let at = |field: &str| format!("0.options.0.{field}");
        let big = 9_007_199_254_740_992_u64;
        let bad = [
            (option(4, json!({"min_length": 1})), at("min_length")),
            (option(3, json!({"max_length": 0})), at("max_length")),
            (option(3, json!({"min_length": 6001})), at("min_length")),
            (option(3, json!({"min_length": 10, "max_length": 5})), at("min_length")),
            (option(3, json!({"min_value": 1})), at("min_value")),
            (option(4, json!({"min_value": 1.5})), at("min_value")),
            (option(4, json!({"min_value": 5, "max_value": 1})), at("min_value")),
            (option(4, json!({"max_value": big})), at("max_value")),
            (option(10, json!({"min_value": "1"})), at("min_value")),
            (option(5, json!({"autocomplete": true})), at("autocomplete")),
            (
                option(3, json!({"autocomplete": true, "choices": choices(1, |_| json!("a"))})),
                at("autocomplete"),
            ),
            (option(4, json!({"choices": choices(1, |_| json!("1"))})), at("choices.0.value")),
            (option(4, json!({"choices": choices(1, |_| json!(0.5))})), at("choices.0.value")),
            (option(10, json!({"choices": choices(1, |_| json!("x"))})), at("choices.0.value")),
            (option(3, json!({"choices": choices(1, |_| json!(1))})), at("choices.0.value")),
            (option(3, json!({"choices": choices(1, |_| json!(""))})), at("choices.0.value")),
            (
                option(3, json!({"choices": choices(1, |_| json!("v".repeat(101)))})),
                at("choices.0.value"),
            ),
            (option(3, json!({"choices": choices(26, |i| json!(i.to_string()))})), at("choices")),
            (
                option(3, json!({"choices": [{"name": "", "value": "a"}]})),
                at("choices.0.name"),
            ),
        ];
        for (option, path) in &bad {
            let err = http
                .create_guild_commands(guild, &with_option(option.clone()))
                .await
                .unwrap_err();
            assert_eq!(refusal(&err), (400, 50035, path.clone()), "{option}");
        }
        // The same breaches as serenity's builders let them through.
        let by_serenity = [
            CreateCommandOption::new(CommandOptionType::Integer, "n", "d").min_length(1),
            CreateCommandOption::new(CommandOptionType::Integer, "n", "d").add_string_choice("a", "a"),
            CreateCommandOption::new(CommandOptionType::Boolean, "b", "d").set_autocomplete(true),
        ];
        for option in by_serenity {
            let command = CreateCommand::new("probe").description("d").add_option(option);
            let err = guild.set_commands(http, vec![command]).await.unwrap_err();
            assert_eq!(refusal(&err).1, 50035);
        }
        assert_eq!(fake.commands().len(), 3, "refused registrations change nothing");

        let fine = json!([{"name": "fine", "description": "d", "options": [
            option(3, json!({"min_length": 0, "max_length": 6000, "autocomplete": true, "required": true})),
            option(4, json!({"name": "i", "min_value": -5, "max_value": 5,
                             "choices": choices(5, |i| json!(i as i64 - 2))})),
            option(10, json!({"name": "x", "min_value": -1.5, "max_value": 2.5,
                              "choices": choices(2, |i| json!(i as f64 / 2.0))})),
            option(4, json!({"name": "a", "autocomplete": true, "min_value": null, "max_value": null})),
        ]}]);
        http.create_guild_commands(guild, &fine).await.unwrap();
        assert_eq!(fake.commands().len(), 1);

        let fake = bot.stop().await;
        assert_eq!(
            fake.violations().len(),
            bad.len() + 3,
            "{:?}",
            fake.violations()
        );
        fake.shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guild_takes_100_chat_input_commands_and_no_entry_point() {
    within(Duration::from_secs(60), async {
        let bot = start(FakeConfig::default(), on(|_, _| async {})).await;
        let (fake, http) = (&bot.fake, &bot.http);
        let guild = GuildId::new(fake.config().guild_id);
        let chat = |n: usize| -> Vec<Value> {
            (0..n)
                .map(|i| json!({"name": format!("c{i}"), "description": "d"}))
                .collect()
        };
        let users: Vec<Value> = (0..15)
            .map(|i| json!({"name": format!("User {i}"), "type": 2}))
            .collect();

        let err = http
            .create_guild_commands(guild, &chat(101))
            .await
            .unwrap_err();
        assert_eq!(refusal(&err), (400, 50035, String::new()));
        let mut too_many_users = users.clone();
        too_many_users.push(json!({"name": "User 15", "type": 2}));
        let err = http
            .create_guild_commands(guild, &too_many_users)
            .await
            .unwrap_err();
        assert_eq!(refusal(&err), (400, 50035, String::new()));
        let entry = json!([{"name": "launch", "description": "d", "type": 4, "handler": 2}]);
        let err = http.create_guild_commands(guild, &entry).await.unwrap_err();
        assert_eq!(refusal(&err), (400, 50035, "0.type".to_owned()));

        let mut most = chat(100);
        most.extend(users);
        let registered = http.create_guild_commands(guild, &most).await.unwrap();
        assert_eq!(registered.len(), 115);
        assert_eq!(fake.commands().len(), 115);

        let fake = bot.stop().await;
        assert_eq!(fake.violations().len(), 3, "{:?}", fake.violations());
        fake.shutdown().await;
    })
    .await;
}
