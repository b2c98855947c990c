//! Front ends: where commands come from and where replies and progress go.

pub mod console;
pub mod discord;
