//! Rancher Fleet's name derivations, byte for byte: `HelmReleaseName` (bundle names), `Limit`,
//! `SafeConcatName` and `KeyHash`.

use md5::Md5;
use sha2::{Digest, Sha256};

/// Helm's limit for release names, which Fleet applies to bundle names.
pub const MAX_HELM_RELEASE_NAME_LEN: usize = 53;

fn md5_hex(input: &str) -> String {
    hex::encode(Md5::digest(input.as_bytes()))
}

fn sha256_hex(input: &[u8]) -> String {
    hex::encode(Sha256::digest(input))
}

/// `s` cut to `count` bytes: longer strings keep `count - 6` bytes, a `-` and the first 5 hex digits of their
/// md5; the `-` is dropped when the cut already ends in one. Counts of 6 or less just truncate.
pub fn limit(s: &str, count: usize) -> String {
    const HEX_LEN: usize = 5;
    if s.len() <= count {
        return s.to_string();
    }
    if count <= HEX_LEN + 1 {
        return byte_prefix(s, count);
    }
    let keep = count - HEX_LEN - 1;
    let head = byte_prefix(s, keep);
    let separator = if head.ends_with('-') { "" } else { "-" };
    format!("{head}{separator}{}", &md5_hex(s)[..HEX_LEN])
}

/// The first `len` bytes of `s` (lossy if that splits a character, as Go's byte slicing would produce).
fn byte_prefix(s: &str, len: usize) -> String {
    String::from_utf8_lossy(&s.as_bytes()[..len.min(s.len())]).into_owned()
}

fn is_allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

fn is_dns_label(s: &str) -> bool {
    let bytes = s.as_bytes();
    let edge_ok = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    match (bytes.first(), bytes.last()) {
        (Some(&first), Some(&last)) => {
            edge_ok(first) && edge_ok(last) && bytes.iter().all(|&b| edge_ok(b) || b == b'-')
        }
        _ => false,
    }
}

/// The release (and bundle) name Fleet derives from a bundle ID such as `repo/path/to/dir`.
pub fn helm_release_name(input: &str) -> String {
    let mut name = input.replace('/', "-");
    let need_hex = name != name.to_lowercase() || !name.chars().all(is_allowed);
    if need_hex {
        let suffix = &md5_hex(&name)[..8];
        name = format!("{name}-{suffix}");
    }
    let lowered = name.to_lowercase();
    let mut cleaned = String::with_capacity(lowered.len());
    for c in lowered.chars() {
        let c = if is_allowed(c) { c } else { '-' };
        if !(c == '-' && cleaned.ends_with('-')) {
            cleaned.push(c);
        }
    }
    let cleaned = cleaned.trim_matches('-');
    if is_dns_label(cleaned) {
        return limit(cleaned, MAX_HELM_RELEASE_NAME_LEN);
    }
    md5_hex(input)[..24].to_string()
}

/// Joins `parts` with `-`; names of 64 bytes or more are cut to 63 with a sha256 suffix.
pub fn safe_concat_name(parts: &[&str]) -> String {
    let full = parts.join("-");
    if full.len() < 64 {
        return full;
    }
    let digest = sha256_hex(full.as_bytes());
    let c = full.as_bytes()[56];
    if c.is_ascii_lowercase() || c.is_ascii_digit() {
        format!("{}-{}", byte_prefix(&full, 57), &digest[..5])
    } else {
        format!("{}-{}", byte_prefix(&full, 56), &digest[..6])
    }
}

/// Fleet's `KeyHash`: the first 12 hex digits of the sha256 of the first 100 bytes of `s`.
pub fn key_hash(s: &str) -> String {
    let bytes = s.as_bytes();
    sha256_hex(&bytes[..bytes.len().min(100)])[..12].to_string()
}

