use super::*;

#[test]
fn templates_refuse_shells_and_unknown_placeholders() {
    assert!(CommandTemplate::of(&["ssh", "{host}", "docker", "stop", "{container}"]).is_ok());
    for bad in [
        &["sh", "-c", "docker stop x"][..],
        &["/bin/bash", "-c", "x"],
        &["env", "x"],
        &["ssh", "{hots}"],
        &["ssh", "{host"],
        &["{host}"],
        &[],
    ] {
        assert!(CommandTemplate::of(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn values_that_could_become_options_are_refused() {
    assert!(check_value("host", "ctl1.example.net").is_ok());
    assert!(check_value("host", "-oProxyCommand=touch /tmp/x").is_err());
    assert!(check_value("host", "a b").is_err());
    assert!(check_value("container", "x;rm").is_err());
}
