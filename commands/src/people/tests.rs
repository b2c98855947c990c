use super::*;

fn name(n: &str) -> PersonName {
    PersonName::parse(n).unwrap()
}

fn person(n: &str, operator: bool, approver: bool) -> Person {
    Person {
        name: name(n),
        roles: Roles { operator, approver },
        discord_user: None,
        discord_roles: vec![],
        slack_user: None,
        matrix_user: None,
        accounts: vec![n.to_owned()],
    }
}

fn team() -> People {
    let mut alice = person("alice", true, false);
    alice.discord_user = Some(1);
    alice.accounts.push("alice-admin".to_owned());
    let mut bob = person("bob", true, true);
    bob.discord_user = Some(2);
    bob.discord_roles = vec![500];
    People::new(vec![alice, bob]).unwrap()
}

#[test]
fn one_person_is_the_same_person_on_every_surface() {
    let people = team();
    let discord = people.on_discord(1, &[]).unwrap();
    let console = people.on_console("alice").unwrap();
    let admin = people.on_console("alice-admin").unwrap();
    assert_eq!(discord.person.name, console.person.name);
    assert!(discord.person.same_person(&console.person));
    assert!(admin.person.same_person(&discord.person));
    assert_eq!(discord.person.via, Surface::Discord { user: 1 });
    assert_eq!(
        admin.person.via,
        Surface::Console {
            account: "alice-admin".into()
        }
    );
}

#[test]
fn unknown_accounts_map_to_nobody() {
    let people = team();
    let refusal = people.on_discord(3, &[]).unwrap_err();
    assert_eq!(
        refusal.to_string(),
        "Discord user 3 is not one of opsbot's people; ask whoever runs opsbot to add it to \
         [[people]] in the config"
    );
    assert!(people.on_console("root").is_err());
    // A name is not an account: only the listed accounts count.
    assert!(people.on_console("bob-admin").is_err());
}

#[test]
fn discord_roles_gate_the_persons_roles_on_discord_only() {
    let people = team();
    let without = people.on_discord(2, &[]).unwrap();
    assert_eq!(without.roles, Roles::default());
    let with = people.on_discord(2, &[400, 500]).unwrap();
    assert!(with.roles.approver && with.roles.operator);
    assert!(people.on_console("bob").unwrap().roles.approver);
}

#[test]
fn each_account_belongs_to_one_person() {
    let mut a = person("alice", true, false);
    let mut b = person("bob", true, true);
    a.discord_user = Some(9);
    b.discord_user = Some(9);
    assert!(matches!(
        People::new(vec![a.clone(), b.clone()]),
        Err(PeopleError::GivenTwice { account, .. }) if account == "Discord user 9"
    ));
    b.discord_user = None;
    b.accounts = vec!["alice".into()];
    assert!(matches!(
        People::new(vec![a.clone(), b]),
        Err(PeopleError::GivenTwice { account, .. }) if account.starts_with("account `")
    ));
    assert!(matches!(
        People::new(vec![a.clone(), a.clone()]),
        Err(PeopleError::Twice(_))
    ));
}

#[test]
fn a_person_must_be_reachable_and_have_a_role() {
    let mut nobody = person("carol", false, false);
    assert!(matches!(
        People::new(vec![nobody.clone()]),
        Err(PeopleError::NoRoles(_))
    ));
    nobody.roles.operator = true;
    nobody.accounts.clear();
    assert!(matches!(
        People::new(vec![nobody.clone()]),
        Err(PeopleError::Unreachable(_))
    ));
    nobody.discord_roles = vec![1];
    nobody.accounts = vec!["carol".into()];
    assert!(matches!(
        People::new(vec![nobody.clone()]),
        Err(PeopleError::RolesWithoutUser { .. })
    ));
    nobody.discord_roles.clear();
    nobody.accounts = vec!["-rf".into()];
    assert!(matches!(
        People::new(vec![nobody]),
        Err(PeopleError::BadAccount { .. })
    ));
}

