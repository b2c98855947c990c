//! What the start-up check (and `opsbot check`) finds on the homeserver: the credential works
//! and is the configured user's, and for each room it serves or announces in: joined (an
//! invitation is accepted), unencrypted, and the bot's power level enough to post.

use reqwest::Method;
use serde_json::Value;

use super::client::{MatrixError, encode};
use super::{CHECK_DEVICE, Connector, DEVICE, unusable};
use crate::chat::Unusable;
use crate::config::RoomId;

/// What the start-up check found: the rooms served, and what keeps the bot from anything it
/// must do.
#[derive(Debug, Clone)]
pub struct Reached {
    /// Each served room and how a refusal names it (`#ops` or its id).
    pub rooms: Vec<(RoomId, String)>,
    /// Rooms the bot cannot post in, each with what to do about it.
    pub problems: Vec<String>,
    /// Each room looked at: the served ones in the config's order, then the announcement room
    /// unless it is served too.
    pub access: Vec<RoomAccess>,
}

/// What the bot may do in a room it serves or announces in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoomAccess {
    pub room: RoomId,
    /// The room's name, or its id when it has none.
    pub shown: String,
    pub served: bool,
    pub announce: bool,
    /// The bot is joined (after accepting an invitation, if there was one).
    pub joined: bool,
    /// The bot's power level allows `m.room.message` there.
    pub write: bool,
}

impl Connector {
    /// Logs in (with a password) unless the session it has still works, checks the user, joins
    /// each room it is invited to and looks at each. An encrypted served room refuses the
    /// start: the bot could not read a command there and would sit in it silently.
    pub async fn check(&self) -> Result<Reached, Unusable> {
        // Each login adds a session to the device (Synapse keeps the older ones): a bot that
        // reconnects after an outage keeps the one it has unless the homeserver ended it.
        let ended = match self.client.has_token() {
            true => self
                .whoami()
                .await
                .is_err_and(|error| error.refuses_token()),
            false => true,
        };
        if ended {
            self.log_in(DEVICE).await?;
        }
        self.look(true).await
    }

    async fn whoami(&self) -> Result<serde_json::Value, MatrixError> {
        let what = "checking the access token";
        (self.client)
            .call(what, Method::GET, "/v3/account/whoami", None)
            .await
    }

    /// [`Connector::check`] without joining anything, in a session of its own that it ends:
    /// what `opsbot check` says, while the bot may be running.
    pub async fn inspect(&self) -> Result<Reached, Unusable> {
        self.log_in(CHECK_DEVICE).await?;
        let looked = self.look(false).await;
        self.log_out().await;
        looked
    }

    async fn look(&self, join: bool) -> Result<Reached, Unusable> {
        let me =
            (self.whoami().await).map_err(|error| unusable(error, "checking the access token"))?;
        let user = me["user_id"].as_str().unwrap_or_default();
        if user != self.config.user.as_str() {
            return Err(Unusable::Refused(anyhow::anyhow!(
                "the access token is {user}'s, not [matrix] user {}'s: give the bot's own",
                self.config.user
            )));
        }
        let mut reached = Reached {
            rooms: Vec::new(),
            problems: Vec::new(),
            access: Vec::new(),
        };
        let member_of = self
            .client
            .call(
                "listing the joined rooms",
                Method::GET,
                "/v3/joined_rooms",
                None,
            )
            .await
            .map_err(|error| unusable(error, "listing the joined rooms"))?;
        let member = |room: &RoomId| {
            member_of["joined_rooms"]
                .as_array()
                .is_some_and(|rooms| rooms.iter().any(|r| r == room.as_str()))
        };
        for (room, served, announce) in crate::chat::served_and_announced(
            &self.config.rooms,
            self.config.announce_room.as_ref(),
        ) {
            let joined = member(room) || (join && self.join(room).await?);
            let access = self.look_at(room, joined, served, announce).await?;
            reached.problems.extend(problem(&access));
            if served {
                reached.rooms.push((room.clone(), access.shown.clone()));
            }
            reached.access.push(access);
        }
        Ok(reached)
    }

