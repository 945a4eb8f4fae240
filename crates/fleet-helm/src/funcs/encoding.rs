//! Encodings: Helm's `toYaml`/`fromYaml`/`toJson`/`fromJson` families (JSON written exactly as Go's
//! `encoding/json` writes it, HTML-escaped unless raw), `toToml`, base64, hashes, and URL helpers.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use sha2::Digest;

use super::{FuncError, FuncResult, Table, arity, err, str_arg};
use crate::value::{
    Value, as_map, from_json_floats, is_nil, list_value, map_value, raw_bytes, string_from_bytes,
    to_json,
};
use minijinja::value::ValueKind;

/// Sprig's own versions of what Helm replaces, for a map without Helm's functions ([`super::Funcs::sprig`]):
/// Sprig's `fromJson` reads any JSON value and gives nil for text that is not JSON.
pub(super) fn register_sprig_overrides(t: &mut Table) {
    t.insert("fromJson", |_, a| {
        arity("fromJson", a, 1)?;
        Ok(
            match serde_json::from_str::<serde_json::Value>(&str_arg(&a[0])) {
                Ok(v) => from_json_floats(&v),
                Err(_) => crate::value::nil(),
            },
        )
    });
}

pub(super) fn register(t: &mut Table) {
    t.insert("toYaml", |_, a| {
        arity("toYaml", a, 1)?;
        let y = crate::yaml::to_yaml(&a[0]).unwrap_or_default();
        Ok(Value::from(y.trim_end_matches('\n')))
    });
    t.insert("mustToYaml", |_, a| {
        arity("mustToYaml", a, 1)?;
        let y = crate::yaml::to_yaml(&a[0]).map_err(FuncError::msg)?;
        Ok(Value::from(y.trim_end_matches('\n')))
    });
    t.insert("toYamlPretty", |_, a| {
        arity("toYamlPretty", a, 1)?;
        let y = crate::yaml::to_yaml(&a[0]).unwrap_or_default();
        Ok(Value::from(y.trim_end_matches('\n')))
    });
    t.insert("fromYaml", |_, a| {
        arity("fromYaml", a, 1)?;
        Ok(match crate::yaml::parse_value(&str_arg(&a[0])) {
            Ok(v) if v.kind() == ValueKind::Map => v,
            Ok(v) if is_nil(&v) => map_value(Default::default()),
            Ok(_) => error_map("error unmarshaling JSON: json: cannot unmarshal into Go value of type map[string]interface {}"),
            Err(e) => error_map(&e.to_string()),
        })
    });
    t.insert("fromYamlArray", |_, a| {
        arity("fromYamlArray", a, 1)?;
        Ok(match crate::yaml::parse_value(&str_arg(&a[0])) {
            Ok(v) if v.kind() == ValueKind::Seq => v,
            Ok(v) if is_nil(&v) => list_value(vec![]),
            Ok(_) => list_value(vec![Value::from(
                "error unmarshaling JSON: cannot unmarshal into []interface {}",
            )]),
            Err(e) => list_value(vec![Value::from(e.to_string())]),
        })
    });
    t.insert("toJson", |_, a| json_fn("toJson", a, true, false, false));
    t.insert("mustToJson", |_, a| {
        json_fn("mustToJson", a, true, false, true)
    });
    t.insert("toRawJson", |_, a| {
        json_fn("toRawJson", a, false, false, false)
    });
    t.insert("mustToRawJson", |_, a| {
        json_fn("mustToRawJson", a, false, false, true)
    });
    t.insert("toPrettyJson", |_, a| {
        json_fn("toPrettyJson", a, true, true, false)
    });
    t.insert("mustToPrettyJson", |_, a| {
        json_fn("mustToPrettyJson", a, true, true, true)
    });
    t.insert("fromJson", |_, a| {
        arity("fromJson", a, 1)?;
        Ok(
            match serde_json::from_str::<serde_json::Value>(&str_arg(&a[0])) {
                Ok(v @ serde_json::Value::Object(_)) => from_json_floats(&v),
                Ok(_) => error_map(
                    "json: cannot unmarshal into Go value of type map[string]interface {}",
                ),
                Err(e) => error_map(&e.to_string()),
            },
        )
    });
    t.insert("mustFromJson", |_, a| {
        arity("mustFromJson", a, 1)?;
        match serde_json::from_str::<serde_json::Value>(&str_arg(&a[0])) {
            Ok(v) => Ok(from_json_floats(&v)),
            Err(e) => err(e.to_string()),
        }
    });
    t.insert("fromJsonArray", |_, a| {
        arity("fromJsonArray", a, 1)?;
        Ok(
            match serde_json::from_str::<serde_json::Value>(&str_arg(&a[0])) {
                Ok(v @ serde_json::Value::Array(_)) => from_json_floats(&v),
                Ok(_) => list_value(vec![Value::from(
                    "json: cannot unmarshal into Go value of type []interface {}",
                )]),
                Err(e) => list_value(vec![Value::from(e.to_string())]),
            },
        )
    });
    t.insert("toToml", |_, a| {
        arity("toToml", a, 1)?;
        Ok(Value::from(to_toml(&a[0])))
    });
    t.insert("b64enc", |_, a| {
        arity("b64enc", a, 1)?;
        Ok(Value::from(STANDARD.encode(bytes_arg(&a[0]))))
    });
    t.insert("b64dec", |_, a| {
        arity("b64dec", a, 1)?;
        Ok(match STANDARD.decode(str_arg(&a[0])) {
            Ok(b) => string_from_bytes(b),
            Err(e) => Value::from(e.to_string()),
        })
    });
    t.insert("sha256sum", |_, a| {
        arity("sha256sum", a, 1)?;
        Ok(Value::from(hex::encode(sha2::Sha256::digest(bytes_arg(
            &a[0],
        )))))
    });
    t.insert("sha512sum", |_, a| {
        arity("sha512sum", a, 1)?;
        Ok(Value::from(hex::encode(sha2::Sha512::digest(bytes_arg(
            &a[0],
        )))))
    });
    t.insert("sha1sum", |_, a| {
        arity("sha1sum", a, 1)?;
        Ok(Value::from(hex::encode(sha1(&bytes_arg(&a[0])))))
    });
    t.insert("adler32sum", |_, a| {
        arity("adler32sum", a, 1)?;
        let (mut x, mut y) = (1u32, 0u32);
        for b in bytes_arg(&a[0]) {
            x = (x + b as u32) % 65521;
            y = (y + x) % 65521;
        }
        Ok(Value::from(((y << 16) | x).to_string()))
    });
    t.insert("b32enc", |_, a| {
        arity("b32enc", a, 1)?;
        Ok(Value::from(base32_encode(&bytes_arg(&a[0]))))
    });
    t.insert("b32dec", |_, a| {
        arity("b32dec", a, 1)?;
        Ok(match base32_decode(&str_arg(&a[0])) {
            Some(b) => string_from_bytes(b),
            None => Value::from("illegal base32 data"),
        })
    });
    t.insert("urlParse", |_, a| {
        arity("urlParse", a, 1)?;
        Ok(url_parse(&str_arg(&a[0])))
    });
    t.insert("getHostByName", |_, _| {
        err("getHostByName needs the network, which chart rendering does not use")
    });
    t.insert("urlJoin", |_, a| {
        arity("urlJoin", a, 1)?;
        let m = as_map(&a[0]).map(|m| m.snapshot()).unwrap_or_default();
        let get = |k: &str| m.get(k).map(super::strval).unwrap_or_default();
        let mut out = String::new();
        if !get("scheme").is_empty() {
            out.push_str(&get("scheme"));
            out.push_str("://");
        }
        if !get("userinfo").is_empty() {
            out.push_str(&get("userinfo"));
            out.push('@');
        }
        out.push_str(&get("host"));
        out.push_str(&get("path"));
        if !get("query").is_empty() {
            out.push('?');
            out.push_str(&get("query"));
        }
        if !get("fragment").is_empty() {
            out.push('#');
            out.push_str(&get("fragment"));
        }
        Ok(Value::from(out))
    });
}