#[test]
fn records_from_before_people_still_read() {
    let legacy: PersonRef =
        serde_json::from_str(r#"{"id":"700000000000000001","name":"Alice.Ops"}"#).unwrap();
    assert_eq!(legacy.name.as_str(), "alice.ops");
    assert!(legacy.is_legacy());
    let odd: PersonRef = serde_json::from_str(r#"{"id":"7","name":"✨"}"#).unwrap();
    assert_eq!(odd.name.as_str(), "unknown");
    // Against a current person it cannot tell, so it counts as the same person.
    let bob = team().on_console("bob").unwrap().person;
    assert!(legacy.same_person(&bob));
    let speaker: Speaker = serde_json::from_str(r#"{"id":"console:bob","name":"bob"}"#).unwrap();
    assert_eq!(speaker.person, Some(name("bob")));
    // Current records round-trip.
    let json = serde_json::to_string(&bob).unwrap();
    assert_eq!(
        json,
        r#"{"name":"bob","via":{"surface":"console","account":"bob"}}"#
    );
    assert_eq!(serde_json::from_str::<PersonRef>(&json).unwrap(), bob);
    let unknown = Speaker {
        person: None,
        via: Surface::Discord { user: 3 },
    };
    let json = serde_json::to_string(&unknown).unwrap();
    assert_eq!(serde_json::from_str::<Speaker>(&json).unwrap(), unknown);
    assert_eq!(unknown.to_string(), "nobody known (Discord user 3)");
}

#[test]
fn the_demo_picks_people_by_name() {
    let people = team();
    let bob = people.in_demo(&name("bob")).unwrap();
    assert_eq!(bob.person.via, Surface::Demo);
    assert!(bob.roles.approver);
    assert!(people.in_demo(&name("mallory")).is_none());
}

#[test]
fn a_slack_user_is_one_person_and_a_member_id() {
    let mut a = person("alice", true, false);
    let mut b = person("bob", true, true);
    a.slack_user = Some(SlackUser::parse("U0ALICE").unwrap());
    b.slack_user = Some(SlackUser::parse("U0ALICE").unwrap());
    assert!(matches!(
        People::new(vec![a.clone(), b.clone()]),
        Err(PeopleError::GivenTwice { account, .. }) if account == "Slack user U0ALICE"
    ));
    b.slack_user = Some(SlackUser::parse("W0BOB").unwrap());
    let people = People::new(vec![a, b]).unwrap();
    let alice = people.on_slack("T0TEAM", "U0ALICE").unwrap();
    assert_eq!(alice.name().as_str(), "alice");
    assert_eq!(
        alice.person.via,
        Surface::Slack {
            team: "T0TEAM".into(),
            user: "U0ALICE".into()
        }
    );
    let unknown = people.on_slack("T0TEAM", "U0CAROL").unwrap_err();
    assert_eq!(
        unknown.to_string(),
        "Slack user U0CAROL in workspace T0TEAM is not one of opsbot's people; ask whoever runs \
         opsbot to add it to [[people]] in the config"
    );
    for bad in [
        "",
        "U",
        "alice",
        "@alice",
        "u0alice",
        "C0CHANNEL",
        "U0ALICE!",
        "U012345678901234567890",
    ] {
        assert!(SlackUser::parse(bad).is_err(), "{bad}");
    }
    // Slack only: someone who speaks nowhere else is reachable.
    let mut only_slack = person("erin", true, false);
    only_slack.accounts.clear();
    only_slack.slack_user = Some(SlackUser::parse("U0ERIN").unwrap());
    assert!(People::new(vec![only_slack]).is_ok());
}

#[test]
fn a_matrix_user_is_one_person_on_every_homeserver_room() {
    let mut a = person("alice", true, false);
    let mut b = person("bob", true, true);
    a.matrix_user = Some(MatrixUser::parse("@alice:example.org").unwrap());
    b.matrix_user = a.matrix_user.clone();
    let twice = People::new(vec![a.clone(), b.clone()]).unwrap_err();
    assert_eq!(
        twice.to_string(),
        "Matrix user @alice:example.org is given to both `alice` and `bob`"
    );
    b.matrix_user = Some(MatrixUser::parse("@bob:example.org").unwrap());
    let people = People::new(vec![a, b]).unwrap();
    let alice = people.on_matrix("@alice:example.org").unwrap();
    assert_eq!(alice.person.name.as_str(), "alice");
    let nobody = people.on_matrix("@alice:elsewhere.org").unwrap_err();
    assert_eq!(
        nobody.to_string(),
        "Matrix user @alice:elsewhere.org is not one of opsbot's people; ask whoever runs \
         opsbot to add it to [[people]] in the config"
    );
}