    /// Joins `room` (accepting an invitation); false when the homeserver refuses.
    pub(super) async fn join(&self, room: &RoomId) -> Result<bool, Unusable> {
        let path = format!("/v3/join/{}", encode(room.as_str()));
        match self.client.call("joining", Method::POST, &path, None).await {
            Ok(_) => Ok(true),
            Err(MatrixError::Refused { .. }) => Ok(false),
            Err(error) => Err(unusable(error, "joining the rooms")),
        }
    }

    async fn look_at(
        &self,
        room: &RoomId,
        joined: bool,
        served: bool,
        announce: bool,
    ) -> Result<RoomAccess, Unusable> {
        let doing = "looking at the rooms";
        let state = |kind: &'static str| self.state(room, kind);
        // A room the bot is not in cannot be read (no preview): its id names it.
        let name = match joined {
            true => state("m.room.name").await.map_err(|e| unusable(e, doing))?,
            false => None,
        };
        let shown = match name.as_ref().and_then(|n| n["name"].as_str()) {
            Some(name) if !name.is_empty() => format!("#{name}"),
            _ => room.to_string(),
        };
        let encrypted = joined
            && state("m.room.encryption")
                .await
                .map_err(|e| unusable(e, doing))?
                .is_some();
        if encrypted && served {
            return Err(Unusable::Refused(anyhow::anyhow!(
                "room {shown} ({room}) is encrypted, and opsbot reads only unencrypted rooms: \
                 encryption cannot be turned off in a room, so create one with it off (Element: \
                 Create room, then turn off \"Enable end-to-end encryption\") and serve that"
            )));
        }
        let write =
            joined && !encrypted && self.may_post(room).await.map_err(|e| unusable(e, doing))?;
        Ok(RoomAccess {
            room: room.clone(),
            shown,
            served,
            announce,
            joined,
            write,
        })
    }

    /// A state event's content; `None` when the room has none of that kind.
    async fn state(&self, room: &RoomId, kind: &'static str) -> Result<Option<Value>, MatrixError> {
        let path = format!("/v3/rooms/{}/state/{kind}/", encode(room.as_str()));
        match self
            .client
            .call("reading a room's state", Method::GET, &path, None)
            .await
        {
            Ok(content) => Ok(Some(content)),
            Err(error) if error.errcode() == Some("M_NOT_FOUND") => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Whether the bot's power level reaches the one `m.room.message` needs. A room's creator
    /// (room version 12) has every power and is not listed.
    async fn may_post(&self, room: &RoomId) -> Result<bool, MatrixError> {
        let me = self.config.user.as_str();
        let Some(levels) = self.state(room, "m.room.power_levels").await? else {
            return Ok(true);
        };
        let level = levels["users"][me]
            .as_i64()
            .or(levels["users_default"].as_i64())
            .unwrap_or(0);
        let needed = levels["events"]["m.room.message"]
            .as_i64()
            .or(levels["events_default"].as_i64())
            .unwrap_or(0);
        if level >= needed {
            return Ok(true);
        }
        let created = self.state(room, "m.room.create").await?;
        Ok(created.is_some_and(|c| {
            c["additional_creators"]
                .as_array()
                .is_some_and(|a| a.iter().any(|u| u == me))
        }))
    }
}

/// What keeps the bot from a room, with what to do; `None` when nothing does.
fn problem(access: &RoomAccess) -> Option<String> {
    let what = if access.served {
        "room"
    } else {
        "announcement room"
    };
    let room = access.room.as_str();
    let named = if access.shown == room {
        room.to_owned()
    } else {
        format!("{} ({room})", access.shown)
    };
    if !access.joined {
        Some(format!(
            "the bot is not in {what} {named}: invite it there (it accepts when it starts)"
        ))
    } else if !access.write {
        Some(format!(
            "the bot's power level in {what} {named} is too low to post: raise it \
             (Element: room settings, Roles & Permissions)"
        ))
    } else {
        None
    }
}