/// The bytes a Go string argument holds (see [`crate::value::GoByteString`]).
fn bytes_arg(v: &Value) -> Vec<u8> {
    raw_bytes(v).unwrap_or_else(|| str_arg(v).into_bytes())
}

fn error_map(msg: &str) -> Value {
    let mut m = std::collections::BTreeMap::new();
    m.insert("Error".to_string(), Value::from(msg));
    map_value(m)
}

/// Sprig's `toJson` family: Go's `encoding/json` through [`fleet_yaml::gojson`] (maps are Go maps, so members
/// come sorted); `toRawJson` does not escape HTML, `toPrettyJson` indents. On an unencodable value (NaN, a cycle)
/// the `must` variants fail and the others print nothing, as Sprig does.
fn json_fn(name: &str, a: &[Value], escape_html: bool, pretty: bool, must: bool) -> FuncResult {
    arity(name, a, 1)?;
    let style = fleet_yaml::gojson::Style {
        escape_html,
        indent: pretty,
        sorted: true,
    };
    match to_json(&a[0]) {
        Ok(json) => Ok(Value::from(fleet_yaml::gojson::to_json_go_styled(
            &json, style,
        ))),
        Err(e) if must => Err(FuncError::msg(e)),
        Err(_) => Ok(Value::from("")),
    }
}

