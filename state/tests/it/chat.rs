//! What the store keeps besides runs: delivered interactions, the maintenance notice.

use crate::common::Place;

fn a_delivery_is_first_once_even_after_a_restart(place: Place) {
    let store = place.open().unwrap();
    assert!(store.first_delivery("interaction-1").unwrap());
    assert!(!store.first_delivery("interaction-1").unwrap());
    assert!(store.first_delivery("interaction-2").unwrap());
    drop(store);
    let store = place.open().unwrap();
    assert!(!store.first_delivery("interaction-1").unwrap());
    assert!(!store.first_delivery("interaction-2").unwrap());
}

fn an_announcement_is_recorded_with_its_audit_entry_once(place: Place) {
    use opsbot_commands::audit::{AuditEvent, AuditKind};

    let store = place.open().unwrap();
    let event = AuditEvent {
        at: time::OffsetDateTime::UNIX_EPOCH,
        run: None,
        actor: None,
        event: AuditKind::Announced {
            text: "maintenance of cluster logs is starting".into(),
        },
    };
    assert!(!store.delivered("announcement:r-1:start").unwrap());
    assert!(store.announced("announcement:r-1:start", &event).unwrap());
    assert!(store.delivered("announcement:r-1:start").unwrap());
    assert!(!store.announced("announcement:r-1:start", &event).unwrap());
    drop(store);
    let store = place.open().unwrap();
    assert!(!store.announced("announcement:r-1:start", &event).unwrap());
    assert_eq!(store.audit().unwrap(), vec![event]);
}

fn the_maintenance_notice_is_kept_until_ended_and_survives_a_restart(place: Place) {
    use opsbot_commands::maintenance::MaintenanceNotice;
    use opsbot_commands::name::Notice;
    use opsbot_commands::people::{PersonRef, Surface};

    let store = place.open().unwrap();
    assert_eq!(store.maintenance_notice().unwrap(), None);
    let notice = MaintenanceNotice {
        text: Notice::parse("logging cluster maintenance until 04:00 UTC").unwrap(),
        by: PersonRef {
            name: opsbot_commands::name::PersonName::parse("alice").unwrap(),
            via: Surface::Discord { user: 1 },
        },
        since: time::OffsetDateTime::UNIX_EPOCH,
    };
    assert_eq!(store.set_maintenance_notice(Some(&notice)).unwrap(), None);
    drop(store);
    let store = place.open().unwrap();
    assert_eq!(store.maintenance_notice().unwrap(), Some(notice.clone()));
    assert_eq!(store.set_maintenance_notice(None).unwrap(), Some(notice));
    assert_eq!(store.maintenance_notice().unwrap(), None);
}

crate::backends!(
    a_delivery_is_first_once_even_after_a_restart,
    an_announcement_is_recorded_with_its_audit_entry_once,
    the_maintenance_notice_is_kept_until_ended_and_survives_a_restart,
);