/// Name of the Secret in which the hub grants a registering agent its credentials (Fleet's registration
/// protocol): `c-` and the hex sha256 of the clientID followed by the clientRandom, cut to 63 characters.
pub fn grant_secret_name(client_id: &str, client_random: &str) -> String {
    let mut name = format!(
        "c-{}",
        sha256_hex(format!("{client_id}{client_random}").as_bytes())
    );
    name.truncate(63);
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    const STR50: &str = "12345678901234567890123456789012345678901234567890";

    #[test]
    fn limit_vectors() {
        let cases = [
            ("1234567", 5, "12345"),
            ("1234567", 6, "123456"),
            ("1234567", 7, "1234567"),
            ("1234567", 8, "1234567"),
            ("12345678", 8, "12345678"),
            ("12345678", 7, "1-25d55"),
            ("123456789", 8, "12-25f9e"),
            ("1-3456789", 8, "1-9b657"),
        ];
        for (input, count, expected) in cases {
            assert_eq!(limit(input, count), expected, "limit({input:?}, {count})");
        }
    }

    #[test]
    fn helm_release_name_vectors() {
        let str53 = format!("{STR50}123");
        let str63 = format!("{STR50}1234567890123");
        let cases = [
            (str53.clone(), str53.clone()),
            (
                format!("{str53}a"),
                "12345678901234567890123456789012345678901234567-fdba4".to_string(),
            ),
            (
                format!("{str63}a"),
                "12345678901234567890123456789012345678901234567-eb12d".to_string(),
            ),
            (
                "long-name-test-shortpath-with@char".into(),
                "long-name-test-shortpath-with-char-031bab5e".into(),
            ),
            (
                "long-name-test-shortpath-with+char".into(),
                "long-name-test-shortpath-with-char-21c88393".into(),
            ),
            (
                "long-name-test-0.App_ ".into(),
                "long-name-test-0-app-5bf6b3fb".into(),
            ),
            (
                "long-name-test--App_-_12.factor".into(),
                "long-name-test-app-12-factor-0efbac37".into(),
            ),
            (
                "bundle.name.example.com".into(),
                "bundle-name-example-com-645ef821".into(),
            ),
            (
                format!("{}-1234567", &str53[..46]),
                "1234567890123456789012345678901234567890123456-d0bce".into(),
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(
                helm_release_name(&input),
                expected,
                "helm_release_name({input:?})"
            );
        }
    }

    #[test]
    fn helm_release_name_paths_and_fallback() {
        assert_eq!(helm_release_name("repo/sub/dir"), "repo-sub-dir");
        // Only disallowed characters: what remains is the md5 suffix.
        assert_eq!(helm_release_name("@@@"), md5_hex("@@@")[..8]);
        assert_eq!(
            helm_release_name("Repo/App"),
            format!("repo-app-{}", &md5_hex("Repo-App")[..8])
        );
    }

    #[test]
    fn safe_concat_name_vectors() {
        let a32 = "a".repeat(32);
        let a63 = "a".repeat(63);
        let a64 = "a".repeat(64);
        assert_eq!(safe_concat_name(&[]), "");
        assert_eq!(safe_concat_name(&[&a63]), a63);
        assert_eq!(
            safe_concat_name(&[&a64]),
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-ffe05"
        );
        assert_eq!(
            safe_concat_name(&["first", "second", "third"]),
            "first-second-third"
        );
        assert_eq!(
            safe_concat_name(&[&a32, &a32]),
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-aaaaaaaaaaaaaaaaaaaaaaaa-da5ed"
        );
        assert_eq!(
            safe_concat_name(&["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-aaaaaaa"]),
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-768c62"
        );
        assert_eq!(
            safe_concat_name(&["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa--aaaaaaa"]),
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa--9e8cfe"
        );
    }

    #[test]
    fn key_hash_uses_first_100_bytes() {
        let long = "x".repeat(150);
        assert_eq!(key_hash(&long), key_hash(&long[..100]));
        assert_eq!(key_hash("abc"), &sha256_hex(b"abc")[..12]);
        assert_eq!(key_hash("abc"), "ba7816bf8f01");
    }

    #[test]
    fn grant_secret_names_follow_fleet() {
        let name = grant_secret_name("id", "random");
        assert_eq!(name.len(), 63);
        assert!(name.starts_with("c-"));
        assert_eq!(&name[2..], &hex::encode(Sha256::digest(b"idrandom"))[..61]);
    }
}