/// A simple TOML rendering of a map (Helm's `toToml`); nested maps become tables.
fn to_toml(v: &Value) -> String {
    fn scalar(v: &serde_json::Value) -> String {
        match v {
            serde_json::Value::String(s) => format!("{s:?}"),
            serde_json::Value::Array(a) => {
                format!("[{}]", a.iter().map(scalar).collect::<Vec<_>>().join(", "))
            }
            other => other.to_string(),
        }
    }
    // BurntSushi/toml indents a table's contents by two spaces per nesting level below the top.
    fn table(
        out: &mut String,
        prefix: &str,
        m: &serde_json::Map<String, serde_json::Value>,
        depth: usize,
    ) {
        let pad = "  ".repeat(depth);
        for (k, x) in m {
            if !x.is_object() {
                out.push_str(&format!("{pad}{k} = {}\n", scalar(x)));
            }
        }
        for (k, x) in m {
            if let serde_json::Value::Object(sub) = x {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.push_str(&format!("\n{pad}[{name}]\n"));
                table(out, &name, sub, depth + 1);
            }
        }
    }
    let mut out = String::new();
    if let Ok(serde_json::Value::Object(m)) = to_json(v) {
        table(&mut out, "", &m, 0);
    }
    out
}

/// SHA-1 (FIPS 180-4), for Sprig's `sha1sum`.
fn sha1(data: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0];
    let mut msg = data.to_vec();
    let bit_len = (data.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bit_len.to_be_bytes());
    for chunk in msg.chunks(64) {
        let mut w = [0u32; 80];
        for i in 0..16 {
            w[i] = u32::from_be_bytes([
                chunk[4 * i],
                chunk[4 * i + 1],
                chunk[4 * i + 2],
                chunk[4 * i + 3],
            ]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A827999),
                20..=39 => (b ^ c ^ d, 0x6ED9EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1BBCDC),
                _ => (b ^ c ^ d, 0xCA62C1D6),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0u8; 20];
    for (i, x) in h.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&x.to_be_bytes());
    }
    out
}

const B32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

fn base32_encode(data: &[u8]) -> String {
    let mut out = String::new();
    for chunk in data.chunks(5) {
        let mut buf = [0u8; 5];
        buf[..chunk.len()].copy_from_slice(chunk);
        let n = u64::from_be_bytes([0, 0, 0, buf[0], buf[1], buf[2], buf[3], buf[4]]);
        let chars = (chunk.len() * 8).div_ceil(5);
        for i in 0..8 {
            if i < chars {
                out.push(B32[((n >> (35 - 5 * i)) & 31) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn base32_decode(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    let mut bits = 0u64;
    let mut nbits = 0;
    let mut out = Vec::new();
    for c in s.bytes() {
        let v = B32.iter().position(|b| *b == c)? as u64;
        bits = (bits << 5) | v;
        nbits += 5;
        if nbits >= 8 {
            nbits -= 8;
            out.push((bits >> nbits) as u8);
            bits &= (1 << nbits) - 1;
        }
    }
    Some(out)
}

/// Sprig's `urlParse`: scheme, host, path, query, opaque, fragment, userinfo.
fn url_parse(s: &str) -> Value {
    let mut m = std::collections::BTreeMap::new();
    let (rest, fragment) = s.split_once('#').unwrap_or((s, ""));
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (scheme, rest) = match rest.split_once("://") {
        Some((sc, r))
            if !sc.is_empty()
                && sc
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) =>
        {
            (sc, r)
        }
        _ => ("", rest),
    };
    let (authority, path) = if scheme.is_empty() {
        ("", rest)
    } else {
        match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        }
    };
    let (userinfo, host) = authority.rsplit_once('@').unwrap_or(("", authority));
    for (k, v) in [
        ("scheme", scheme),
        ("host", host),
        (
            "hostname",
            host.rsplit_once(':').map(|(h, _)| h).unwrap_or(host),
        ),
        ("path", path),
        ("query", query),
        ("opaque", ""),
        ("fragment", fragment),
        ("userinfo", userinfo),
    ] {
        m.insert(k.to_string(), Value::from(v));
    }
    map_value(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_and_encodings() {
        assert_eq!(
            hex::encode(sha1(b"abc")),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(base32_encode(b"foobar"), "MZXW6YTBOI======");
        assert_eq!(base32_decode("MZXW6YTBOI======").unwrap(), b"foobar");
    }
}
