//! The export format: one JSON value a line. `opsbot audit export` writes audit entries in it,
//! and compaction archives old runs and audit entries in it, so that one tool reads both.

use std::io::{self, Write};

use serde::Serialize;

/// Writes `value` as one line of the export format.
pub fn write_line(out: &mut impl Write, value: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_is_one_line() {
        let mut out = Vec::new();
        write_line(&mut out, &serde_json::json!({"a": "x\ny"})).unwrap();
        write_line(&mut out, &2).unwrap();
        assert_eq!(out, b"{\"a\":\"x\\ny\"}\n2\n");
    }
}
