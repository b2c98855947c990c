//! Elasticsearch's `TimeValue` and `ByteSizeValue` text forms, parsed and printed the way the server does.

/// A time value string (`500ms`, `30s`, `1m`) that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("failed to parse [{0}] as a time value: unit is missing or unrecognized")]
pub struct TimeParseError(pub String);

/// Parses an ES time value into milliseconds. Like ES, a unit is mandatory (`30` is an error)
/// and fractional values are refused.
pub fn parse_millis(text: &str) -> Result<u64, TimeParseError> {
    let error = || TimeParseError(text.to_owned());
    let trimmed = text.trim();
    let digits_end = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(error)?;
    let (number, unit) = trimmed.split_at(digits_end);
    let number: u64 = number.parse().map_err(|_| error())?;
    let (multiplier, divisor) = match unit.to_ascii_lowercase().as_str() {
        "nanos" => (1, 1_000_000),
        "micros" => (1, 1_000),
        "ms" => (1, 1),
        "s" => (1_000, 1),
        "m" => (60_000, 1),
        "h" => (3_600_000, 1),
        "d" => (86_400_000, 1),
        _ => return Err(error()),
    };
    number
        .checked_mul(multiplier)
        .map(|value| value / divisor)
        .ok_or_else(error)
}

/// Java's `Strings.format1Decimals`: one decimal, TRUNCATED (not rounded), and `.0` dropped.
/// This is why ES prints `26kb` but `2.1gb` for 2.19 GiB.
fn format1(value: f64, suffix: &str) -> String {
    let text = value.to_string();
    match text.split_once('.') {
        Some((whole, fraction)) => match fraction.chars().next() {
            Some(digit) if digit != '0' => format!("{whole}.{digit}{suffix}"),
            _ => format!("{whole}{suffix}"),
        },
        None => format!("{text}{suffix}"),
    }
}

/// `TimeValue.toString()` for a millisecond duration: `88ms`, `1.4s`, `3.2m`, `0s`.
pub fn format_millis(millis: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "m"),
        (1_000, "s"),
    ];
    if millis == 0 {
        return "0s".to_owned();
    }
    for (size, suffix) in UNITS {
        if millis >= size {
            return format1(millis as f64 / size as f64, suffix);
        }
    }
    format!("{millis}ms")
}

const BYTE_UNITS: [(&str, u32); 6] = [
    ("pb", 5),
    ("tb", 4),
    ("gb", 3),
    ("mb", 2),
    ("kb", 1),
    ("b", 0),
];

/// `ByteSizeValue.toString()`: the largest binary unit that keeps the value >= 1.
pub fn format_bytes(bytes: u64) -> String {
    for (suffix, power) in BYTE_UNITS {
        let size = 1024_u64.pow(power);
        if bytes >= size && power > 0 {
            return format1(bytes as f64 / size as f64, suffix);
        }
    }
    format!("{bytes}b")
}

/// Bytes in a fixed unit, as `_cat` prints them with `?bytes=kb` (whole units, rounded down).
/// Returns `None` for an unknown unit name.
pub fn bytes_in_unit(bytes: u64, unit: &str) -> Option<u64> {
    BYTE_UNITS
        .iter()
        .find(|(name, _)| *name == unit)
        .map(|(_, power)| bytes / 1024_u64.pow(*power))
}

/// Epoch milliseconds as ES's `strict_date_time` in UTC: `2026-03-01T00:00:02.517Z`.
pub(crate) fn format_date_millis(millis: i64) -> String {
    let instant = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(millis) * 1_000_000)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        instant.year(),
        u8::from(instant.month()),
        instant.day(),
        instant.hour(),
        instant.minute(),
        instant.second(),
        instant.millisecond()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_values_need_a_unit() {
        assert_eq!(parse_millis("30s"), Ok(30_000));
        assert_eq!(parse_millis("200ms"), Ok(200));
        assert_eq!(parse_millis("1m"), Ok(60_000));
        assert!(parse_millis("30").is_err());
        assert!(parse_millis("1.5s").is_err());
        assert!(parse_millis("s").is_err());
    }

    #[test]
    fn time_values_print_like_es() {
        assert_eq!(format_millis(0), "0s");
        assert_eq!(format_millis(88), "88ms");
        assert_eq!(format_millis(1_400), "1.4s");
        assert_eq!(format_millis(192_000), "3.2m");
        assert_eq!(format_millis(2_000), "2s");
    }

    #[test]
    fn dates_print_like_strict_date_time() {
        assert_eq!(format_date_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            format_date_millis(1_772_323_202_517),
            "2026-03-01T00:00:02.517Z"
        );
    }

    #[test]
    fn byte_sizes_truncate_one_decimal() {
        assert_eq!(format_bytes(0), "0b");
        assert_eq!(format_bytes(26 * 1024), "26kb");
        assert_eq!(format_bytes(23_244), "22.6kb");
        assert_eq!(format_bytes(2_351_000_000), "2.1gb");
        assert_eq!(bytes_in_unit(5 * 1024 * 1024, "mb"), Some(5));
        assert_eq!(bytes_in_unit(1, "xb"), None);
    }
}
