//! The types of the catalogue: what a command and its options are.

use crate::consent::ConsentRule;
use crate::index::MAX_INDEX_BYTES;
use crate::name::{CloudName, ClusterName, HostName, PersonName, RunbookName};
use crate::openstack::ids::ImageRef;
use crate::openstack::image::PropertyKey;
use crate::parse::{Args, ParseError};
use crate::request::Request;

/// Where a command exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Console and chat.
    Everywhere,
    /// Only `opsbot demo` (`/as`): everywhere else the speaker is who the surface says, and the
    /// command is unknown.
    Demo,
}

/// Who may use a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    /// Every configured person (`/help`).
    Anyone,
    /// Operators and approvers: the decisions on a plan (`/approve`, `/reject`).
    Deciders,
    /// Operators.
    Operators,
}

impl Who {
    pub fn admits(self, roles: crate::people::Roles) -> bool {
        match self {
            Self::Anyone => true,
            Self::Deciders => roles.operator || roles.approver,
            Self::Operators => roles.operator,
        }
    }
}

/// What an option's value is; front ends use it for typing, choices and autocomplete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    /// A configured cluster name (autocomplete from the config).
    Cluster,
    /// A run id such as `r-42` (autocomplete from the store).
    Run,
    /// A configured person's name.
    User,
    /// A plan digest as shown with the plan (its first 12 hex digits, or more).
    Digest,
    /// A node's IPv4 address (autocomplete from the cluster's inventory).
    Node,
    /// An index name or, where the command lists, a `*` pattern (autocomplete from the cluster).
    Index,
    /// A number of days.
    Days,
    /// A page of a long listing, from 1 (the newest).
    Page,
    /// A configured cloud name (autocomplete from the config).
    Cloud,
    /// A hypervisor's host name (autocomplete from the cloud's compute services).
    Host,
    /// An instance's UUID.
    Instance,
    /// An image's name or id.
    Image,
    /// A value of an image property of spec 2.10; Discord offers the fixed ones as choices.
    Property(PropertyKey),
    /// A loaded runbook's name (autocomplete from the runbooks).
    Runbook,
    /// A runbook parameter's value, given as a further `name:value` option (autocomplete from
    /// the parameter's kind).
    Param,
    /// A command group, for `/help` (Discord offers the groups as choices).
    Topic,
    /// A configured schedule's name (autocomplete from the config).
    Schedule,
    /// A date, or a time in RFC 3339 (`2027-02-01`, `2027-02-01T00:00:00Z`).
    Date,
    /// A time with its zone, seconds optional (`2026-11-28T02:00Z`): when a booked run starts.
    Time,
    /// Free text up to `max_len` characters.
    Text { max_len: usize },
}

impl OptionKind {
    /// Longest value accepted, checked before anything else looks at the value.
    pub fn max_len(self) -> usize {
        match self {
            Self::Cluster => ClusterName::MAX_LEN,
            Self::Run => 21,
            Self::User => PersonName::MAX_LEN,
            Self::Digest => 64,
            // The longest IPv4 text is 15 bytes; an IPv6 address is let through to be named.
            Self::Node => 45,
            Self::Index => MAX_INDEX_BYTES,
            Self::Days => 10,
            Self::Page => 4,
            Self::Cloud => CloudName::MAX_LEN,
            Self::Host => HostName::MAX_LEN,
            Self::Instance => 36,
            Self::Image => ImageRef::MAX_LEN,
            Self::Property(_) => 32,
            Self::Runbook => RunbookName::MAX_LEN,
            Self::Param => crate::runbook::MAX_VALUE_LEN,
            Self::Topic => 32,
            Self::Schedule => crate::schedule::ScheduleName::MAX_LEN,
            Self::Date | Self::Time => 40,
            Self::Text { max_len } => max_len,
        }
    }

    /// The placeholder shown in usage lines.
    pub fn placeholder(self) -> &'static str {
        match self {
            Self::Cluster => "<cluster>",
            Self::Run => "<run id>",
            Self::User => "<user>",
            Self::Digest => "<digest>",
            Self::Node => "<node ip>",
            Self::Index => "<index>",
            Self::Days => "<days>",
            Self::Page => "<page>",
            Self::Cloud => "<cloud>",
            Self::Host => "<host>",
            Self::Instance => "<instance uuid>",
            Self::Image => "<image name or id>",
            Self::Property(PropertyKey::HwScsiModel) => "virtio-scsi",
            Self::Property(PropertyKey::HwDiskBus) => "scsi",
            Self::Property(PropertyKey::OsType) => "linux|windows",
            Self::Property(PropertyKey::OsDistro) => "<os id>",
            Self::Runbook => "<runbook>",
            Self::Param => "<value>",
            Self::Topic => "<group>",
            Self::Schedule => "<schedule>",
            Self::Date => "<date>",
            Self::Time => "<time>",
            Self::Text { .. } => "<text>",
        }
    }
}

/// One option of a command.
#[derive(Debug, Clone, Copy)]
pub struct OptionSpec {
    pub name: &'static str,
    pub kind: OptionKind,
    pub required: bool,
    pub summary: &'static str,
}

/// One command: `/group sub option:value ...`.
#[derive(Debug, Clone, Copy)]
pub struct CommandSpec {
    pub group: &'static str,
    pub sub: Option<&'static str>,
    pub summary: &'static str,
    pub options: &'static [OptionSpec],
    pub reach: Reach,
    pub who: Who,
    /// Takes further `name:value` options beyond `options`, each checked as an
    /// [`OptionKind::Param`] here and by name where they are used (a runbook's parameters).
    pub open: bool,
    /// For a command that starts a run: who must agree before its plan acts. `None` for one
    /// that starts none.
    pub consent: Option<ConsentRule>,
    /// Turns checked arguments into the request; the only place a command's options are read.
    pub build: fn(&Args<'_>) -> Result<Request, ParseError>,
}

impl CommandSpec {
    /// `/cluster status`.
    pub fn path(&self) -> String {
        match self.sub {
            Some(sub) => format!("/{} {sub}", self.group),
            None => format!("/{}", self.group),
        }
    }

    /// `/cluster status cluster:<cluster> [since:<text>]`.
    pub fn usage(&self) -> String {
        let mut usage = self.path();
        for option in self.options {
            let part = format!("{}:{}", option.name, option.kind.placeholder());
            if option.required {
                usage.push(' ');
                usage.push_str(&part);
            } else {
                usage.push_str(&format!(" [{part}]"));
            }
        }
        if self.open {
            usage.push_str(" [<parameter>:<value> ...]");
        }
        usage
    }

    pub fn option(&self, name: &str) -> Option<&'static OptionSpec> {
        self.options.iter().find(|o| o.name == name)
    }

    /// The option that takes the rest of a console line, quotes or not
    /// (`/maintenance announce text:upgrading logs now`): the last option, when it is free
    /// text and no further `name:value` options can follow it.
    pub fn free_text(&self) -> Option<&'static str> {
        match self.options.last() {
            Some(option) if matches!(option.kind, OptionKind::Text { .. }) && !self.open => {
                Some(option.name)
            }
            _ => None,
        }
    }
}
