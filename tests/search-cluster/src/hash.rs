//! Deterministic stand-ins for random values (uuids, sizes, load figures), derived from names.

/// 64-bit FNV-1a with a salt, so one name can yield several independent values.
pub(crate) fn hash(salt: &str, name: &str) -> u64 {
    let mut value: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in salt.bytes().chain([0]).chain(name.bytes()) {
        value ^= u64::from(byte);
        value = value.wrapping_mul(0x0100_0000_01b3);
    }
    // FNV spreads the last bytes poorly ("10.0.0.11" vs "10.0.0.12"): finish with murmur3's
    // fmix64 avalanche.
    value ^= value >> 33;
    value = value.wrapping_mul(0xff51_afd7_ed55_8ccd);
    value ^= value >> 33;
    value = value.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    value ^ (value >> 33)
}

/// A value in `low..=high` derived from `name`.
pub(crate) fn in_range(salt: &str, name: &str, low: u64, high: u64) -> u64 {
    low + hash(salt, name) % (high - low + 1)
}

/// A 22-character URL-safe base64 id, the shape of ES index and cluster uuids
/// (16 random bytes, unpadded).
pub(crate) fn uuid(name: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut bytes = [0_u8; 16];
    bytes[..8].copy_from_slice(&hash("uuid-hi", name).to_be_bytes());
    bytes[8..].copy_from_slice(&hash("uuid-lo", name).to_be_bytes());
    let mut out = String::with_capacity(22);
    let mut buffer: u32 = 0;
    let mut bits = 0;
    for byte in bytes {
        buffer = (buffer << 8) | u32::from(byte);
        bits += 8;
        while bits >= 6 {
            bits -= 6;
            out.push(char::from(ALPHABET[((buffer >> bits) & 63) as usize]));
        }
    }
    if bits > 0 {
        out.push(char::from(ALPHABET[((buffer << (6 - bits)) & 63) as usize]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_stable_url_safe_and_22_chars() {
        let id = uuid("flog-2026.01.01");
        assert_eq!(id.len(), 22);
        assert_eq!(id, uuid("flog-2026.01.01"));
        assert_ne!(id, uuid("flog-2026.01.02"));
        assert!(
            id.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
    }

    #[test]
    fn ranges_are_inclusive_and_salted() {
        for name in ["a", "b", "c", "d"] {
            let value = in_range("docs", name, 10, 12);
            assert!((10..=12).contains(&value));
        }
        assert_ne!(hash("x", "name"), hash("y", "name"));
    }
}
