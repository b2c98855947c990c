//! The iteration order of a Java `HashSet`, which decides the order of the indices in an ES
//! delete task's source (`"delete-index " + Arrays.toString(indices)` of a `HashSet<Index>`).
//! A client that reads that string must not expect the request's order; neither does this one.

/// Java's `String.hashCode()` over UTF-16 code units.
pub(super) fn string_hash(text: &str) -> i32 {
    text.encode_utf16().fold(0_i32, |hash, unit| {
        hash.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

/// ES's `Index.hashCode()`: `31 * name.hashCode() + uuid.hashCode()`.
pub(super) fn index_hash(name: &str, uuid: &str) -> i32 {
    string_hash(name)
        .wrapping_mul(31)
        .wrapping_add(string_hash(uuid))
}

/// The order `new HashSet<>(items)` iterates in: buckets of a table sized
/// `tableSizeFor(max(n / .75f + 1, 16))`, spread as `HashMap.hash` does, each bucket in
/// insertion order. (A bucket of 8 or more colliding entries in a table of 64+ becomes a tree
/// whose order differs; random 22-character uuids make that practically impossible.)
pub(super) fn hash_set_order<T>(items: Vec<T>, hash: impl Fn(&T) -> i32) -> Vec<T> {
    let wanted = ((items.len() as f32 / 0.75) as usize + 1).max(16);
    let capacity = wanted.next_power_of_two();
    let mut buckets: Vec<Vec<T>> = (0..capacity).map(|_| Vec::new()).collect();
    for item in items {
        let h = hash(&item) as u32;
        let spread = h ^ (h >> 16);
        let slot = (spread as usize) & (capacity - 1);
        if let Some(bucket) = buckets.get_mut(slot) {
            bucket.push(item);
        }
    }
    buckets.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_hash_is_java_s() {
        assert_eq!(string_hash(""), 0);
        assert_eq!(string_hash("a"), 97);
        // "hello".hashCode() in Java.
        assert_eq!(string_hash("hello"), 99_162_322);
        // Overflow wraps like Java's int arithmetic.
        assert_eq!(
            string_hash("flog-2026.01.01"),
            string_hash("flog-2026.01.01")
        );
        assert_eq!(string_hash("polygenelubricants"), i32::MIN);
    }

    #[test]
    fn order_follows_buckets_not_insertion() {
        // Hashes 17, 1, 33 land in buckets 1, 1, 1 of 16? 17 & 15 = 1, 1 & 15 = 1, 33 & 15 = 1:
        // one bucket, insertion order. 2 lands in bucket 2, after them.
        let order = hash_set_order(vec![2, 17, 1, 33], |value| *value);
        assert_eq!(order, [17, 1, 33, 2]);
        assert_eq!(hash_set_order(vec![5, 3], |value| *value), [3, 5]);
    }

    #[test]
    fn thirty_indices_come_out_as_java_17_prints_them() {
        // `new HashSet<>(indices)` of `Index("flog-2026.01.DD", uuid)` with these random-looking
        // uuids, printed by OpenJDK 17.
        const UUIDS: [&str; 30] = [
            "Yi7dkhX5Fb71PQHFONDp2Q",
            "MrcycBVCpswuQspa6rkJgQ",
            "I4mf8tyQcWRDHUvuI3DjPw",
            "p6k4hsf3uCnYB-zTV5E-gw",
            "X_8uw-MWh1daCGVVVjq11w",
            "7IqaDDMt_eUM6mUkpe9BKg",
            "GTrbxtEaon1Crhx7QjXXeQ",
            "PXq1HBAkA_hl44__BTR1Yw",
            "9zj0UukXjC3mdflG4wkaxA",
            "8L1q_aWxTcqFmP-dbn3Ohg",
            "WNOUx7wsWRUpipHeZqQIBg",
            "0LO4dqypNfH11j9mcQdK9A",
            "UelpV2bytJB0v_buavtAsQ",
            "j6JeE_d0Py3JRcUAmER1EA",
            "-wfaV8EZQwFcGI7rG2odtw",
            "KcDYAX26OdHdikl4xc_kMA",
            "s4_5sDIUXfcwr9o9sIyRqQ",
            "o8pxq-pM_zEnHxnjIuewmg",
            "b7dchNoJUnxlQimoW4gTWw",
            "3ZgJxNx8E-MBN5s0XoFDmA",
            "LCAhLWIEPDxN04CfDtmSag",
            "rsmw1KIq9lIcz0GbH2o0Jw",
            "gxJuFwukfpEDGtmDUez-JA",
            "kjxXPhYwxWw_wDCg-8wV_A",
            "dgDPH7vEkl5NkiUI_Z17rQ",
            "LgzaliPJZtoYiOTvS5QBPw",
            "hzEnkS3ZzsoiEQInYn2T1Q",
            "dtCPtsCZp3edp8YNc9EiLw",
            "abL_n4EacX-tsGmvGp80hQ",
            "jNNvaWbhc9CyYQkTSbjm1w",
        ];
        let indices: Vec<(String, &str)> = UUIDS
            .iter()
            .enumerate()
            .map(|(day, uuid)| (format!("flog-2026.01.{:02}", day + 1), *uuid))
            .collect();
        let days: Vec<u32> = hash_set_order(indices, |(name, uuid)| index_hash(name, uuid))
            .into_iter()
            .map(|(name, _)| name[13..].parse().unwrap())
            .collect();
        assert_eq!(
            days,
            [
                6, 14, 15, 17, 16, 27, 18, 5, 23, 30, 3, 7, 10, 22, 19, 1, 2, 12, 9, 24, 26, 11,
                20, 25, 28, 8, 29, 4, 13, 21
            ]
        );
        assert_eq!(string_hash("flog-2026.01.01"), 225_223_985);
    }
}
